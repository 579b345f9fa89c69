package dtq_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/dtq-dev/dtq"
	"github.com/dtq-dev/dtq/internal/redistest"
)

// A Go worker and an HTTP holder split one queue by type (CONTRACT
// 3.3.1c): each runs only its own, each task once, none of them crashed or
// retried.
func TestGoAndHTTPWorkersSplitAQueueByType(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		ctx := t.Context()
		var mu sync.Mutex
		ranByGo := map[string]string{} // task id -> type
		w := e.worker(fast(dtq.WorkerConfig{Queues: []string{"media"}}), map[string]dtq.HandlerFunc{
			"resize": func(_ context.Context, task *dtq.Task) (any, error) {
				mu.Lock()
				defer mu.Unlock()
				ranByGo[task.ID] = task.Type
				return nil, nil
			},
		})
		const each = 20
		var resize, transcode []string
		for range each {
			resize = append(resize, e.enqueue("resize", nil, &dtq.EnqueueOpts{Queue: "media"}).ID)
			transcode = append(transcode, e.enqueue("transcode", nil, &dtq.EnqueueOpts{Queue: "media"}).ID)
		}
		leased := map[string]bool{}
		deadline := time.Now().Add(30 * time.Second)
		for len(leased) < each && time.Now().Before(deadline) {
			ls, err := e.ls.Lease(ctx, dtq.LeaseRequest{Worker: "py", Queues: []string{"media"}, Types: []string{"transcode"},
				Max: 5, Wait: time.Second})
			if err != nil {
				t.Fatal(err)
			}
			for _, l := range ls {
				if l.Task.Type != "transcode" || leased[l.Task.ID] {
					t.Fatalf("the transcode holder leased %s %s (again: %v)", l.Task.Type, l.Task.ID, leased[l.Task.ID])
				}
				leased[l.Task.ID] = true
				if _, err := e.ls.CompleteLease(ctx, l.Token, nil); err != nil {
					t.Fatal(err)
				}
			}
		}
		for _, id := range resize {
			e.waitStatus(id, dtq.StatusSucceeded, 30*time.Second)
		}
		mu.Lock()
		defer mu.Unlock()
		if len(ranByGo) != each {
			t.Fatalf("the Go worker ran %d tasks, want its %d resize tasks: %v", len(ranByGo), each, ranByGo)
		}
		for id, typ := range ranByGo {
			if typ != "resize" {
				t.Fatalf("the Go worker ran %s of type %s", id, typ)
			}
		}
		check := func(ids []string, worker string) {
			for _, id := range ids {
				got, err := e.c.Get(ctx, id)
				if err != nil || got.Status != dtq.StatusSucceeded || got.Worker != worker || got.Attempt != 1 || got.Crashes != 0 {
					t.Fatalf("task %s: %+v %v, want SUCCEEDED by %s on its first attempt", id, got, err, worker)
				}
			}
		}
		check(resize, w.ID())
		check(transcode, "http:py")
	})
}

// A Go worker beside a task of a type it has no handler for does not spin
// on it: it gives it back, reads once more, then waits as on an empty
// queue (internal/claim). Measured in Redis commands over 2 s idle on the
// test's own server, against the same worker's 2 s before the task came.
func TestGoWorkerBesideAnotherTypeDoesNotSpin(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t, nil)
	e := newEnv(t, &redistest.Backend{Server: srv, Client: redistest.Client(t, srv), Namespace: redistest.Namespace(t)}, nil)
	ctx := t.Context()
	e.worker(&dtq.WorkerConfig{Queues: []string{"poly"}}, map[string]dtq.HandlerFunc{
		"echo": func(_ context.Context, task *dtq.Task) (any, error) { return task.Payload, nil },
	})
	time.Sleep(500 * time.Millisecond) // (started: its groups exist)
	before := commandCalls(t, srv.Addr)
	time.Sleep(2 * time.Second)
	idle := commandCalls(t, srv.Addr) - before

	other := e.enqueue("resize", nil, &dtq.EnqueueOpts{Queue: "poly"})
	time.Sleep(500 * time.Millisecond)
	before = commandCalls(t, srv.Addr)
	time.Sleep(2 * time.Second)
	typed := commandCalls(t, srv.Addr) - before
	t.Logf("Redis commands of an idle Go worker in 2 s: %d on an empty queue, %d beside a task of another type", idle, typed)
	if typed > 4*idle+100 {
		t.Fatalf("an idle Go worker beside a task of another type ran %d Redis commands in 2 s (on an empty queue: %d): it spins", typed, idle)
	}
	got, err := e.c.Get(ctx, other.ID)
	if err != nil || got.Status != dtq.StatusQueued {
		t.Fatalf("the other type's task: %+v %v, want QUEUED", got, err)
	}
	// It still wakes for its own type at once.
	echo := e.enqueue("echo", "hi", &dtq.EnqueueOpts{Queue: "poly"})
	e.waitStatus(echo.ID, dtq.StatusSucceeded, 5*time.Second)
	if _, err := e.c.Cancel(ctx, other.ID); err != nil && !errors.Is(err, dtq.ErrNotCancellable) {
		t.Fatal(err)
	}
}
