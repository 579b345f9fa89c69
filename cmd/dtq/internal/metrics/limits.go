package metrics

import (
	"context"
	"time"

	"github.com/dtq-dev/dtq"
	"github.com/prometheus/client_golang/prometheus"
)

// CollectLimits adds dtq_limit_max_running, dtq_limit_in_use,
// dtq_limit_rate and dtq_limit_waiting for the queues that have limits,
// read from client at each scrape within Config.ScrapeTimeout (a failed
// read: none of them, and dtq_redis_errors_total{op="limits"}).
func (m *Metrics) CollectLimits(client *dtq.Admin) error {
	if client == nil {
		return &dtq.ValidationError{Field: "client", Problem: "must not be nil"}
	}
	return m.reg.Register(&limitCollector{m: m, c: client})
}

var (
	limitLabels  = []string{"queue", "scope"}
	limitMaxDesc = prometheus.NewDesc("dtq_limit_max_running",
		"A concurrency limit: at most this many tasks of its scope (scope \"queue\": the queue's; \"task_type:<type>\", \"limit_key:<key>\" or \"limit_key:*\": of each key) running at once across every worker (0: none).",
		limitLabels, nil)
	limitInUseDesc = prometheus.NewDesc("dtq_limit_in_use",
		"Leases of a limit held now: one per task running under it (a queue's: and one per worker waiting for a task of it).", limitLabels, nil)
	limitRateDesc = prometheus.NewDesc("dtq_limit_rate",
		"A rate limit, in task starts per second (0: none).", limitLabels, nil)
	limitWaitingDesc = prometheus.NewDesc("dtq_limit_waiting",
		"Queued tasks a limit holds back: a queue's, its queued tasks (what it holds back when full); a task type's or limit key's, those its full concurrency limit keeps waiting.",
		limitLabels, nil)
)

// limitCollector reads the queues' limits at scrape time.
type limitCollector struct {
	m *Metrics
	c *dtq.Admin
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
	type key struct{ queue, scope string }
	type sums struct{ max, inUse, rate, waiting float64 }
	by := map[key]*sums{}
	var order []key
	add := func(k key, max, inUse, rate int64, per time.Duration, waiting int64) {
		s := by[k]
		if s == nil {
			s = &sums{}
			by[k] = s
			order = append(order, k)
		}
		s.max += float64(max)
		s.inUse += float64(inUse)
		if rate > 0 && per > 0 {
			s.rate += float64(rate) / per.Seconds()
		}
		s.waiting += float64(waiting)
	}
	for _, li := range limits {
		name := l.m.queues.get(li.Queue)
		if li.MaxRunning > 0 || li.Rate > 0 {
			add(key{name, "queue"}, li.MaxRunning, li.InUse, li.Rate, li.Per, queued[li.Queue])
		}
		for _, sc := range li.Scopes {
			scope := "task_type:" + sc.TaskType
			if sc.TaskType == "" {
				scope = "limit_key:" + sc.LimitKey
			}
			add(key{name, scope}, sc.MaxRunning, sc.InUse, sc.Rate, sc.Per, sc.Waiting)
		}
	}
	for _, k := range order {
		s := by[k]
		ch <- prometheus.MustNewConstMetric(limitMaxDesc, prometheus.GaugeValue, s.max, k.queue, k.scope)
		ch <- prometheus.MustNewConstMetric(limitInUseDesc, prometheus.GaugeValue, s.inUse, k.queue, k.scope)
		ch <- prometheus.MustNewConstMetric(limitRateDesc, prometheus.GaugeValue, s.rate, k.queue, k.scope)
		ch <- prometheus.MustNewConstMetric(limitWaitingDesc, prometheus.GaugeValue, s.waiting, k.queue, k.scope)
	}
}
