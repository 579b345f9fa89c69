package dtq_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/dtq-dev/dtq"
)

// running counts the RUNNING tasks of queue.
func (e *env) running(queue string) int64 {
	e.t.Helper()
	st, err := dtq.NewAdmin(e.c).Stats(e.t.Context(), queue)
	if err != nil {
		e.t.Fatal(err)
	}
	return st.Running
}

// Leases hold a queue's concurrency limit as Go workers do: no more
// leased at once than it allows, a slot freed by an outcome is leased
// again, a long poll waits for that slot, and a holder that stops
// extending gives its slot back with its lease's time.
func TestLeaseUnderConcurrencyLimit(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		ctx := t.Context()
		if err := dtq.NewAdmin(e.c).SetLimits(ctx, "capped", dtq.LimitSpec{MaxRunning: 2}); err != nil {
			t.Fatal(err)
		}
		capped := &dtq.EnqueueOpts{Queue: "capped"}
		for range 5 {
			e.enqueue("resize", nil, capped)
		}
		r := dtq.LeaseRequest{Worker: "py-1", Queues: []string{"capped"}, Max: 5}
		first := e.lease(r, 2)
		e.lease(r, 0)
		if li, err := dtq.NewAdmin(e.c).Limit(ctx, "capped"); err != nil || li.InUse != 2 {
			t.Fatalf("limit %+v (%v): want 2 leases in use", li, err)
		}
		if _, err := e.ls.CompleteLease(ctx, first[0].Token, json.RawMessage(`1`)); err != nil {
			t.Fatal(err)
		}
		e.lease(r, 1)
		// a long poll waits for the slot a completion frees
		go func() {
			time.Sleep(100 * time.Millisecond)
			e.ls.FailLease(t.Context(), first[1].Token, dtq.LeaseFailure{Error: "x", Permanent: true})
		}()
		start := time.Now()
		waited := e.lease(dtq.LeaseRequest{Worker: "py-2", Queues: []string{"capped"}, Max: 5, Wait: 5 * time.Second}, 1)
		if time.Since(start) < 100*time.Millisecond {
			t.Fatalf("leased %s before a slot was free", waited[0].Task.ID)
		}
		if n := e.running("capped"); n != 2 {
			t.Fatalf("%d running, want the limit's 2", n)
		}
		// extensions renew the slot: still one held past its first term
		short := dtq.LeaseRequest{Worker: "py-3", Queues: []string{"capped"}, Max: 5, Timeout: 200 * time.Millisecond}
		if _, err := e.ls.CompleteLease(ctx, waited[0].Token, nil); err != nil {
			t.Fatal(err)
		}
		kept := e.lease(short, 1)[0]
		for range 6 {
			time.Sleep(50 * time.Millisecond)
			if _, _, err := e.ls.ExtendLease(ctx, kept.Token); err != nil {
				t.Fatalf("extend: %v", err)
			}
		}
		if li, _ := e.a.Limit(ctx, "capped"); li.InUse != 2 {
			t.Fatalf("limit %+v: the extended lease's slot lapsed", li)
		}
		// a holder that stops extending: its slot expires with its lease
		eventually(t, 10*time.Second, "the lapsed slot is leased again", func() bool {
			ls, err := e.ls.Lease(ctx, dtq.LeaseRequest{Worker: "py-4", Queues: []string{"capped"}, Max: 5, Timeout: 200 * time.Millisecond})
			if err != nil {
				t.Fatal(err)
			}
			return len(ls) > 0
		})
	})
}

// A rate limit grants leases at its rate.
func TestLeaseUnderRateLimit(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		ctx := t.Context()
		if err := e.a.SetLimits(ctx, "metered", dtq.LimitSpec{Rate: 2, Per: time.Hour, Burst: 2}); err != nil {
			t.Fatal(err)
		}
		for range 4 {
			e.enqueue("call", nil, &dtq.EnqueueOpts{Queue: "metered"})
		}
		r := dtq.LeaseRequest{Worker: "py-1", Queues: []string{"metered"}, Max: 4}
		e.lease(r, 2)
		e.lease(r, 0)
		if n := e.running("metered"); n != 2 {
			t.Fatalf("%d running, want the burst of 2", n)
		}
	})
}

// A scoped limit of a task type holds leases too: tasks of other types are
// leased meanwhile, and the one held back is leased once the running one
// ends.
func TestLeaseUnderTypeLimit(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		ctx := t.Context()
		if err := e.a.SetTypeLimits(ctx, "scoped", "render", dtq.LimitSpec{MaxRunning: 1}); err != nil {
			t.Fatal(err)
		}
		opts := &dtq.EnqueueOpts{Queue: "scoped"}
		a := e.enqueue("render", nil, opts)
		b := e.enqueue("render", nil, opts)
		e.enqueue("email", nil, opts)
		r := dtq.LeaseRequest{Worker: "py-1", Queues: []string{"scoped"}, Max: 3}
		ls := e.lease(r, 2)
		var render *dtq.Lease
		for _, l := range ls {
			if l.Task.Type == "render" {
				render = l
			}
		}
		if render == nil || render.Task.ID != a.ID {
			t.Fatalf("leased %v %v, want the first render and the email", ls[0].Task, ls[1].Task)
		}
		e.lease(r, 0)
		if _, _, err := e.ls.ExtendLease(ctx, render.Token); err != nil {
			t.Fatal(err)
		}
		if _, err := e.ls.CompleteLease(ctx, render.Token, nil); err != nil {
			t.Fatal(err)
		}
		var next []*dtq.Lease
		eventually(t, 5*time.Second, "the held-back render is leased", func() bool {
			got, err := e.ls.Lease(ctx, r)
			if err != nil {
				t.Fatal(err)
			}
			next = append(next, got...)
			return len(next) > 0
		})
		if next[0].Task.ID != b.ID {
			t.Fatalf("leased %s, want the held-back render %s", next[0].Task.ID, b.ID)
		}
	})
}
