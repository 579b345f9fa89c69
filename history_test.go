package dtq_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dtq-dev/dtq"
	"github.com/dtq-dev/dtq/internal/redistest"
)

// historySum adds up the buckets of h.
func historySum(h *dtq.History) (s dtq.HistoryBucket) {
	for _, b := range h.Buckets {
		s.Submitted += b.Submitted
		s.Succeeded += b.Succeeded
		s.Retried += b.Retried
		s.Dead += b.Dead
		s.Cancelled += b.Cancelled
		s.Lost += b.Lost
		s.Run.Count += b.Run.Count
		s.Pickup.Count += b.Pickup.Count
	}
	return s
}

// The stored history counts, per queue and task type, the submissions, the
// executions' outcomes and the tasks that ended without one, with their run
// times and pickups: what a worker and a client of one process did, once
// added to Redis (at the worker's stop).
func TestHistoryCounts(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		ctx := t.Context()
		opts := &dtq.EnqueueOpts{Queue: "hist"}
		w := e.worker(fast(dtq.WorkerConfig{Queues: []string{"hist"}}), map[string]dtq.HandlerFunc{
			"ok": func(context.Context, *dtq.Task) (any, error) { return nil, nil },
			"flaky": func(_ context.Context, task *dtq.Task) (any, error) {
				if task.Attempt == 1 {
					return nil, errors.New("once")
				}
				return nil, nil
			},
			"bad": func(context.Context, *dtq.Task) (any, error) { return nil, errors.New("never") },
		})
		var ids []string
		for range 3 {
			ids = append(ids, e.enqueue("ok", nil, opts).ID)
		}
		ids = append(ids, e.enqueue("flaky", nil, opts).ID)
		bad := e.enqueue("bad", nil, &dtq.EnqueueOpts{Queue: "hist", MaxAttempts: 1}).ID
		later := e.enqueue("ok", nil, &dtq.EnqueueOpts{Queue: "hist", Delay: time.Hour}).ID
		if _, err := e.c.Cancel(ctx, later); err != nil {
			t.Fatal(err)
		}
		for _, id := range ids {
			e.waitStatus(id, dtq.StatusSucceeded, 10*time.Second)
		}
		e.waitStatus(bad, dtq.StatusDead, 10*time.Second)
		stop, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		if err := w.Stop(stop); err != nil {
			t.Fatal(err)
		}

		h, err := e.a.History(ctx, dtq.HistoryQuery{Queue: "hist", Since: time.Now().Add(-5 * time.Minute)})
		if err != nil {
			t.Fatal(err)
		}
		if h.Step != time.Minute || len(h.Buckets) < 5 || fmt.Sprint(h.Types) != "[bad flaky ok]" {
			t.Fatalf("history: step %v, %d buckets, types %v", h.Step, len(h.Buckets), h.Types)
		}
		got := historySum(h)
		want := dtq.HistoryBucket{Submitted: 6, Succeeded: 4, Retried: 1, Dead: 1, Cancelled: 1}
		want.Run.Count, want.Pickup.Count = 6, 6 // executions: 3 ok, 2 flaky, 1 bad
		if got != want {
			t.Errorf("summed:\n got %+v\nwant %+v", got, want)
		}
		h, err = e.a.History(ctx, dtq.HistoryQuery{Queue: "hist", Type: "flaky", Since: time.Now().Add(-5 * time.Minute)})
		if err != nil {
			t.Fatal(err)
		}
		want = dtq.HistoryBucket{Submitted: 1, Succeeded: 1, Retried: 1}
		want.Run.Count, want.Pickup.Count = 2, 2
		if got := historySum(h); got != want {
			t.Errorf("of type flaky:\n got %+v\nwant %+v", got, want)
		}
		for _, b := range h.Buckets {
			if b.Run.Count > 0 && (b.Run.P50 <= 0 || b.Run.P50 > b.Run.P99) {
				t.Errorf("run percentiles of %v: %+v", b.At, b.Run)
			}
		}
		// Every queue of the namespace: this one's counts are among them.
		all, err := e.a.History(ctx, dtq.HistoryQuery{})
		if err != nil {
			t.Fatal(err)
		}
		if s := historySum(all); s.Submitted < 6 || s.Succeeded < 4 {
			t.Errorf("every queue: %+v", s)
		}
		// The hour buckets have the same counts.
		hours, err := e.a.History(ctx, dtq.HistoryQuery{Queue: "hist", Step: time.Hour, Since: time.Now().Add(-2 * time.Hour)})
		if err != nil {
			t.Fatal(err)
		}
		if s := historySum(hours); s.Submitted != 6 || s.Succeeded != 4 || s.Run.Count != 6 {
			t.Errorf("hours: %+v", s)
		}
		// A deleted queue's history goes with it.
		if _, err := e.a.DeleteQueue(ctx, "hist", &dtq.DeleteQueueOpts{Force: true}); err != nil {
			t.Fatal(err)
		}
		if h, err := e.a.History(ctx, dtq.HistoryQuery{Queue: "hist", Since: time.Now().Add(-5 * time.Minute)}); err != nil || historySum(h).Submitted != 0 {
			t.Errorf("after the queue's deletion: %v, %v", h, err)
		}
	})
}

