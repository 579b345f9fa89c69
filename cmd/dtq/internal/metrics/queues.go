package metrics

import (
	"context"
	"strconv"

	"github.com/dtq-dev/dtq"
	"github.com/prometheus/client_golang/prometheus"
)

// CollectQueues adds dtq_queue_depth, dtq_queue_waiting,
// dtq_queue_suspended and dtq_queue_paused, read from client (Admin.Queues: every queue of its
// namespace) at each scrape, within Config.ScrapeTimeout. When that read
// fails the scrape has none of them (nothing stale) and
// dtq_redis_errors_total{op="queues"} counts it. Call it once, with the
// Client that has m as its Observer.
func (m *Metrics) CollectQueues(client *dtq.Admin) error {
	if client == nil {
		return &dtq.ValidationError{Field: "client", Problem: "must not be nil"}
	}
	return m.reg.Register(&queueCollector{m: m, c: client})
}

var (
	depthDesc = prometheus.NewDesc("dtq_queue_depth",
		"Tasks of a queue now, by state (queued, scheduled, running, dead: in the dead-letter stream) and, for queued tasks, priority (0-9); all workers of the namespace.",
		[]string{"queue", "state", "priority"}, nil)
	suspendedDesc = prometheus.NewDesc("dtq_queue_suspended",
		"Suspended tasks of a queue now (a durable sleep, a wait for a signal): part of dtq_queue_depth{state=\"scheduled\"}; all workers of the namespace.",
		[]string{"queue"}, nil)
	waitingDesc = prometheus.NewDesc("dtq_queue_waiting",
		"QUEUED tasks of a queue held back from its priority bands now, by what holds them: group (waiting for their group's turn), limit (a task type's or limit key's full concurrency limit), order_key (the earlier tasks of their order key); not in dtq_queue_depth{state=\"queued\"}; all workers of the namespace.",
		[]string{"queue", "reason"}, nil)
	pausedDesc = prometheus.NewDesc("dtq_queue_paused",
		"1 if the queue is paused (workers start none of its tasks), else 0.",
		[]string{"queue"}, nil)
)

// queueCollector reads the queues' stats at scrape time.
type queueCollector struct {
	m *Metrics
	c *dtq.Admin
}

func (q *queueCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- depthDesc
	ch <- waitingDesc
	ch <- suspendedDesc
	ch <- pausedDesc
}

func (q *queueCollector) Collect(ch chan<- prometheus.Metric) {
	// A scrape has no context of its own: its time is bounded here.
	ctx, cancel := context.WithTimeout(context.Background(), q.m.timeout)
	defer cancel()
	stats, err := q.c.Queues(ctx)
	if err != nil {
		q.m.RedisError("queues", err)
		return
	}
	// Queues beyond the bound share "other": sum them.
	type key struct{ queue, state, priority string }
	depth := map[key]int64{}
	var order []key
	add := func(k key, n int64) {
		if _, ok := depth[k]; !ok {
			order = append(order, k)
		}
		depth[k] += n
	}
	paused := map[string]bool{}
	suspended := map[string]int64{}
	waiting := map[string]*[3]int64{} // group, limit, order_key
	var names []string
	for _, s := range stats {
		name := q.m.queues.get(s.Name)
		if _, ok := paused[name]; !ok {
			names = append(names, name)
		}
		paused[name] = paused[name] || s.Paused
		suspended[name] += s.Suspended
		if waiting[name] == nil {
			waiting[name] = &[3]int64{}
		}
		w := waiting[name]
		w[0], w[1], w[2] = w[0]+s.GroupWaiting, w[1]+s.LimitWaiting, w[2]+s.OrderWaiting
		for p, n := range s.QueuedByPriority {
			add(key{name, "queued", strconv.Itoa(p)}, n)
		}
		add(key{name, "scheduled", ""}, s.Scheduled)
		add(key{name, "running", ""}, s.Running)
		add(key{name, "dead", ""}, s.Dead)
	}
	for _, k := range order {
		ch <- prometheus.MustNewConstMetric(depthDesc, prometheus.GaugeValue, float64(depth[k]), k.queue, k.state, k.priority)
	}
	for _, name := range names {
		ch <- prometheus.MustNewConstMetric(suspendedDesc, prometheus.GaugeValue, float64(suspended[name]), name)
		for i, reason := range []string{"group", "limit", "order_key"} {
			ch <- prometheus.MustNewConstMetric(waitingDesc, prometheus.GaugeValue, float64(waiting[name][i]), name, reason)
		}
	}
	for _, name := range names {
		v := 0.0
		if paused[name] {
			v = 1
		}
		ch <- prometheus.MustNewConstMetric(pausedDesc, prometheus.GaugeValue, v, name)
	}
}
