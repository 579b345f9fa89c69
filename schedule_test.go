package dtq_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dtq-dev/dtq"
	"github.com/dtq-dev/dtq/internal/redistest"
	"github.com/dtq-dev/dtq/internal/store"
)

// A priority 9 task overtakes a priority 0 backlog: it runs within what the
// worker already holds.
func TestHighPriorityOvertakesBacklog(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		var mu sync.Mutex
		var order []int
		e.worker(&dtq.WorkerConfig{Concurrency: 1}, map[string]dtq.HandlerFunc{
			"job": func(_ context.Context, task *dtq.Task) (any, error) {
				mu.Lock()
				order = append(order, task.Priority)
				mu.Unlock()
				time.Sleep(time.Millisecond) // a backlog that takes a while
				return nil, nil
			},
		})
		reqs := make([]dtq.EnqueueRequest, 200)
		for i := range reqs {
			reqs[i] = dtq.EnqueueRequest{Type: "job", Opts: &dtq.EnqueueOpts{Priority: dtq.Ptr(0)}}
		}
		if _, err := e.c.EnqueueMany(t.Context(), reqs); err != nil {
			t.Fatal(err)
		}
		var before int
		for {
			mu.Lock()
			before = len(order)
			mu.Unlock()
			if before >= 5 {
				break
			}
			time.Sleep(time.Millisecond)
		}
		urgent := e.enqueue("job", nil, &dtq.EnqueueOpts{Priority: dtq.Ptr(9)})
		e.waitStatus(urgent.ID, dtq.StatusSucceeded, 10*time.Second)
		mu.Lock()
		defer mu.Unlock()
		pos := -1
		for i, p := range order {
			if p == 9 {
				pos = i
			}
		}
		// Enqueued when `before` had run; one more may have been held.
		if pos < 0 || pos > before+2 {
			t.Fatalf("the p9 task ran at position %d, %d p0 tasks after it was enqueued", pos, pos-before)
		}
	})
}

// A delayed task does not start before its due time (both measured on the
// Redis clock).
func TestDelayedTaskNotEarly(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		e.worker(nil, map[string]dtq.HandlerFunc{"job": func(context.Context, *dtq.Task) (any, error) { return nil, nil }})
		task := e.enqueue("job", nil, &dtq.EnqueueOpts{Delay: 300 * time.Millisecond})
		if task.Status != dtq.StatusScheduled || task.ScheduledAt == nil {
			t.Fatalf("enqueued %+v", task)
		}
		done := e.waitStatus(task.ID, dtq.StatusSucceeded, 10*time.Second)
		if started := done.History[0].StartedAt; started.Before(*task.ScheduledAt) {
			t.Fatalf("started at %v, before its due time %v", started, task.ScheduledAt)
		}
		at := e.enqueue("job", nil, &dtq.EnqueueOpts{RunAt: time.Now().Add(200 * time.Millisecond)})
		done = e.waitStatus(at.ID, dtq.StatusSucceeded, 10*time.Second)
		if done.History[0].StartedAt.Before(*at.ScheduledAt) {
			t.Fatalf("RunAt task started at %v, before %v", done.History[0].StartedAt, at.ScheduledAt)
		}
	})
}

// With a fake Redis clock (the embedded backend), a task due in an hour
// stays SCHEDULED until the clock reaches it, then runs.
func TestDelayedTaskFakeClock(t *testing.T) {
	t.Parallel()
	b := redistest.Embedded(t)
	now := time.Now()
	b.Server.SetTime(now)
	e := newEnv(t, &redistest.Backend{Name: "embedded", Client: b.Client, Namespace: "fake", Embedded: b}, nil)
	var ran atomic.Bool
	e.worker(nil, map[string]dtq.HandlerFunc{
		"job":    func(context.Context, *dtq.Task) (any, error) { ran.Store(true); return nil, nil },
		"marker": func(context.Context, *dtq.Task) (any, error) { return nil, nil },
	})
	task := e.enqueue("job", nil, &dtq.EnqueueOpts{Delay: time.Hour})
	if want := now.Add(time.Hour).UnixMilli(); task.ScheduledAt.UnixMilli() != want {
		t.Fatalf("due %v, want %v (the Redis clock plus the delay)", task.ScheduledAt, time.UnixMilli(want))
	}
	// At 59 minutes a marker due in 1ms is promoted and runs: proof that the
	// scheduler made a pass at that time. The hour-delayed task must not.
	b.Server.SetTime(now.Add(59 * time.Minute))
	marker := e.enqueue("marker", nil, &dtq.EnqueueOpts{Delay: time.Millisecond})
	b.Server.SetTime(now.Add(59*time.Minute + 2*time.Millisecond))
	e.enqueue("marker", nil, &dtq.EnqueueOpts{Delay: 24 * time.Hour}) // wakes the scheduler
	e.waitStatus(marker.ID, dtq.StatusSucceeded, 10*time.Second)
	if got, _ := e.c.Get(t.Context(), task.ID); got.Status != dtq.StatusScheduled || ran.Load() {
		t.Fatalf("at 59 minutes the task is %s (ran %v), want SCHEDULED", got.Status, ran.Load())
	}
	b.Server.SetTime(now.Add(time.Hour + time.Second))
	e.enqueue("marker", nil, &dtq.EnqueueOpts{Delay: 24 * time.Hour}) // wakes the scheduler
	e.waitStatus(task.ID, dtq.StatusSucceeded, 10*time.Second)
}

