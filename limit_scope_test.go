package dtq_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/dtq-dev/dtq"
)

// A task type's limit of 3 holds across two worker processes of 2 slots
// each (reaching 3 takes both), read from their effect log; one of them
// SIGKILLed while it runs long tasks, which are then cancelled (so no run
// takes their leases over), its leases expire within the visibility
// timeout and the others run 3 at once again — not without the expiry.
func TestTypeLimitAcrossProcesses(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		ctx := t.Context()
		const vt = time.Second
		if err := e.a.SetTypeLimits(ctx, dtq.DefaultQueue, "nap", dtq.LimitSpec{MaxRunning: 3}); err != nil {
			t.Fatal(err)
		}
		log, effects, procs := runLimitedNaps(t, e, vt, 30)
		long, victim, killed := killOneRunningLong(t, e, procs)
		for _, id := range long {
			if _, err := e.c.Cancel(ctx, id); err != nil {
				t.Fatal(err)
			}
		}
		startChildWorker(t, e, "c", vt, effects, childConcurrencyEnv+"=2")
		for range 20 {
			e.enqueue("nap", 300, nil)
		}
		eventually(t, 15*time.Second, "three running at once again", func() bool {
			return mostAtOnce(readEffects(t, log), "", killed.UnixNano(), victim) == 3
		})
		if most := mostAtOnce(readEffects(t, log), "", killed.UnixNano(), victim); most != 3 {
			t.Fatalf("%d ran at once after the kill", most)
		}
		info, err := e.a.Limit(ctx, dtq.DefaultQueue)
		if err != nil || len(info.Scopes) != 1 || info.Scopes[0].TaskType != "nap" || info.Scopes[0].MaxRunning != 3 {
			t.Fatalf("limits: %+v %v", info, err)
		}
	})
}

// A limit of each limit key: never two tasks of one key at once, while
// different keys run side by side; the tasks a full key holds back are
// QUEUED and say which limit holds them.
func TestKeyLimitEachKey(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		ctx := t.Context()
		if err := e.a.SetKeyLimits(ctx, dtq.DefaultQueue, dtq.EachKey, dtq.LimitSpec{MaxRunning: 1}); err != nil {
			t.Fatal(err)
		}
		var mu sync.Mutex
		running, most, together := map[string]int{}, 0, false
		release := make(chan struct{})
		e.worker(&dtq.WorkerConfig{Concurrency: 8}, map[string]dtq.HandlerFunc{
			"job": func(ctx context.Context, t *dtq.Task) (any, error) {
				mu.Lock()
				running[t.LimitKey]++
				most = max(most, running[t.LimitKey])
				together = together || len(running) > 1 && running["a"] > 0 && running["b"] > 0
				mu.Unlock()
				select { // the first of each key holds its key until the checks below
				case <-release:
				case <-time.After(10 * time.Second):
				}
				time.Sleep(5 * time.Millisecond)
				mu.Lock()
				running[t.LimitKey]--
				mu.Unlock()
				return nil, nil
			},
		})
		var ids []string
		for i := range 20 {
			key := "a"
			if i%2 == 1 {
				key = "b"
			}
			ids = append(ids, e.enqueue("job", nil, &dtq.EnqueueOpts{LimitKey: key}).ID)
		}
		// a1 and b1 run, held; the worker's other claims are held back by
		// their keys' limits.
		eventually(t, 10*time.Second, "tasks held back by their keys' limits", func() bool {
			st, err := e.a.Stats(ctx, dtq.DefaultQueue)
			return err == nil && st.LimitWaiting >= 2 && st.Queued >= st.LimitWaiting
		})
		held := false
		for _, id := range ids {
			if task, err := e.c.Get(ctx, id); err == nil && task.Status == dtq.StatusQueued && task.HeldBy == "limit_key:"+task.LimitKey {
				held = true
			}
		}
		close(release)
		for _, id := range ids {
			e.waitStatus(id, dtq.StatusSucceeded, 20*time.Second)
		}
		mu.Lock()
		defer mu.Unlock()
		if most != 1 || !together {
			t.Fatalf("most of one key at once %d (want 1); a and b together: %v (want true)", most, together)
		}
		if !held {
			t.Errorf("no task was seen QUEUED held by its key's limit")
		}
	})
}

// A task type's rate: 20/s with bursts of 2 over a second starts at most 23;
// a RetryAfter from one of its tasks pauses the type for its delay.
func TestTypeRateLimit(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		ctx := t.Context()
		if err := e.a.SetTypeLimits(ctx, dtq.DefaultQueue, "call", dtq.LimitSpec{Rate: 20, Per: time.Second, Burst: 2}); err != nil {
			t.Fatal(err)
		}
		var mu sync.Mutex
		var starts []time.Time
		slowDown := true
		e.worker(&dtq.WorkerConfig{Concurrency: 8}, map[string]dtq.HandlerFunc{
			"call": func(ctx context.Context, t *dtq.Task) (any, error) {
				mu.Lock()
				defer mu.Unlock()
				starts = append(starts, time.Now())
				if slowDown && len(starts) == 30 {
					slowDown = false
					return nil, dtq.RetryAfter(500*time.Millisecond, errors.New("slow down"))
				}
				return nil, nil
			},
			"other": func(context.Context, *dtq.Task) (any, error) { return nil, nil },
		})
		var ids []string
		for range 40 {
			ids = append(ids, e.enqueue("call", nil, nil).ID)
		}
		other := e.enqueue("other", nil, nil).ID
		e.waitStatus(other, dtq.StatusSucceeded, 5*time.Second) // another type is not held
		for _, id := range ids {
			e.waitStatus(id, dtq.StatusSucceeded, 30*time.Second)
		}
		mu.Lock()
		defer mu.Unlock()
		first := starts[0]
		n := 0
		for _, s := range starts {
			if s.Sub(first) < time.Second {
				n++
			}
		}
		// At most the burst and the rate over the second (+1 for a start
		// on its edge); at least enough to show the tasks were not all
		// held (a loaded machine delays the promotions of reserved starts).
		if n < 12 || n > 23 {
			t.Errorf("%d starts in the first second, want at most 23 (20/s after a burst of 2)", n)
		}
		// The 30th start said slow down: from when the pause is surely
		// written (200 ms of slack for the write to land) to its end,
		// nothing of the type starts; at 20/s five would have.
		said := starts[29]
		for _, st := range starts[30:] {
			if d := st.Sub(said); d > 200*time.Millisecond && d < 450*time.Millisecond {
				t.Errorf("a start %v after the RetryAfter, within its 500 ms pause", d)
			}
		}
	})
}
