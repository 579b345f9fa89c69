package metrics

import (
	"context"

	"github.com/dtq-dev/dtq"
	"github.com/prometheus/client_golang/prometheus"
)

// CollectWorkers adds dtq_workers, dtq_workers_busy,
// dtq_workers_concurrency and dtq_queue_workers, read from client
// (Admin.Workers: the workers of its namespace whose heartbeat has not
// expired) at each scrape, within Config.ScrapeTimeout. When that read fails
// the scrape has none of them (nothing stale) and
// dtq_redis_errors_total{op="workers"} counts it. Call it once, with the
// Client that has m as its Observer.
func (m *Metrics) CollectWorkers(client *dtq.Admin) error {
	if client == nil {
		return &dtq.ValidationError{Field: "client", Problem: "must not be nil"}
	}
	return m.reg.Register(&workerCollector{m: m, c: client})
}

var (
	workersDesc = prometheus.NewDesc("dtq_workers",
		"Workers of the namespace with a live heartbeat (one per dtq.Worker, any process).",
		nil, nil)
	workersBusyDesc = prometheus.NewDesc("dtq_workers_busy",
		"Executions the live workers of the namespace reported running at their last heartbeat.",
		nil, nil)
	workersConcurrencyDesc = prometheus.NewDesc("dtq_workers_concurrency",
		"The concurrency of the live workers of the namespace, summed: executions they can run at once.",
		nil, nil)
	queueWorkersDesc = prometheus.NewDesc("dtq_queue_workers",
		"Live workers of the namespace that serve the queue; a queue no live worker serves has no series.",
		[]string{"queue"}, nil)
)

// workerCollector reads the worker registry at scrape time.
type workerCollector struct {
	m *Metrics
	c *dtq.Admin
}

func (w *workerCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- workersDesc
	ch <- workersBusyDesc
	ch <- workersConcurrencyDesc
	ch <- queueWorkersDesc
}

func (w *workerCollector) Collect(ch chan<- prometheus.Metric) {
	// A scrape has no context of its own: its time is bounded here.
	ctx, cancel := context.WithTimeout(context.Background(), w.m.timeout)
	defer cancel()
	workers, err := w.c.Workers(ctx)
	if err != nil {
		w.m.RedisError("workers", err)
		return
	}
	var busy, concurrency int
	perQueue := map[string]int{}
	var names []string
	for _, wi := range workers {
		busy += wi.Busy
		concurrency += wi.Concurrency
		// A worker counts once per queue, also when two of its queues
		// share the "other" label value.
		seen := map[string]bool{}
		for _, q := range wi.Queues {
			name := w.m.queues.get(q)
			if seen[name] {
				continue
			}
			seen[name] = true
			if _, ok := perQueue[name]; !ok {
				names = append(names, name)
			}
			perQueue[name]++
		}
	}
	ch <- prometheus.MustNewConstMetric(workersDesc, prometheus.GaugeValue, float64(len(workers)))
	ch <- prometheus.MustNewConstMetric(workersBusyDesc, prometheus.GaugeValue, float64(busy))
	ch <- prometheus.MustNewConstMetric(workersConcurrencyDesc, prometheus.GaugeValue, float64(concurrency))
	for _, name := range names {
		ch <- prometheus.MustNewConstMetric(queueWorkersDesc, prometheus.GaugeValue, float64(perQueue[name]), name)
	}
}
