package metrics

import (
	"context"

	"github.com/dtq-dev/dtq"
	"github.com/prometheus/client_golang/prometheus"
)

// CollectLimits adds dtq_limit_max_running, dtq_limit_in_use,
// dtq_limit_rate and dtq_limit_waiting for the queues that have limits,
// read from client at each scrape within Config.ScrapeTimeout (a failed
// read: none of them, and dtq_redis_errors_total{op="limits"}).
func (m *Metrics) CollectLimits(client *dtq.Client) error {
	if client == nil {
		return &dtq.ValidationError{Field: "client", Problem: "must not be nil"}
	}
	return m.reg.Register(&limitCollector{m: m, c: client})
}

var (
	limitMaxDesc = prometheus.NewDesc("dtq_limit_max_running",
		"A queue's concurrency limit: at most this many of its tasks running at once across every worker (0: none).", []string{"queue"}, nil)
	limitInUseDesc = prometheus.NewDesc("dtq_limit_in_use",
		"Leases of a limited queue held now: one per task running, and one per worker waiting for a task of it.", []string{"queue"}, nil)
	limitRateDesc = prometheus.NewDesc("dtq_limit_rate",
		"A queue's rate limit, in task starts per second (0: none).", []string{"queue"}, nil)
	limitWaitingDesc = prometheus.NewDesc("dtq_limit_waiting",
		"Queued tasks of a limited queue: the work its limits hold back when they are full.", []string{"queue"}, nil)
)

// limitCollector reads the queues' limits at scrape time.
type limitCollector struct {
	m *Metrics
	c *dtq.Client
}

func (l *limitCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- limitMaxDesc
	ch <- limitInUseDesc
	ch <- limitRateDesc
	ch <- limitWaitingDesc
}

func (l *limitCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), l.m.timeout)
	defer cancel()
	limits, err := l.c.Limits(ctx)
	if err != nil {
		l.m.RedisError("limits", err)
		return
	}
	if len(limits) == 0 {
		return
	}
	stats, err := l.c.Queues(ctx) // one pipeline for every queue's count
	if err != nil {
		l.m.RedisError("limits", err)
		return
	}
	queued := make(map[string]int64, len(stats))
	for _, st := range stats {
		queued[st.Name] = st.Queued
	}
	type sums struct{ max, inUse, rate, waiting float64 }
	by := map[string]*sums{}
	var order []string
	for _, li := range limits {
		name := l.m.queues.get(li.Queue)
		s := by[name]
		if s == nil {
			s = &sums{}
			by[name] = s
			order = append(order, name)
		}
		s.max += float64(li.MaxRunning)
		s.inUse += float64(li.InUse)
		if li.Rate > 0 && li.Per > 0 {
			s.rate += float64(li.Rate) / li.Per.Seconds()
		}
		s.waiting += float64(queued[li.Queue])
	}
	for _, name := range order {
		s := by[name]
		ch <- prometheus.MustNewConstMetric(limitMaxDesc, prometheus.GaugeValue, s.max, name)
		ch <- prometheus.MustNewConstMetric(limitInUseDesc, prometheus.GaugeValue, s.inUse, name)
		ch <- prometheus.MustNewConstMetric(limitRateDesc, prometheus.GaugeValue, s.rate, name)
		ch <- prometheus.MustNewConstMetric(limitWaitingDesc, prometheus.GaugeValue, s.waiting, name)
	}
}
