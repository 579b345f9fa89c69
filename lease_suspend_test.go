package dtq_test

import (
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/dtq-dev/dtq"
)

// A leased task sleeps and waits through its lease: the lease ends with
// the task suspended (its attempt kept), and a later lease of it finds the
// sleep over and the wait answered; a cancellation requested meanwhile
// ends it CANCELLED instead.
func TestLeaseSleepAndWait(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		ctx := t.Context()
		task := e.enqueue("remote", nil, &dtq.EnqueueOpts{Queue: "http"})
		req := dtq.LeaseRequest{Worker: "py-1", Queues: []string{"http"}, Wait: 5 * time.Second}
		l := e.lease(req, 1)[0]
		res, err := e.ls.SleepLease(ctx, l.Token, "nap", 300*time.Millisecond)
		if err != nil || res.Suspended == nil || res.Suspended.For != "sleep" {
			t.Fatalf("sleep: %+v, %v; want suspended", res, err)
		}
		if _, err := e.ls.CompleteLease(ctx, l.Token, nil); !errors.Is(err, dtq.ErrLeaseLost) {
			t.Fatalf("complete after the suspension: %v, want ErrLeaseLost", err)
		}
		if got, _ := e.c.Get(ctx, task.ID); got.Status != dtq.StatusScheduled || got.Suspended == nil {
			t.Fatalf("suspended task %+v", got)
		}

		l = e.lease(req, 1)[0] // due after the sleep
		if res, err := e.ls.SleepLease(ctx, l.Token, "nap", 300*time.Millisecond); err != nil || res.Suspended != nil {
			t.Fatalf("the sleep, again: %+v, %v; want over", res, err)
		}
		res, err = e.ls.WaitLease(ctx, l.Token, "go", time.Hour)
		if err != nil || res.Suspended == nil || res.Suspended.Name != "go" {
			t.Fatalf("wait: %+v, %v; want suspended", res, err)
		}
		if err := e.c.Signal(ctx, task.ID, "go", map[string]int{"n": 7}); err != nil {
			t.Fatal(err)
		}
		l = e.lease(req, 1)[0]
		res, err = e.ls.WaitLease(ctx, l.Token, "go", time.Hour)
		if err != nil || res.Suspended != nil || string(res.Payload) != `{"n":7}` || l.Task.Attempt != 1 {
			t.Fatalf("the wait, again: %+v, %v (attempt %d); want its payload in attempt 1", res, err, l.Task.Attempt)
		}
		if _, err := e.c.Cancel(ctx, task.ID); err != nil {
			t.Fatal(err)
		}
		if _, err := e.ls.WaitLease(ctx, l.Token, "later", time.Hour); !errors.Is(err, dtq.ErrLeaseLost) {
			t.Fatalf("a wait after a cancel request: %v, want ErrLeaseLost", err)
		}
		got := e.waitStatus(task.ID, dtq.StatusCancelled, time.Second)
		var steps []string
		for _, s := range got.Steps {
			steps = append(steps, s.Name)
		}
		if raw, _ := json.Marshal(steps); string(raw) != `["nap","go"]` {
			t.Fatalf("steps %s, want nap and go", raw)
		}
	})
}

// A leased task awaits a child: the lease ends while the child runs, the
// child is submitted once however often the parent asks, and a later
// lease of the parent gets the child's end — its result, or its error.
func TestLeaseChild(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		ctx := t.Context()
		parent := e.enqueue("remote", nil, &dtq.EnqueueOpts{Queue: "parents"})
		req := dtq.LeaseRequest{Worker: "py-1", Queues: []string{"parents"}, Wait: 5 * time.Second}
		kids := dtq.LeaseRequest{Worker: "py-2", Queues: []string{"kids"}, Wait: 5 * time.Second}
		opts := &dtq.EnqueueOpts{Queue: "kids"}
		l := e.lease(req, 1)[0]
		res, err := e.ls.ChildLease(ctx, l.Token, "ok", "thumb", json.RawMessage(`{"w":1}`), opts)
		if err != nil || res.Suspended == nil || res.Suspended.For != "child" {
			t.Fatalf("child: %+v, %v; want suspended", res, err)
		}
		kid := e.lease(kids, 1)[0]
		if _, err := e.ls.CompleteLease(ctx, kid.Token, json.RawMessage(`"small"`)); err != nil {
			t.Fatal(err)
		}
		l = e.lease(req, 1)[0]
		res, err = e.ls.ChildLease(ctx, l.Token, "ok", "thumb", json.RawMessage(`{"w":1}`), opts)
		if err != nil || res.Child == nil || res.Child.ID != kid.Task.ID || res.Child.Status != dtq.StatusSucceeded || string(res.Child.Result) != `"small"` {
			t.Fatalf("the child, again: %+v %+v, %v; want its result", res, res.Child, err)
		}
		res, err = e.ls.ChildLease(ctx, l.Token, "bad", "thumb", nil, opts)
		if err != nil || res.Suspended == nil {
			t.Fatalf("a second child: %+v, %v; want suspended", res, err)
		}
		kid = e.lease(kids, 1)[0]
		if _, err := e.ls.FailLease(ctx, kid.Token, dtq.LeaseFailure{Error: "too big", Permanent: true}); err != nil {
			t.Fatal(err)
		}
		l = e.lease(req, 1)[0]
		if res, err := e.ls.ChildLease(ctx, l.Token, "bad", "thumb", nil, opts); err != nil || res.Child == nil ||
			res.Child.Status != dtq.StatusDead || res.Child.Error != "too big" {
			t.Fatalf("the failed child: %+v, %v; want DEAD with its error", res.Child, err)
		}
		if page, err := e.c.List(ctx, dtq.ListOpts{Queue: "kids"}); err != nil || len(page.Tasks) != 2 {
			t.Fatalf("children: %d, %v; want 2", len(page.Tasks), err)
		}
		if _, err := e.ls.CompleteLease(ctx, l.Token, nil); err != nil {
			t.Fatal(err)
		}
		e.waitStatus(parent.ID, dtq.StatusSucceeded, time.Second)
	})
}
