package metrics

import (
	"github.com/dtq-dev/dtq"
	"github.com/prometheus/client_golang/prometheus"
)

// flowCounters are the counters of the engine's flow-control events:
// debounced submissions that joined a task, and what the rules of full
// limits did.
type flowCounters struct {
	debounceJoined *prometheus.CounterVec
	onFull         *prometheus.CounterVec
}

func newFlowCounters() flowCounters {
	return flowCounters{
		debounceJoined: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "dtq_debounce_joined_total",
			Help: "Debounced submissions of this process that joined the pending task of their key instead of creating one."}, []string{"queue"}),
		onFull: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "dtq_limit_on_full_total",
			Help: "Tasks the rules of full concurrency limits acted on at this process's starts: rule cancel_newest, tasks cancelled at their start; cancel_running, runs whose cancellation was requested; replace_waiting, waiting tasks cancelled."},
			[]string{"queue", "rule"}),
	}
}

func (f flowCounters) collectors() []prometheus.Collector {
	return []prometheus.Collector{f.debounceJoined, f.onFull}
}

var (
	_ dtq.DebounceObserver = (*Metrics)(nil)
	_ dtq.OnFullObserver   = (*Metrics)(nil)
)

// DebounceJoined implements dtq.DebounceObserver.
func (m *Metrics) DebounceJoined(t dtq.TaskRef) {
	m.flow.debounceJoined.WithLabelValues(m.queues.get(t.Queue)).Inc()
}

// LimitOnFull implements dtq.OnFullObserver. The rule label is one of the
// three rules that act (a limit that waits reports nothing).
func (m *Metrics) LimitOnFull(queue string, rule dtq.OnFull, n int) {
	switch rule {
	case dtq.CancelRunning, dtq.CancelNewest, dtq.ReplaceWaiting:
		m.flow.onFull.WithLabelValues(m.queues.get(queue), string(rule)).Add(float64(n))
	}
}
