package metrics_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/dtq-dev/dtq/cmd/dtq/internal/metrics"
	"github.com/dtq-dev/dtq/outbox"
)

// statsSource answers Stats with fixed values (the relay's own tests cover
// where they come from).
type statsSource struct {
	s   outbox.Stats
	err error
}

func (f *statsSource) Stats(context.Context) (outbox.Stats, error) { return f.s, f.err }

// The outbox's stats show at each scrape; when the database cannot be read,
// only the relay's own counters do, and the error is counted.
func TestOutboxMetrics(t *testing.T) {
	t.Parallel()
	m, err := metrics.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	src := &statsSource{s: outbox.Stats{Active: true, Waiting: 7, Failed: 1, Lag: 1500 * time.Millisecond, Relayed: 42, Errors: 3}}
	if err := m.CollectOutbox(src); err != nil {
		t.Fatal(err)
	}
	want := map[string]float64{
		"dtq_outbox_rows_waiting": 7, "dtq_outbox_rows_failed": 1, "dtq_outbox_lag_seconds": 1.5,
		"dtq_outbox_relay_active": 1, "dtq_outbox_rows_relayed_total": 42, "dtq_outbox_relay_errors_total": 3,
	}
	got := gatherPlain(t, m)
	for name, v := range want {
		if got[name] != v {
			t.Errorf("%s = %v, want %v", name, got[name], v)
		}
	}
	src.err = errors.New("database down")
	got = gatherPlain(t, m)
	if _, ok := got["dtq_outbox_rows_waiting"]; ok {
		t.Error("dtq_outbox_rows_waiting scraped from a database that could not be read")
	}
	if got["dtq_outbox_rows_relayed_total"] != 42 {
		t.Errorf("the relay's counter went missing with the database")
	}
	if err := m.CollectOutbox(nil); err == nil {
		t.Error("CollectOutbox(nil) accepted")
	}
}

// gatherPlain returns the value of every series without labels.
func gatherPlain(t *testing.T, m *metrics.Metrics) map[string]float64 {
	t.Helper()
	families, err := m.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	for _, f := range families {
		for _, s := range f.GetMetric() {
			if len(s.GetLabel()) > 0 {
				continue
			}
			switch {
			case s.Gauge != nil:
				out[f.GetName()] = s.GetGauge().GetValue()
			case s.Counter != nil:
				out[f.GetName()] = s.GetCounter().GetValue()
			}
		}
	}
	return out
}
