package main

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

// A small run measures both parts and writes both tables.
func TestSmallRun(t *testing.T) {
	b, err := startBackends()
	if err != nil {
		t.Fatal(err)
	}
	defer b.close()
	o := options{backlog: 300, rate: 200, duration: 500 * time.Millisecond}
	thr, err := b.throughput(t.Context(), o.backlog, 100)
	if err != nil {
		t.Fatal(err)
	}
	lag, err := b.lag(t.Context(), o.rate, o.duration)
	if err != nil {
		t.Fatal(err)
	}
	if thr.rows != 300 || lag.rows != 100 || len(lag.lags) != 100 {
		t.Fatalf("throughput %+v, lag of %d rows with %d lags; want 300 rows, 100 and 100", thr, lag.rows, len(lag.lags))
	}
	var out bytes.Buffer
	report(&out, &o, []throughputRow{thr}, lag)
	for _, want := range []string{"| batch size | rows | seconds | rows/s |", "| p50 | p90 | p99 | max |"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("report lacks %q:\n%s", want, out.String())
		}
	}
}
