package main

import (
	"bytes"
	"math"
	"strings"
	"testing"
	"time"
)

// The harness runs every scenario at a tenth of its size on its own
// redis-server and on the embedded backend, and the report has a row for
// each. What groups exist for shows in the order of the starts, not in
// timings: with groups every light task starts before the heavy tenant's
// 100th of 2,000 and the weight-3 tenant starts at least twice as often
// as the other while both have work; the FIFO baseline starts no light
// task before the heavy tenant's 1,000th.
func TestHarness(t *testing.T) {
	for _, backend := range []string{"redis", "embedded"} {
		t.Run(backend, func(t *testing.T) {
			o := &options{backend: backend, scale: 0.1, concurrency: 20, handler: 5 * time.Millisecond,
				timeout: time.Minute, progress: t.Logf}
			rows, err := harness(t.Context(), o)
			if err != nil {
				t.Fatal(err)
			}
			var out bytes.Buffer
			writeReport(&out, o, rows)
			t.Log("\n" + out.String())
			want := scenarios(o.scale)
			if len(rows) != len(want) {
				t.Fatalf("%d rows, want %d", len(rows), len(want))
			}
			for i, r := range rows {
				if r.sc.name != want[i].name || !strings.Contains(out.String(), "| "+want[i].name+" |") {
					t.Errorf("row %d is %q, want %q in the table", i, r.sc.name, want[i].name)
				}
				for _, res := range []*result{r.g, r.f} {
					if res.periodStarts == 0 || res.watchedTasks != watchedTasks(r.sc) || res.meanWait <= 0 {
						t.Errorf("%s: %+v: want a contended period and every watched task's wait", r.sc.name, res)
					}
				}
			}

			heavyLight := rows[0]
			if n := startsBeforeLast(heavyLight.groups, "heavy", "light"); n >= 100 {
				t.Errorf("groups: the last light task started after %d of the heavy tenant's, want fewer than 100", n)
			}
			if n := startsBeforeFirst(heavyLight.fifo, "heavy", "light"); n < 1000 {
				t.Errorf("FIFO: a light task started after only %d of the heavy tenant's, want 1,000 or more", n)
			}
			w3, w1 := startsWithin(rows[4].groups, 400, "w3"), startsWithin(rows[4].groups, 400, "w1")
			if w3 < 2*w1 {
				t.Errorf("groups, weights 3:1: of the first 400 starts %d are w3's and %d w1's, want at least twice as many", w3, w1)
			}
		})
	}
}

func watchedTasks(sc *scenario) int {
	n := 0
	for i := range sc.tenants {
		if sc.tenants[i].watched {
			n += sc.tenants[i].tasks(sc.arrivals)
		}
	}
	return n
}

// startsBeforeLast counts a's starts before the last start of a tenant
// whose name begins with b.
func startsBeforeLast(d *runData, a, b string) int {
	n, before := 0, 0
	for _, s := range d.starts {
		switch name := d.sc.tenants[s.tenant].name; {
		case name == a:
			n++
		case strings.HasPrefix(name, b):
			before = n
		}
	}
	return before
}

// startsBeforeFirst counts a's starts before the first start of a tenant
// whose name begins with b.
func startsBeforeFirst(d *runData, a, b string) int {
	n := 0
	for _, s := range d.starts {
		switch name := d.sc.tenants[s.tenant].name; {
		case name == a:
			n++
		case strings.HasPrefix(name, b):
			return n
		}
	}
	return n
}

// startsWithin counts tenant's starts among the run's first k.
func startsWithin(d *runData, k int, tenant string) int {
	n := 0
	for _, s := range d.starts[:min(k, len(d.starts))] {
		if d.sc.tenants[s.tenant].name == tenant {
			n++
		}
	}
	return n
}

func TestWaterFill(t *testing.T) {
	inf := math.Inf(1)
	for _, c := range []struct {
		total          float64
		demand, weight []float64
		want           []float64
	}{
		{100, []float64{inf, inf}, []float64{3, 1}, []float64{75, 25}},
		{100, []float64{inf, 10, 0}, []float64{1, 1, 1}, []float64{90, 10, 0}},
		{90, []float64{inf, 5, 20, inf}, []float64{1, 1, 1, 1}, []float64{32.5, 5, 20, 32.5}},
		{12, []float64{2, 2, 2}, []float64{1, 1, 1}, []float64{2, 2, 2}},
	} {
		got := waterFill(c.total, c.demand, c.weight)
		for i := range got {
			if math.Abs(got[i]-c.want[i]) > 1e-9 {
				t.Errorf("waterFill(%v, %v, %v) = %v, want %v", c.total, c.demand, c.weight, got, c.want)
				break
			}
		}
	}
}
