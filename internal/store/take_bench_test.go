package store

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"
)

// BenchmarkTakeFinishBatch: the Redis CPU per call and per task of take.lua
// and finish.lua by batch size — the fixed cost of a call is what a small
// worker (concurrency 10) pays per task. Run: go test -run '^$' -bench
// TakeFinishBatch -benchtime 10000x ./internal/store
func BenchmarkTakeFinishBatch(b *testing.B) {
	for _, batch := range []int{1, 5, 16} {
		b.Run(fmt.Sprint("batch=", batch), func(b *testing.B) {
			rc, q := benchQueue(b, b.N)
			ctx, n := context.Background(), b.N
			b.ResetTimer()
			cfg := StartConfig{Worker: "w", MaxCrashes: 3, Retention: time.Hour, LeaseTTL: time.Minute}
			fcfg := FinishConfig{Retention: time.Millisecond, IdemWindow: time.Hour}
			var takeUs, finUs int64
			calls := 0
			for done := 0; done < n; {
				_, u0 := evalStats(b, rc)
				es, sts, _, err := q.Take(ctx, cfg, min(batch, n-done), 0)
				if err != nil {
					b.Fatal(err)
				}
				_, u1 := evalStats(b, rc)
				var items []FinishItem
				for j, e := range es {
					if sts[j].Code != Began {
						b.Fatalf("not started: %v", sts[j])
					}
					items = append(items, FinishItem{TaskID: e.TaskID, Band: e.Band, EntryID: e.EntryID, Run: 1, Outcome: OutcomeOK,
						Text: "null", Attempt: 1, Started: sts[j].Started, Born: e.Spec})
				}
				if _, err := q.Finish(ctx, fcfg, "w", items); err != nil {
					b.Fatal(err)
				}
				_, u2 := evalStats(b, rc)
				takeUs += u1 - u0
				finUs += u2 - u1
				done += len(es)
				calls++
			}
			b.ReportMetric(float64(takeUs)/float64(calls), "take-µs/call")
			b.ReportMetric(float64(finUs)/float64(calls), "finish-µs/call")
			b.ReportMetric(float64(takeUs+finUs)/float64(n), "µs/task")
		})
	}
}

// BenchmarkFinishImplicit: the Redis CPU per call and per task of
// finish.lua for implicit first runs (a plain read's claims, as a worker of
// the common case finishes them) by batch size, with the shortest retention
// (a packed record written, listed, and pruned by a later call), with the
// default one (records kept), and with succeeded tasks not kept. Run: go test -run '^$' -bench FinishImplicit
// -benchtime 20000x ./internal/store
func BenchmarkFinishImplicit(b *testing.B) {
	for _, mode := range []struct {
		name      string
		retention time.Duration
		keep      bool
	}{{"retain=1ms", time.Millisecond, true}, {"retain=24h", 24 * time.Hour, true}, {"retain=none", time.Millisecond, false}} {
		for _, batch := range []int{1, 5, 30} {
			b.Run(fmt.Sprint(mode.name, "/batch=", batch), func(b *testing.B) {
				rc, q := benchQueue(b, b.N)
				ctx, n := context.Background(), b.N
				fcfg := FinishConfig{Retention: mode.retention, KeepSucceeded: mode.keep, IdemWindow: time.Hour}
				b.ResetTimer()
				var finUs int64
				calls := 0
				for done := 0; done < n; {
					es, st, _, err := q.ReadBandsState(ctx, "w", min(batch, n-done), 0, 0)
					if err != nil || len(es) == 0 {
						b.Fatalf("read: %d, %v", len(es), err)
					}
					sts := StartImplicit(es, st)
					items := make([]FinishItem, len(es))
					for j, e := range es {
						items[j] = FinishItem{TaskID: e.TaskID, Band: e.Band, EntryID: e.EntryID, Run: 1, Outcome: OutcomeOK,
							Text: "null", Attempt: 1, Started: sts[j].Started, Born: e.Spec}
					}
					_, u0 := evalStats(b, rc)
					if _, err := q.Finish(ctx, fcfg, "w", items); err != nil {
						b.Fatal(err)
					}
					_, u1 := evalStats(b, rc)
					finUs += u1 - u0
					done += len(es)
					calls++
				}
				b.ReportMetric(float64(finUs)/float64(calls), "finish-µs/call")
				b.ReportMetric(float64(finUs)/float64(n), "µs/task")
				if os.Getenv("DTQ_BENCH_CMDSTATS") != "" {
					s, _ := rc.Do(ctx, rc.B().Info().Section("commandstats").Build()).ToString()
					fmt.Fprintf(os.Stderr, "%s after %d calls:\n%s\n", b.Name(), calls, s)
				}
			})
		}
	}
}
