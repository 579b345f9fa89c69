package metrics

import (
	"context"

	"github.com/dtq-dev/dtq"
	"github.com/dtq-dev/dtq/outbox"
	"github.com/prometheus/client_golang/prometheus"
)

// OutboxSource is what CollectOutbox reads at each scrape: an
// *outbox.Relay.
type OutboxSource interface {
	Stats(ctx context.Context) (outbox.Stats, error)
}

// CollectOutbox adds the outbox's metrics, read from relay at each scrape
// within Config.ScrapeTimeout: dtq_outbox_rows_waiting,
// dtq_outbox_rows_failed and dtq_outbox_lag_seconds (from the database:
// the same in every process relaying one outbox), dtq_outbox_relay_active,
// dtq_outbox_rows_relayed_total and dtq_outbox_relay_errors_total (this
// process's relay). When the database cannot be read the scrape has only
// this process's counters and dtq_redis_errors_total{op="outbox"} counts
// it. Call it once, in a process that runs a relay.
func (m *Metrics) CollectOutbox(relay OutboxSource) error {
	if relay == nil {
		return &dtq.ValidationError{Field: "relay", Problem: "must not be nil"}
	}
	return m.reg.Register(&outboxCollector{m: m, relay: relay})
}

var (
	outboxWaitingDesc = prometheus.NewDesc("dtq_outbox_rows_waiting",
		"Committed outbox rows not yet relayed to dtq (failed rows not counted).", nil, nil)
	outboxFailedDesc = prometheus.NewDesc("dtq_outbox_rows_failed",
		"Outbox rows dtq refused for good (marked failed, kept in the table, not retried).", nil, nil)
	outboxLagDesc = prometheus.NewDesc("dtq_outbox_lag_seconds",
		"Age of the oldest waiting outbox row, since its insert; 0 when none waits.", nil, nil)
	outboxActiveDesc = prometheus.NewDesc("dtq_outbox_relay_active",
		"1 when this process's relay is the active one (holds the outbox's lock), 0 when it is a standby.", nil, nil)
	outboxRelayedDesc = prometheus.NewDesc("dtq_outbox_rows_relayed_total",
		"Outbox rows this process's relay submitted to dtq and deleted.", nil, nil)
	outboxErrorsDesc = prometheus.NewDesc("dtq_outbox_relay_errors_total",
		"Failed attempts of this process's relay (PostgreSQL or Redis unreachable), each retried.", nil, nil)
)

// outboxCollector reads the outbox at scrape time.
type outboxCollector struct {
	m     *Metrics
	relay OutboxSource
}

func (o *outboxCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- outboxWaitingDesc
	ch <- outboxFailedDesc
	ch <- outboxLagDesc
	ch <- outboxActiveDesc
	ch <- outboxRelayedDesc
	ch <- outboxErrorsDesc
}

func (o *outboxCollector) Collect(ch chan<- prometheus.Metric) {
	// A scrape has no context of its own: its time is bounded here.
	ctx, cancel := context.WithTimeout(context.Background(), o.m.timeout)
	defer cancel()
	s, err := o.relay.Stats(ctx)
	active := 0.0
	if s.Active {
		active = 1
	}
	ch <- prometheus.MustNewConstMetric(outboxActiveDesc, prometheus.GaugeValue, active)
	ch <- prometheus.MustNewConstMetric(outboxRelayedDesc, prometheus.CounterValue, float64(s.Relayed))
	ch <- prometheus.MustNewConstMetric(outboxErrorsDesc, prometheus.CounterValue, float64(s.Errors))
	if err != nil {
		o.m.RedisError("outbox", err)
		return
	}
	ch <- prometheus.MustNewConstMetric(outboxWaitingDesc, prometheus.GaugeValue, float64(s.Waiting))
	ch <- prometheus.MustNewConstMetric(outboxFailedDesc, prometheus.GaugeValue, float64(s.Failed))
	ch <- prometheus.MustNewConstMetric(outboxLagDesc, prometheus.GaugeValue, s.Lag.Seconds())
}
