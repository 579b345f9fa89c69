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