// A query the history cannot answer is a ValidationError that says why.
func TestHistoryQueryValidation(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		now := time.Now()
		for _, q := range []dtq.HistoryQuery{
			{Step: 2 * time.Minute},
			{Step: time.Minute, Since: now.Add(-48 * time.Hour)},
			{Step: time.Hour, Since: now.Add(-40 * 24 * time.Hour)},
			{Since: now, Until: now.Add(-time.Hour)},
			{Queue: "a b"},
			{Type: "no type"},
		} {
			_, err := e.a.History(t.Context(), q)
			var v *dtq.ValidationError
			if !errors.As(err, &v) {
				t.Errorf("%+v: %v, want a ValidationError", q, err)
			}
		}
	})
}

// A process counts at most 50 task types of a queue apart in a minute —
// across its flushes — and the rest as "(other)"; nothing is lost, and a
// type counted apart stays apart for the minute.
func TestHistoryBoundsTypes(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		ctx := t.Context()
		opts := &dtq.EnqueueOpts{Queue: "many", Delay: time.Hour}
		for i := range 40 {
			e.enqueue(fmt.Sprintf("t%02d", i), nil, opts)
		}
		dtq.FlushHistory(ctx, e.c)
		for i := 40; i < 60; i++ {
			e.enqueue(fmt.Sprintf("t%02d", i), nil, opts)
		}
		e.enqueue("t00", nil, opts)
		dtq.FlushHistory(ctx, e.c)
		q := dtq.HistoryQuery{Queue: "many", Since: time.Now().Add(-3 * time.Minute)}
		h, err := e.a.History(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		if s := historySum(h); s.Submitted != 61 {
			t.Errorf("submitted: %d, want 61", s.Submitted)
		}
		// (a minute's turn during the test can let a few more apart)
		if n := len(h.Types); n < 51 || n > 60 || h.Types[0] != "(other)" {
			t.Errorf("types: %d %v, want 50 apart and (other)", n, h.Types)
		}
		q.Type = "t00"
		if h, err := e.a.History(ctx, q); err != nil || historySum(h).Submitted != 2 {
			t.Errorf("t00, counted apart before the flush: %v, %v, want its 2 submissions", h, err)
		}
	})
}

// Under a 30-second burst at full speed the history's memory in Redis
// stays within its documented bound — at most historyFieldsPerType fields
// per task type and bucket, a few buckets for a few seconds — however many
// tasks ran, and every bucket expires.
func TestHistoryMemoryBound(t *testing.T) {
	t.Parallel()
	s := redistest.Shared(t) // (MEMORY USAGE is Redis's: no embedded run)
	e := newEnv(t, &redistest.Backend{Name: "redis", Client: redistest.Client(t, s), Namespace: redistest.Namespace(t), Server: s}, nil)
	{
		ctx := t.Context()
		types := []string{"a", "b", "c"}
		handlers := map[string]dtq.HandlerFunc{}
		for _, typ := range types {
			handlers[typ] = func(context.Context, *dtq.Task) (any, error) { return nil, nil }
		}
		w := e.worker(&dtq.WorkerConfig{Queues: []string{"burst"}, Concurrency: 50}, handlers)
		var n atomic.Int64
		var wg sync.WaitGroup
		end := time.Now().Add(30 * time.Second)
		for g := range 20 {
			wg.Go(func() {
				for i := 0; time.Now().Before(end); i++ {
					if _, err := e.c.Enqueue(ctx, types[(g+i)%len(types)], nil, &dtq.EnqueueOpts{Queue: "burst"}); err != nil {
						t.Error(err)
						return
					}
					n.Add(1)
				}
			})
		}
		wg.Wait()
		eventually(t, time.Minute, "the burst drained", func() bool {
			st, err := e.a.Stats(ctx, "burst")
			return err == nil && st.Queued == 0 && st.Running == 0
		})
		stop, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		if err := w.Stop(stop); err != nil {
			t.Fatal(err)
		}
		c := e.Client
		ks, err := c.Do(ctx, c.B().Keys().Pattern(e.Namespace+":{burst}:hist:*").Build()).AsStrSlice()
		if err != nil {
			t.Fatal(err)
		}
		var bytes int64
		for _, k := range ks {
			m, err := c.Do(ctx, c.B().MemoryUsage().Key(k).Build()).AsInt64()
			if err != nil {
				t.Fatal(err)
			}
			bytes += m
			ttl, err := c.Do(ctx, c.B().Ttl().Key(k).Build()).AsInt64()
			if err != nil || ttl <= 0 || ttl > int64((30*24+2)*time.Hour/time.Second) {
				t.Errorf("%s: TTL %d s (%v), want one within 30 days", k, ttl, err)
			}
		}
		// 30 s spans at most 2 minutes and 2 hours: 4 buckets.
		bound := int64(4 * len(types) * dtq.HistoryBytesPerTypeBucket)
		t.Logf("%d tasks submitted; history: %d keys, %d bytes (bound %d)", n.Load(), len(ks), bytes, bound)
		if len(ks) > 4 || bytes > bound {
			t.Errorf("history: %d keys, %d bytes, want at most 4 keys and %d bytes", len(ks), bytes, bound)
		}
		h, err := e.a.History(ctx, dtq.HistoryQuery{Queue: "burst", Since: time.Now().Add(-3 * time.Minute)})
		if err != nil {
			t.Fatal(err)
		}
		if s := historySum(h); s.Submitted != n.Load() || s.Succeeded != n.Load() {
			t.Errorf("counted %d submitted, %d succeeded; want %d of each", s.Submitted, s.Succeeded, n.Load())
		}
	}
}
