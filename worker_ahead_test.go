package dtq_test

import (
	"context"
	"encoding/json"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dtq-dev/dtq"
)

// A worker with quick handlers claims tasks ahead of its free slots, but
// never runs more handlers at once than its Concurrency. (Midway, its
// handlers hold their slots until the test has seen the tasks claimed
// ahead: twice as many, for a share under 20. The handlers' average may pass a millisecond on
// a loaded host: the gate is raised, TestSlowHandlersClaimNothingAhead
// tests it.)
func TestClaimAheadKeepsConcurrency(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		const n, conc, holdAt = 600, 3, 300
		reqs := make([]dtq.EnqueueRequest, n)
		for i := range reqs {
			reqs[i] = dtq.EnqueueRequest{Type: "quick"}
		}
		if _, err := e.c.EnqueueMany(t.Context(), reqs); err != nil {
			t.Fatal(err)
		}
		var now, most, started, done atomic.Int64
		hold := make(chan struct{})
		e.workerSet(&dtq.WorkerConfig{Concurrency: conc}, map[string]dtq.HandlerFunc{"quick": func(context.Context, *dtq.Task) (any, error) {
			cur := now.Add(1)
			for m := most.Load(); cur > m && !most.CompareAndSwap(m, cur); m = most.Load() {
			}
			if k := started.Add(1); k > holdAt && k <= holdAt+conc {
				<-hold // every slot held: what more is claimed waits
			}
			for begun := time.Now(); time.Since(begun) < 200*time.Microsecond; {
				runtime.Gosched() // (a timer would sleep for a millisecond or more)
			}
			now.Add(-1)
			done.Add(1)
			return nil, nil
		}}, func(w *dtq.Worker) { dtq.SetAheadBelow(w, time.Minute) })
		var release sync.Once
		t.Cleanup(func() { release.Do(func() { close(hold) }) }) // (before the worker's stop)
		eventually(t, 10*time.Second, "as many tasks claimed ahead as the slots held", func() bool {
			return started.Load() == holdAt+conc && e.running(dtq.DefaultQueue) == 3*conc
		})
		release.Do(func() { close(hold) })
		deadline := time.Now().Add(60 * time.Second)
		for done.Load() < n {
			if time.Now().After(deadline) {
				t.Fatalf("%d of %d tasks ran", done.Load(), n)
			}
			time.Sleep(10 * time.Millisecond)
		}
		if m := most.Load(); m > conc {
			t.Fatalf("%d handlers ran at once, want at most Concurrency %d", m, conc)
		}
	})
}

// A worker whose handlers are slow claims nothing ahead: a task it could
// not start at once stays QUEUED, for any worker that is free. (Counted
// while the first handlers run: once one ends, its slot takes a task
// before its outcome is recorded, so RUNNING may be one more for a moment.)
func TestSlowHandlersClaimNothingAhead(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		const conc = 2
		for range 6 {
			e.enqueue("slow", nil, nil)
		}
		var started atomic.Int64
		e.worker(&dtq.WorkerConfig{Concurrency: conc}, map[string]dtq.HandlerFunc{"slow": func(ctx context.Context, _ *dtq.Task) (any, error) {
			started.Add(1)
			time.Sleep(400 * time.Millisecond)
			return nil, nil
		}})
		deadline := time.Now().Add(10 * time.Second)
		for started.Load() < conc {
			if time.Now().After(deadline) {
				t.Fatal("the first handlers never started")
			}
			time.Sleep(time.Millisecond)
		}
		var seen int64
		for end := time.Now().Add(250 * time.Millisecond); time.Now().Before(end); time.Sleep(5 * time.Millisecond) {
			seen = max(seen, e.running(dtq.DefaultQueue))
		}
		if seen != conc {
			t.Fatalf("%d tasks RUNNING while the first %d slow handlers ran, want %d: claimed ahead", seen, conc, conc)
		}
	})
}

// A worker of Concurrency 1 runs quick tasks one after the other in the
// order they were submitted: it claims nothing ahead, whose tasks would
// start in no set order.
func TestConcurrencyOneRunsInOrder(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		const n = 300
		reqs := make([]dtq.EnqueueRequest, n)
		for i := range reqs {
			reqs[i] = dtq.EnqueueRequest{Type: "seq", Payload: i}
		}
		if _, err := e.c.EnqueueMany(t.Context(), reqs); err != nil {
			t.Fatal(err)
		}
		var mu sync.Mutex
		var order []int
		e.worker(&dtq.WorkerConfig{Concurrency: 1}, map[string]dtq.HandlerFunc{"seq": func(_ context.Context, task *dtq.Task) (any, error) {
			var i int
			if err := json.Unmarshal(task.Payload, &i); err != nil {
				return nil, dtq.Permanent(err)
			}
			mu.Lock()
			order = append(order, i)
			mu.Unlock()
			return nil, nil
		}})
		eventually(t, 60*time.Second, "every task run", func() bool {
			mu.Lock()
			defer mu.Unlock()
			return len(order) == n
		})
		mu.Lock()
		defer mu.Unlock()
		for k, i := range order {
			if i != k {
				t.Fatalf("run %d was task %d (order %v…): want submission order", k, i, order[max(0, k-3):min(n, k+3)])
			}
		}
	})
}
