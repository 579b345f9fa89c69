package dtq_test

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/dtq-dev/dtq"
)

// lease leases exactly want tasks or fails the test.
func (e *env) lease(r dtq.LeaseRequest, want int) []*dtq.Lease {
	e.t.Helper()
	ls, err := e.ls.Lease(e.t.Context(), r)
	if err != nil || len(ls) != want {
		e.t.Fatalf("lease %+v: %d leases, %v; want %d", r, len(ls), err, want)
	}
	return ls
}

// takeOver leases, as holder worker with timeout, the task of a lease that
// lapsed, once it is taken over.
func (e *env) takeOver(worker string, timeout time.Duration) *dtq.Lease {
	e.t.Helper()
	var got *dtq.Lease
	eventually(e.t, 10*time.Second, worker+" takes the task over", func() bool {
		ls, err := e.ls.Lease(e.t.Context(), dtq.LeaseRequest{Worker: worker, Timeout: timeout, Wait: 50 * time.Millisecond})
		if err != nil {
			e.t.Fatal(err)
		}
		if len(ls) == 1 {
			got = ls[0]
		}
		return got != nil
	})
	return got
}

// A leased task runs outside the process: RUNNING under its holder, then
// SUCCEEDED with the result its holder sent; a retryable failure retries,
// a permanent one (or the last attempt) is DEAD.
func TestLeaseCompleteAndFail(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		ctx := t.Context()
		ok := e.enqueue("resize", map[string]int{"w": 640}, &dtq.EnqueueOpts{Priority: dtq.Ptr(7)})
		l := e.lease(dtq.LeaseRequest{Worker: "py-1"}, 1)[0]
		if l.Task.ID != ok.ID || l.Task.Type != "resize" || string(l.Task.Payload) != `{"w":640}` || l.Task.Attempt != 1 ||
			time.Until(l.Deadline) < 20*time.Second {
			t.Fatalf("lease %+v task %+v", l, l.Task)
		}
		if got, _ := e.c.Get(ctx, ok.ID); got.Status != dtq.StatusRunning || got.Worker != "http:py-1" {
			t.Fatalf("leased task %+v", got)
		}
		done, err := e.ls.CompleteLease(ctx, l.Token, json.RawMessage(`{"url":"x.png"}`))
		if err != nil || done.Status != dtq.StatusSucceeded || string(done.Result) != `{"url":"x.png"}` {
			t.Fatalf("complete: %+v %v", done, err)
		}
		// a retry (its answer was lost): the task as it is, nothing changed
		if again, err := e.ls.CompleteLease(ctx, l.Token, json.RawMessage(`"other"`)); err != nil || again.Status != dtq.StatusSucceeded ||
			string(again.Result) != `{"url":"x.png"}` {
			t.Fatalf("completed twice: %+v %v, want the first outcome", again, err)
		}

		flaky := e.enqueue("flaky", nil, &dtq.EnqueueOpts{MaxAttempts: 2})
		l = e.lease(dtq.LeaseRequest{Worker: "py-1"}, 1)[0]
		got, err := e.ls.FailLease(ctx, l.Token, dtq.LeaseFailure{Error: "timeout talking to S3", RetryAfter: 30 * time.Millisecond})
		if err != nil || got.Status != dtq.StatusScheduled || got.LastError != "timeout talking to S3" {
			t.Fatalf("fail, retryable: %+v %v", got, err)
		}
		var l2 *dtq.Lease
		eventually(t, 10*time.Second, "the retry is leased", func() bool {
			ls, err := e.ls.Lease(ctx, dtq.LeaseRequest{Worker: "py-1", Wait: 100 * time.Millisecond})
			if err != nil {
				t.Fatal(err)
			}
			if len(ls) == 1 {
				l2 = ls[0]
			}
			return l2 != nil
		})
		if l2.Task.ID != flaky.ID || l2.Task.Attempt != 2 {
			t.Fatalf("retry lease %+v", l2.Task)
		}
		got, err = e.ls.FailLease(ctx, l2.Token, dtq.LeaseFailure{Error: "still down"})
		if err != nil || got.Status != dtq.StatusDead {
			t.Fatalf("last attempt failed: %+v %v", got, err)
		}
		e.enqueue("bad", nil, nil)
		l = e.lease(dtq.LeaseRequest{Worker: "py-1"}, 1)[0]
		if got, err := e.ls.FailLease(ctx, l.Token, dtq.LeaseFailure{Error: "bad input", Permanent: true}); err != nil ||
			got.Status != dtq.StatusDead || got.Attempt != 1 {
			t.Fatalf("permanent: %+v %v", got, err)
		}
	})
}