// When the scheduler's leader stops, another worker's scheduler takes over.
func TestSchedulerFailover(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		h := map[string]dtq.HandlerFunc{"job": func(context.Context, *dtq.Task) (any, error) { return nil, nil }}
		w1 := e.worker(&dtq.WorkerConfig{ID: "w1"}, h)
		w2 := e.worker(&dtq.WorkerConfig{ID: "w2"}, h)
		lock := store.NewKeys(e.Namespace, "default").SchedulerLock()
		var leader string
		deadline := time.Now().Add(10 * time.Second)
		for leader == "" {
			leader, _ = e.Client.Do(t.Context(), e.Client.B().Get().Key(lock).Build()).ToString()
			if time.Now().After(deadline) {
				t.Fatal("no scheduler leader elected")
			}
			time.Sleep(5 * time.Millisecond)
		}
		stop := map[string]*dtq.Worker{"w1": w1, "w2": w2}[leader]
		if err := stop.Stop(t.Context()); err != nil {
			t.Fatal(err)
		}
		task := e.enqueue("job", nil, &dtq.EnqueueOpts{Delay: 50 * time.Millisecond})
		e.waitStatus(task.ID, dtq.StatusSucceeded, 15*time.Second)
		now, _ := e.Client.Do(t.Context(), e.Client.B().Get().Key(lock).Build()).ToString()
		if now == leader || now == "" {
			t.Fatalf("lock held by %q after %q stopped", now, leader)
		}
	})
}

// Pausing a queue stops workers from starting its tasks; resuming lets them.
func TestPauseResumeQueue(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		if err := e.a.PauseQueue(t.Context(), "default"); err != nil {
			t.Fatal(err)
		}
		e.worker(nil, map[string]dtq.HandlerFunc{"job": func(context.Context, *dtq.Task) (any, error) { return nil, nil }})
		task := e.enqueue("job", nil, nil)
		st, _ := e.a.Stats(t.Context(), "default")
		if !st.Paused {
			t.Fatalf("stats %+v, want paused", st)
		}
		time.Sleep(300 * time.Millisecond) // a worker is up and reading
		if got, _ := e.c.Get(t.Context(), task.ID); got.Status != dtq.StatusQueued {
			t.Fatalf("paused queue: task is %s, want QUEUED", got.Status)
		}
		if err := e.a.ResumeQueue(t.Context(), "default"); err != nil {
			t.Fatal(err)
		}
		e.waitStatus(task.ID, dtq.StatusSucceeded, 10*time.Second)
		audit, _ := e.a.Audit(t.Context(), 10)
		if len(audit) < 2 || audit[0].Action != "resume" || audit[1].Action != "pause" {
			t.Fatalf("audit %+v", audit)
		}
	})
}

// EnqueueMany submits across queues in one call; bad items fail alone.
func TestEnqueueMany(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		var reqs []dtq.EnqueueRequest
		for i := range 30 {
			reqs = append(reqs, dtq.EnqueueRequest{Type: "job", Payload: i, Opts: &dtq.EnqueueOpts{Queue: fmt.Sprintf("q%d", i%3)}})
		}
		reqs = append(reqs, dtq.EnqueueRequest{Type: "job", Opts: &dtq.EnqueueOpts{Priority: dtq.Ptr(10)}})
		res, err := e.c.EnqueueMany(t.Context(), reqs)
		if err != nil {
			t.Fatal(err)
		}
		for i, r := range res[:30] {
			if r.Err != nil || r.Task.Queue != fmt.Sprintf("q%d", i%3) || string(r.Task.Payload) != fmt.Sprint(i) {
				t.Fatalf("item %d: %+v", i, r)
			}
		}
		if res[30].Err == nil {
			t.Fatal("priority 10 accepted")
		}
		qs, err := e.a.Queues(t.Context())
		if err != nil || len(qs) != 3 {
			t.Fatalf("queues %+v (%v)", qs, err)
		}
		for _, q := range qs {
			if q.Queued != 10 || q.Submitted != 10 {
				t.Fatalf("queue %+v", q)
			}
		}
	})
}
