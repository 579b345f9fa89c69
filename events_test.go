package dtq_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dtq-dev/dtq"
)

// Events of submissions made one at a time ride along with the next
// submission's round trip, and the last goes out on its own within the
// linger: every submission's QUEUED event arrives, once.
func TestSerialSubmitEvents(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		var mu sync.Mutex
		seen := map[string]int{}
		subscribed(t, e, func(ev dtq.Event) {
			mu.Lock()
			defer mu.Unlock()
			if ev.Status == dtq.StatusQueued {
				seen[ev.TaskID]++
			}
		})
		var ids []string
		for range 50 {
			ids = append(ids, e.enqueue("job", nil, &dtq.EnqueueOpts{Queue: "serial"}).ID)
		}
		eventually(t, 10*time.Second, "a QUEUED event of each of the 50 submissions", func() bool {
			mu.Lock()
			defer mu.Unlock()
			for _, id := range ids {
				if seen[id] == 0 {
					return false
				}
			}
			return true
		})
		time.Sleep(20 * time.Millisecond) // a duplicate would have come by now (the linger is 2 ms)
		mu.Lock()
		defer mu.Unlock()
		for _, id := range ids {
			if seen[id] != 1 {
				t.Errorf("task %s: %d QUEUED events, want 1", id, seen[id])
			}
		}
	})
}

// A stopping worker publishes its last events before Stop returns, rather
// than leaving them to the events timer (a process that exits after Stop
// would lose them).
func TestWorkerStopFlushesEvents(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		dtq.SetEventLinger(e.c, time.Hour) // only the flush can publish them
		var mu sync.Mutex
		var got []dtq.Status
		subscribed(t, e, func(ev dtq.Event) {
			mu.Lock()
			defer mu.Unlock()
			if ev.Queue == "flush" {
				got = append(got, ev.Status)
			}
		})
		task, err := e.c.Enqueue(t.Context(), "job", nil, &dtq.EnqueueOpts{Queue: "flush"})
		if err != nil {
			t.Fatal(err)
		}
		w, err := dtq.NewWorker(e.c, &dtq.WorkerConfig{Queues: []string{"flush"}})
		if err != nil {
			t.Fatal(err)
		}
		w.Handle("job", func(context.Context, *dtq.Task) (any, error) { return nil, nil })
		if err := w.Start(t.Context()); err != nil {
			t.Fatal(err)
		}
		e.waitStatus(task.Task.ID, dtq.StatusSucceeded, 10*time.Second)
		if err := w.Stop(t.Context()); err != nil {
			t.Fatal(err)
		}
		eventually(t, 5*time.Second, "the QUEUED, RUNNING and SUCCEEDED events after Stop", func() bool {
			mu.Lock()
			defer mu.Unlock()
			return len(got) == 3
		})
	})
}

// subscribed subscribes to the events of every queue and returns once the
// subscription is live: subscriptions start asynchronously, so probe tasks
// (queue "probe") are submitted until one's event arrives — each
// submission carries the events pending before it. fn gets every event
// but the probes'.
func subscribed(t *testing.T, e *env, fn func(dtq.Event)) {
	t.Helper()
	var probed atomic.Bool
	ctx, cancel := context.WithCancel(t.Context())
	t.Cleanup(cancel)
	go e.c.Events(ctx, nil, func(ev dtq.Event) {
		if ev.Queue == "probe" {
			probed.Store(true)
			return
		}
		fn(ev)
	})
	eventually(t, 10*time.Second, "the subscription", func() bool {
		e.enqueue("job", nil, &dtq.EnqueueOpts{Queue: "probe"})
		return probed.Load()
	})
}
