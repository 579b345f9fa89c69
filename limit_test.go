package dtq_test

import (
	"context"
	"errors"
	"sync"
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
		if err := e.a.SetLimits(ctx, "capped", dtq.LimitSpec{MaxRunning: 3}); err != nil {
			t.Fatal(err)
		}
		var running, most atomic.Int64
		handler := func(context.Context, *dtq.Task) (any, error) {
			n := running.Add(1)
			for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
			}
			// Until three have met, a task waits (up to 2 s) for the others
			// the limit lets start: on a loaded machine 20 ms alone let one
			// end before the third started (CI once saw only 2 at once).
			for deadline := time.Now().Add(2 * time.Second); most.Load() < 3 && time.Now().Before(deadline); {
				time.Sleep(5 * time.Millisecond)
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
		info, err := e.a.Limit(ctx, "capped")
		if err != nil || info.MaxRunning != 3 {
			t.Fatalf("ConcurrencyLimit: %+v, %v", info, err)
		}
		eventually(t, 5*time.Second, "the leases of running tasks given back", func() bool {
			info, err := e.a.Limit(ctx, "capped")
			return err == nil && info.InUse <= 2 // each idle worker waits with one
		})
		// Removed, the limit no longer holds (read again within a beat).
		if err := e.a.ClearLimits(ctx, "capped"); err != nil {
			t.Fatal(err)
		}
		if info, err := e.a.Limit(ctx, "capped"); err != nil || info.MaxRunning != 0 || info.Rate != 0 {
			t.Fatalf("after ClearLimits: %+v, %v", info, err)
		}
		if err := e.a.SetLimits(ctx, "capped", dtq.LimitSpec{}); !errors.Is(err, dtq.ErrInvalid) {
			t.Fatalf("SetLimits of no limit (ClearLimits removes them): %v", err)
		}
		if err := e.a.SetLimits(ctx, "capped", dtq.LimitSpec{MaxRunning: -1}); !errors.Is(err, dtq.ErrInvalid) {
			t.Fatalf("a negative limit: %v", err)
		}
		if err := e.a.SetLimits(ctx, "..", dtq.LimitSpec{MaxRunning: 1}); !errors.Is(err, dtq.ErrInvalid) {
			t.Fatalf("a bad queue: %v", err)
		}
	})
}

// RetryAfter from a task of a limited queue pauses the queue's limits, not
// only that task: no other task of the queue starts until it ends.
func TestRetryAfterPausesTheLimit(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		ctx := t.Context()
		const pause = 400 * time.Millisecond
		if err := e.a.SetLimits(ctx, "remote", dtq.LimitSpec{MaxRunning: 1}); err != nil {
			t.Fatal(err)
		}
		var mu sync.Mutex
		var starts []time.Time
		var slowedAt time.Time
		e.worker(&dtq.WorkerConfig{Queues: []string{"remote"}, Concurrency: 4}, map[string]dtq.HandlerFunc{
			"call": func(_ context.Context, task *dtq.Task) (any, error) {
				mu.Lock()
				defer mu.Unlock()
				starts = append(starts, time.Now())
				if string(task.Payload) == `"first"` && task.Attempt == 1 {
					slowedAt = time.Now()
					return nil, dtq.RetryAfter(pause, errors.New("429: slow down"))
				}
				return "ok", nil
			},
		})
		first := e.enqueue("call", "first", &dtq.EnqueueOpts{Queue: "remote"})
		e.waitStatus(first.ID, dtq.StatusScheduled, 10*time.Second)
		var others []string
		for range 3 {
			others = append(others, e.enqueue("call", "other", &dtq.EnqueueOpts{Queue: "remote"}).ID)
		}
		for _, id := range append(others, first.ID) {
			e.waitStatus(id, dtq.StatusSucceeded, 10*time.Second)
		}
		mu.Lock()
		defer mu.Unlock()
		for _, s := range starts[1:] {
			if s.Before(slowedAt.Add(pause - 20*time.Millisecond)) { // the Redis clock and this one agree to a few ms
				t.Fatalf("a task started %v after the RetryAfter(%v)", s.Sub(slowedAt), pause)
			}
		}
		if info, err := e.a.Limit(ctx, "remote"); err != nil || info.PausedUntil != nil {
			t.Fatalf("after the pause: %+v, %v", info, err)
		}
	})
}

