package dtq_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dtq-dev/dtq"
)

// A queue-wide limit holds across workers: two workers of 8 slots each
// never run more than 3 of the queue's tasks at once, and do reach 3.
func TestConcurrencyLimitAcrossWorkers(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		ctx := t.Context()
		if err := e.c.SetConcurrencyLimit(ctx, "capped", 3); err != nil {
			t.Fatal(err)
		}
		var running, most atomic.Int64
		handler := func(context.Context, *dtq.Task) (any, error) {
			n := running.Add(1)
			for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
			}
			time.Sleep(20 * time.Millisecond)
			running.Add(-1)
			return nil, nil
		}
		for range 2 {
			e.worker(&dtq.WorkerConfig{Queues: []string{"capped"}, Concurrency: 8}, map[string]dtq.HandlerFunc{"job": handler})
		}
		var ids []string
		for range 30 {
			ids = append(ids, e.enqueue("job", nil, &dtq.EnqueueOpts{Queue: "capped"}).ID)
		}
		for _, id := range ids {
			e.waitStatus(id, dtq.StatusSucceeded, 20*time.Second)
		}
		if m := most.Load(); m != 3 {
			t.Fatalf("at most %d ran at once, want 3 (the limit)", m)
		}
		info, err := e.c.ConcurrencyLimit(ctx, "capped")
		if err != nil || info.MaxRunning != 3 {
			t.Fatalf("ConcurrencyLimit: %+v, %v", info, err)
		}
		eventually(t, 5*time.Second, "the leases of running tasks given back", func() bool {
			info, err := e.c.ConcurrencyLimit(ctx, "capped")
			return err == nil && info.InUse <= 2 // each idle worker waits with one
		})
		// Removed, the limit no longer holds (read again within a beat).
		if err := e.c.SetConcurrencyLimit(ctx, "capped", 0); err != nil {
			t.Fatal(err)
		}
		if err := e.c.SetConcurrencyLimit(ctx, "capped", -1); !errors.Is(err, dtq.ErrInvalid) {
			t.Fatalf("a negative limit: %v", err)
		}
		if err := e.c.SetConcurrencyLimit(ctx, "..", 1); !errors.Is(err, dtq.ErrInvalid) {
			t.Fatalf("a bad queue: %v", err)
		}
	})
}