// A holder that stops extending its lease loses it: after the timeout a
// Lease takes the task over (its crash counted, not an attempt), and the
// first holder's completion is refused and changes nothing.
func TestLeaseLostToATakeover(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		ctx := t.Context()
		task := e.enqueue("job", nil, nil)
		first := e.lease(dtq.LeaseRequest{Worker: "a", Timeout: 100 * time.Millisecond}, 1)[0]
		second := e.takeOver("b", 100*time.Millisecond)
		if second.Task.ID != task.ID || second.Task.Crashes != 1 || second.Task.Attempt != 1 {
			t.Fatalf("taken over: %+v", second.Task)
		}
		if _, err := e.ls.CompleteLease(ctx, first.Token, json.RawMessage(`"from a"`)); !errors.Is(err, dtq.ErrLeaseLost) {
			t.Fatalf("the lost lease's completion: %v, want ErrLeaseLost", err)
		}
		if _, _, err := e.ls.ExtendLease(ctx, first.Token); !errors.Is(err, dtq.ErrLeaseLost) {
			t.Fatalf("the lost lease's extension: %v, want ErrLeaseLost", err)
		}
		done, err := e.ls.CompleteLease(ctx, second.Token, json.RawMessage(`"from b"`))
		if err != nil || done.Status != dtq.StatusSucceeded || string(done.Result) != `"from b"` || done.Worker != "http:b" {
			t.Fatalf("b's completion: %+v %v", done, err)
		}
	})
}

// Extending a lease renews it and tells its holder of a cancellation; the
// task then ends CANCELLED whatever its holder reports.
func TestLeaseExtendAndCancel(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		ctx := t.Context()
		task := e.enqueue("long", nil, nil)
		l := e.lease(dtq.LeaseRequest{Worker: "a", Timeout: 300 * time.Millisecond}, 1)[0]
		for range 4 { // well past the timeout, extended every 100 ms
			time.Sleep(100 * time.Millisecond)
			if _, cancel, err := e.ls.ExtendLease(ctx, l.Token); err != nil || cancel {
				t.Fatalf("extend: %v %v", cancel, err)
			}
			if ls, err := e.ls.Lease(ctx, dtq.LeaseRequest{Worker: "b", Timeout: 300 * time.Millisecond}); err != nil || len(ls) != 0 {
				t.Fatalf("b took an extended lease's task: %d %v", len(ls), err)
			}
		}
		if _, err := e.c.Cancel(ctx, task.ID); err != nil {
			t.Fatal(err)
		}
		deadline, cancel, err := e.ls.ExtendLease(ctx, l.Token)
		if err != nil || !cancel || time.Until(deadline) <= 0 {
			t.Fatalf("extend after cancel: %v %v %v", deadline, cancel, err)
		}
		got, err := e.ls.CompleteLease(ctx, l.Token, nil)
		if err != nil || got.Status != dtq.StatusCancelled {
			t.Fatalf("completed after the cancel: %+v %v", got, err)
		}
	})
}