// Each scope of limits has one setter and one remover: a setter given no
// limit (the zero LimitSpec) is refused and changes nothing, and each
// Clear*Limits removes its scope's limits only.
func TestSetAndClearLimitsOfEachScope(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		ctx := t.Context()
		const q = "scoped"
		if err := e.a.SetLimits(ctx, q, dtq.LimitSpec{MaxRunning: 4, Rate: 10, Per: time.Second}); err != nil {
			t.Fatal(err)
		}
		if err := e.a.SetTypeLimits(ctx, q, "render", dtq.LimitSpec{MaxRunning: 2}); err != nil {
			t.Fatal(err)
		}
		if err := e.a.SetKeyLimits(ctx, q, dtq.EachKey, dtq.LimitSpec{MaxRunning: 1}); err != nil {
			t.Fatal(err)
		}
		for name, err := range map[string]error{
			"SetLimits":     e.a.SetLimits(ctx, q, dtq.LimitSpec{}),
			"SetTypeLimits": e.a.SetTypeLimits(ctx, q, "render", dtq.LimitSpec{}),
			"SetKeyLimits":  e.a.SetKeyLimits(ctx, q, dtq.EachKey, dtq.LimitSpec{Per: time.Second}),
		} {
			var ve *dtq.ValidationError
			if !errors.As(err, &ve) || ve.Field != "max_running" {
				t.Errorf("%s of no limit: %v, want a ValidationError of max_running", name, err)
			}
		}
		scopes := func() (*dtq.LimitInfo, []string) {
			t.Helper()
			info, err := e.a.Limit(ctx, q)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, s := range info.Scopes {
				got = append(got, s.TaskType+"|"+s.LimitKey)
			}
			return info, got
		}
		if info, got := scopes(); info.MaxRunning != 4 || info.Rate != 10 || len(got) != 2 {
			t.Fatalf("after the refused setters: %+v %v, want every limit as set", info, got)
		}
		if err := e.a.ClearTypeLimits(ctx, q, "render"); err != nil {
			t.Fatal(err)
		}
		if info, got := scopes(); info.MaxRunning != 4 || len(got) != 1 || got[0] != "|"+dtq.EachKey {
			t.Fatalf("after ClearTypeLimits: %+v %v, want the queue's and the key's", info, got)
		}
		if err := e.a.ClearLimits(ctx, q); err != nil {
			t.Fatal(err)
		}
		if info, got := scopes(); info.MaxRunning != 0 || info.Rate != 0 || len(got) != 1 {
			t.Fatalf("after ClearLimits: %+v %v, want the key's only", info, got)
		}
		if err := e.a.ClearKeyLimits(ctx, q, dtq.EachKey); err != nil {
			t.Fatal(err)
		}
		// Removing what is not there is no error.
		if err := e.a.ClearKeyLimits(ctx, q, "customer-7"); err != nil {
			t.Fatal(err)
		}
		if info, got := scopes(); info.MaxRunning != 0 || len(got) != 0 {
			t.Fatalf("after ClearKeyLimits: %+v %v, want none", info, got)
		}
		if err := e.a.ClearTypeLimits(ctx, q, "bad\ntype"); !errors.Is(err, dtq.ErrInvalid) {
			t.Fatalf("ClearTypeLimits of a bad type: %v", err)
		}
		if err := e.a.ClearKeyLimits(ctx, q, "bad key!"); !errors.Is(err, dtq.ErrInvalid) {
			t.Fatalf("ClearKeyLimits of a bad key: %v", err)
		}
	})
}
