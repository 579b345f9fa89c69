package store

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/dtq-dev/dtq/internal/redistest"
	"github.com/redis/rueidis"
)

// evalStats reads the server's EVALSHA calls and microseconds so far.
func evalStats(b *testing.B, c rueidis.Client) (calls, usec int64) {
	s, err := c.Do(context.Background(), c.B().Info().Section("commandstats").Build()).ToString()
	if err != nil {
		b.Fatal(err)
	}
	for _, l := range strings.Split(s, "\n") {
		if rest, ok := strings.CutPrefix(l, "cmdstat_evalsha:"); ok {
			fmt.Sscanf(rest, "calls=%d,usec=%d", &calls, &usec)
		}
	}
	return calls, usec
}

// benchQueue starts a server and fills queue "q" of namespace "bench" with
// n born tasks of band 5 (~80-byte payloads), its groups created.
func benchQueue(b *testing.B, n int) (rueidis.Client, *Queue) {
	return benchQueueOf(b, n, nil)
}

// benchQueueOf is benchQueue with each task i's item changed by edit
// first (nil: none).
func benchQueueOf(b *testing.B, n int, edit func(i int, it *EnqueueItem)) (rueidis.Client, *Queue) {
	srv := redistest.Start(b, nil)
	rc := redistest.Client(b, srv)
	ctx := context.Background()
	q := New(rc, "bench").Queue("q")
	if _, err := q.Read(ctx, ReadRequest{Consumer: "probe", EnsureGroups: true}); err != nil {
		b.Fatal(err)
	}
	payload := []byte(`{"n":12345,"pad":"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"}`)
	for i := 0; i < n; i += 1000 {
		items := make([]EnqueueItem, min(1000, n-i))
		for j := range items {
			items[j] = EnqueueItem{Type: "noop", Payload: payload, Priority: 5, MaxAttempts: 10, Timeout: time.Minute}
			if edit != nil {
				edit(i+j, &items[j])
			}
		}
		if _, err := q.Enqueue(ctx, EnqueueConfig{}, items); err != nil {
			b.Fatal(err)
		}
	}
	return rc, q
}

// BenchmarkStartFinishScripts: the Redis CPU per task of start.lua and of
// finish.lua alone (their inner commands included), in batches of 50 born
// tasks — where a drain's Redis time goes (issue 10). Run: go test -run
// '^$' -bench StartFinishScripts -benchtime 20000x ./internal/store
func BenchmarkStartFinishScripts(b *testing.B) {
	rc, q := benchQueue(b, b.N)
	ctx, n := context.Background(), b.N
	b.ResetTimer()
	cfg := StartConfig{Worker: "w", MaxCrashes: 3, Retention: time.Hour, LeaseTTL: time.Minute}
	_, u0 := evalStats(b, rc)
	var all []Entry
	var sts []Started
	for len(all) < n {
		es, _, err := q.ReadBands(ctx, "w", 50, 0, 0)
		if err != nil {
			b.Fatal(err)
		}
		if len(es) == 0 {
			b.Fatalf("%d of %d tasks read", len(all), n)
		}
		st, err := q.Start(ctx, cfg, es)
		if err != nil {
			b.Fatal(err)
		}
		all, sts = append(all, es...), append(sts, st...)
	}
	_, u1 := evalStats(b, rc)
	fcfg := FinishConfig{Retention: time.Millisecond, IdemWindow: time.Hour}
	for i := 0; i < n; i += 50 {
		var items []FinishItem
		for j := i; j < min(i+50, n); j++ {
			e := all[j]
			items = append(items, FinishItem{TaskID: e.TaskID, Band: e.Band, EntryID: e.EntryID, Run: 1, Outcome: OutcomeOK,
				Text: "null", Attempt: 1, Started: sts[j].Started, Born: e.Spec})
		}
		if _, err := q.Finish(ctx, fcfg, "w", items); err != nil {
			b.Fatal(err)
		}
	}
	_, u2 := evalStats(b, rc)
	b.ReportMetric(float64(u1-u0)/float64(n), "start-µs/task")
	b.ReportMetric(float64(u2-u1)/float64(n), "finish-µs/task")
}

// BenchmarkStartFinishKinds: BenchmarkStartFinishScripts for tasks born as
// entries ("born"), tasks with a hash ("hash": a limit key, no limit) and
// tasks of 1,000 order keys ("ordered": each finish hands its key to the
// next waiter, the hand-over's cost in finish-µs) — the Redis CPU of the
// hash path and of ordering, per task. Run: go test -run '^$' -bench
// StartFinishKinds -benchtime 20000x ./internal/store
func BenchmarkStartFinishKinds(b *testing.B) {
	for _, kind := range []string{"born", "hash", "ordered"} {
		b.Run(kind, func(b *testing.B) {
			ctx, n := context.Background(), b.N
			rc, q := benchQueueOf(b, n, func(i int, it *EnqueueItem) {
				switch kind {
				case "hash":
					it.LimitKey = fmt.Sprintf("k%d", i%1000)
				case "ordered":
					it.OrderKey = fmt.Sprintf("k%d", i%1000)
				}
			})
			b.ResetTimer()
			cfg := StartConfig{Worker: "w", MaxCrashes: 3, Retention: time.Hour, LeaseTTL: time.Minute}
			fcfg := FinishConfig{Retention: time.Hour, IdemWindow: time.Hour, KeepSucceeded: true}
			var startUs, finishUs int64
			for done := 0; done < n; {
				es, _, err := q.ReadBands(ctx, "w", 50, 0, 0)
				if err != nil {
					b.Fatal(err)
				}
				if len(es) == 0 {
					b.Fatalf("%d of %d tasks done", done, n)
				}
				_, u0 := evalStats(b, rc)
				st, err := q.Start(ctx, cfg, es)
				if err != nil {
					b.Fatal(err)
				}
				_, u1 := evalStats(b, rc)
				items := make([]FinishItem, len(es))
				for j, e := range es {
					items[j] = FinishItem{TaskID: e.TaskID, Band: e.Band, EntryID: e.EntryID, Run: st[j].Run, Outcome: OutcomeOK,
						Text: "null", Attempt: st[j].Attempt, Started: st[j].Started}
					items[j].Born = e.BornSpec()
				}
				if _, err := q.Finish(ctx, fcfg, "w", items); err != nil {
					b.Fatal(err)
				}
				_, u2 := evalStats(b, rc)
				startUs, finishUs, done = startUs+u1-u0, finishUs+u2-u1, done+len(es)
			}
			b.ReportMetric(float64(startUs)/float64(n), "start-µs/task")
			b.ReportMetric(float64(finishUs)/float64(n), "finish-µs/task")
		})
	}
}