// Lease waits for a first task when none is ready, leases only the types
// its holder runs, several at once, and refuses what it cannot do.
func TestLeaseWaitTypesAndErrors(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		ctx := t.Context()
		go func() {
			time.Sleep(200 * time.Millisecond)
			e.enqueue("late", nil, nil)
		}()
		start := time.Now()
		ls := e.lease(dtq.LeaseRequest{Worker: "a", Wait: 10 * time.Second}, 1)
		if ls[0].Task.Type != "late" || time.Since(start) > 5*time.Second {
			t.Fatalf("long poll: %+v after %v", ls[0].Task, time.Since(start))
		}
		if ls, err := e.ls.Lease(ctx, dtq.LeaseRequest{Worker: "a", Wait: 150 * time.Millisecond}); err != nil || len(ls) != 0 {
			t.Fatalf("an empty queue: %d %v", len(ls), err)
		}

		for range 3 {
			e.enqueue("email", nil, nil)
			e.enqueue("pdf", nil, nil)
		}
		got := e.lease(dtq.LeaseRequest{Worker: "a", Types: []string{"pdf"}, Max: 10}, 3)
		for _, l := range got {
			if l.Task.Type != "pdf" {
				t.Errorf("leased a %s task for a pdf holder", l.Task.Type)
			}
		}
		if st, err := e.a.Stats(ctx, "default"); err != nil || st.Queued != 3 || st.Running != 4 {
			t.Fatalf("after the typed lease: %+v %v (want the 3 emails queued)", st, err)
		}

		for _, r := range []dtq.LeaseRequest{{}, {Worker: "a", Max: 101}, {Worker: "a", Wait: time.Minute}, {Worker: "a|b"},
			{Worker: "a", Queues: []string{"bad queue"}}, {Worker: "a", Timeout: time.Microsecond}} {
			var ve *dtq.ValidationError
			if _, err := e.ls.Lease(ctx, r); !errors.As(err, &ve) {
				t.Errorf("lease %+v: %v, want a ValidationError", r, err)
			}
		}
		var ve *dtq.ValidationError
		if _, err := e.ls.CompleteLease(ctx, "not-a-token", nil); !errors.As(err, &ve) || ve.Field != "lease" {
			t.Errorf("a bad token: %v", err)
		}
		// A token whose entry id was tampered with: refused before any
		// script sees the id (which the scripts compare unparsed).
		raw, _ := base64.RawURLEncoding.DecodeString(got[0].Token)
		f := strings.Split(string(raw), "|")
		for _, entry := range []string{"abc", "12-x", "-1", "01-1", ""} {
			f[3] = entry
			forged := base64.RawURLEncoding.EncodeToString([]byte(strings.Join(f, "|")))
			if _, err := e.ls.CompleteLease(ctx, forged, nil); !errors.As(err, &ve) || ve.Field != "lease" {
				t.Errorf("a token with entry %q: %v, want a ValidationError of lease", entry, err)
			}
		}
		if _, err := e.ls.CompleteLease(ctx, got[0].Token, json.RawMessage(`{`)); !errors.As(err, &ve) || ve.Field != "result" {
			t.Errorf("a bad result: %v", err)
		}
	})
}

// A workflow's node run by a lease moves its workflow on as a Go
// worker's does.
func TestLeaseRunsWorkflowNodes(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		ctx := t.Context()
		w, err := e.c.EnqueueWorkflow(ctx, dtq.Chain(dtq.Call("a", nil, nil), dtq.Call("b", nil, nil)), nil)
		if err != nil {
			t.Fatal(err)
		}
		l := e.lease(dtq.LeaseRequest{Worker: "py"}, 1)[0]
		if l.Task.Workflow != w.ID {
			t.Fatalf("leased node %+v", l.Task)
		}
		if _, err := e.ls.CompleteLease(ctx, l.Token, json.RawMessage(`41`)); err != nil {
			t.Fatal(err)
		}
		l = e.lease(dtq.LeaseRequest{Worker: "py"}, 1)[0]
		if l.Task.Type != "b" || string(l.Task.Previous) != "41" {
			t.Fatalf("the next node %+v", l.Task)
		}
		if _, err := e.ls.CompleteLease(ctx, l.Token, json.RawMessage(`42`)); err != nil {
			t.Fatal(err)
		}
		if got := e.waitWorkflow(w.ID, 5*time.Second); got.Status != dtq.WorkflowSucceeded || string(got.Result) != "42" {
			t.Fatalf("workflow %s %s", got.Status, got.Result)
		}
	})
}

// A task whose entry a lease gave back (its holder runs other types) and
// that is then cancelled leaves nothing queued: the stats count it once,
// submitted and cancelled, and no lease finds it.
func TestLeaseGiveBackThenCancel(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		ctx := t.Context()
		task := e.enqueue("email", nil, nil)
		if ls, err := e.ls.Lease(ctx, dtq.LeaseRequest{Worker: "pdf", Types: []string{"pdf"}}); err != nil || len(ls) != 0 {
			t.Fatalf("a pdf holder leased %d tasks (%v), want none", len(ls), err)
		}
		if st, err := e.a.Stats(ctx, "default"); err != nil || st.Queued != 1 || st.Running != 0 || st.Submitted != 1 {
			t.Fatalf("after the give-back: %+v %v, want 1 queued of 1 submitted", st, err)
		}
		got, err := e.c.Cancel(ctx, task.ID)
		if err != nil || got.Status != dtq.StatusCancelled {
			t.Fatalf("cancel: %+v %v", got, err)
		}
		st, err := e.a.Stats(ctx, "default")
		if err != nil || st.Queued != 0 || st.Running != 0 || st.Submitted != 1 || st.Cancelled != 1 || st.QueuedByPriority[5] != 0 {
			t.Fatalf("after the cancel: %+v %v, want 0 queued, 1 submitted, 1 cancelled", st, err)
		}
		if ls, err := e.ls.Lease(ctx, dtq.LeaseRequest{Worker: "any"}); err != nil || len(ls) != 0 {
			t.Fatalf("a lease after the cancel: %d %v, want none", len(ls), err)
		}
	})
}
