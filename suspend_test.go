package dtq_test

import (
	"context"
	"encoding/json"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dtq-dev/dtq"
)

// A durable sleep ends the execution without failing it: the task waits
// SCHEDULED (Get says for what, until when) with its slot free — another
// task runs in it meanwhile —, then resumes on another worker with its
// attempt kept, the step before the sleep not run again and the sleep not
// slept twice.
func TestSleepFreesTheSlotAndResumesElsewhere(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		var charged, after atomic.Int64
		sleeper := func(ctx context.Context, task *dtq.Task) (any, error) {
			if _, err := dtq.Step(ctx, "charge", func(context.Context) (int64, error) { return charged.Add(1), nil }); err != nil {
				return nil, err
			}
			if err := dtq.Sleep(ctx, "cool-off", 2*time.Second); err != nil {
				return nil, err
			}
			after.Add(1)
			return "done", nil
		}
		quick := func(context.Context, *dtq.Task) (any, error) { return "quick", nil }
		first := e.worker(&dtq.WorkerConfig{ID: "first", Concurrency: 1},
			map[string]dtq.HandlerFunc{"order": sleeper, "quick": quick})
		task := e.enqueue("order", nil, nil)
		sleeping := e.waitStatus(task.ID, dtq.StatusScheduled, 10*time.Second)
		if s := sleeping.Suspended; s == nil || s.For != "sleep" || s.Name != "cool-off" ||
			s.Until.Before(time.Now().Add(time.Second)) || sleeping.Attempt != 1 {
			t.Fatalf("sleeping task: suspended %+v, attempt %d; want a sleep cool-off ~2s from now, attempt 1",
				sleeping.Suspended, sleeping.Attempt)
		}
		// The one slot is free: another task runs meanwhile.
		other := e.enqueue("quick", nil, nil)
		e.waitStatus(other.ID, dtq.StatusSucceeded, 5*time.Second)
		if got, _ := e.c.Get(t.Context(), task.ID); got.Status != dtq.StatusScheduled {
			t.Fatalf("the sleeper is %s while the other task ran, want SCHEDULED (still sleeping)", got.Status)
		}
		ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
		first.Stop(ctx)
		cancel()
		e.worker(&dtq.WorkerConfig{ID: "second", Concurrency: 1},
			map[string]dtq.HandlerFunc{"order": sleeper, "quick": quick})
		done := e.waitStatus(task.ID, dtq.StatusSucceeded, 10*time.Second)
		if charged.Load() != 1 || after.Load() != 1 {
			t.Fatalf("charged %d times, ran past the sleep %d times; want 1 and 1", charged.Load(), after.Load())
		}
		if done.Attempt != 1 || len(done.History) != 2 || done.Suspended != nil {
			t.Fatalf("attempt %d, %d runs, suspended %+v; want attempt 1 in 2 runs, not suspended", done.Attempt, len(done.History), done.Suspended)
		}
		h := done.History
		if h[0].Outcome != dtq.OutcomeSuspended || h[0].Worker != "first" || h[1].Outcome != dtq.OutcomeSucceeded || h[1].Worker != "second" {
			t.Fatalf("history %+v; want suspended on first, then succeeded on second", h)
		}
		if slept := h[1].StartedAt.Sub(h[0].FinishedAt); slept < 1900*time.Millisecond {
			t.Fatalf("resumed %v after it suspended, want ~2s", slept)
		}
	})
}

// A signal reaches a wait whether it comes before the task ran, while it
// waits, or never (the timeout, ErrWaitTimedOut); each wait's answer is
// recorded once, so a signal after it is refused, as is one to a finished
// task or to no task.
func TestWaitForSignal(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		var runs atomic.Int64
		approve := map[string]dtq.HandlerFunc{"approve": func(ctx context.Context, task *dtq.Task) (any, error) {
			runs.Add(1)
			var timeout time.Duration
			if err := json.Unmarshal(task.Payload, &timeout); err != nil {
				return nil, dtq.Permanent(err)
			}
			got, err := dtq.WaitFor(ctx, "approval", timeout)
			if errors.Is(err, dtq.ErrWaitTimedOut) {
				return "timed out", nil
			}
			if err != nil {
				return nil, err
			}
			return got, nil
		}}
		e.worker(&dtq.WorkerConfig{}, approve)
		ctx := t.Context()

		// Before: kept for the wait, which returns at once (no worker
		// serves queue "later" until the signal is in).
		before := e.enqueue("approve", time.Hour, &dtq.EnqueueOpts{Queue: "later"})
		if err := e.c.Signal(ctx, before.ID, "approval", map[string]string{"by": "ann"}); err != nil {
			t.Fatal(err)
		}
		if err := e.c.Signal(ctx, before.ID, "approval", "again"); !errors.Is(err, dtq.ErrSignalDelivered) {
			t.Fatalf("second signal: %v, want ErrSignalDelivered", err)
		}
		e.worker(&dtq.WorkerConfig{Queues: []string{"later"}}, approve)
		done := e.waitStatus(before.ID, dtq.StatusSucceeded, 10*time.Second)
		if string(done.Result) != `{"by":"ann"}` || len(done.History) != 1 {
			t.Fatalf("result %s in %d runs, want the signal's payload in 1", done.Result, len(done.History))
		}

		// During: the waiting task is due at once.
		during := e.enqueue("approve", time.Hour, nil)
		waiting := e.waitStatus(during.ID, dtq.StatusScheduled, 10*time.Second)
		if s := waiting.Suspended; s == nil || s.For != "signal" || s.Name != "approval" || s.Until.Before(time.Now().Add(50*time.Minute)) {
			t.Fatalf("waiting task suspended %+v, want signal approval for an hour", waiting.Suspended)
		}
		sent := time.Now()
		if err := e.c.Signal(ctx, during.ID, "approval", 42); err != nil {
			t.Fatal(err)
		}
		done = e.waitStatus(during.ID, dtq.StatusSucceeded, 10*time.Second)
		if string(done.Result) != "42" || done.Attempt != 1 || time.Since(sent) > 5*time.Second {
			t.Fatalf("result %s, attempt %d; want 42 in attempt 1", done.Result, done.Attempt)
		}
		steps := done.Steps
		if len(steps) != 1 || steps[0].By != "signal" || steps[0].Run != 0 || string(steps[0].Result) != "42" {
			t.Fatalf("steps %+v, want the signal's record", steps)
		}

		// Never: the timeout, recorded; a late signal is refused.
		late := e.enqueue("approve", 300*time.Millisecond, nil)
		done = e.waitStatus(late.ID, dtq.StatusSucceeded, 10*time.Second)
		if string(done.Result) != `"timed out"` || len(done.Steps) != 1 || done.Steps[0].By != "timeout" {
			t.Fatalf("result %s, steps %+v; want the timeout", done.Result, done.Steps)
		}
		if err := e.c.Signal(ctx, late.ID, "approval", 1); !errors.Is(err, dtq.ErrTaskFinished) {
			t.Fatalf("signal to a finished task: %v, want ErrTaskFinished", err)
		}
		if err := e.c.Signal(ctx, "default-01JZZZZZZZZZZZZZZZZZZZZZZZ", "approval", 1); !errors.Is(err, dtq.ErrNotFound) {
			t.Fatalf("signal to no task: %v, want ErrNotFound", err)
		}
		if err := e.c.Signal(ctx, done.ID, "", 1); !errors.Is(err, dtq.ErrInvalid) {
			t.Fatalf("signal with no name: %v, want ErrInvalid", err)
		}
		if n := runs.Load(); n != 5 {
			t.Fatalf("%d runs, want 5 (1 + 2 + 2)", n)
		}
	})
}

// A suspended task can be cancelled: it ends CANCELLED and never runs
// again.
func TestCancelWhileSuspended(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		var runs atomic.Int64
		e.worker(&dtq.WorkerConfig{}, map[string]dtq.HandlerFunc{"nap": func(ctx context.Context, _ *dtq.Task) (any, error) {
			runs.Add(1)
			return nil, dtq.Sleep(ctx, "nap", 300*time.Millisecond)
		}})
		task := e.enqueue("nap", nil, nil)
		e.waitStatus(task.ID, dtq.StatusScheduled, 10*time.Second)
		if _, err := e.c.Cancel(t.Context(), task.ID); err != nil {
			t.Fatal(err)
		}
		time.Sleep(600 * time.Millisecond)
		got := e.waitStatus(task.ID, dtq.StatusCancelled, time.Second)
		if runs.Load() != 1 || got.Suspended != nil {
			t.Fatalf("%d runs, suspended %+v; want 1 run, and no suspension once cancelled", runs.Load(), got.Suspended)
		}
	})
}

// A workflow's node may be a durable task: it suspends (its node stays
// active) and, once it ends, the next node starts with its result.
func TestWorkflowNodeSuspends(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		e.worker(&dtq.WorkerConfig{}, map[string]dtq.HandlerFunc{
			"napper": func(ctx context.Context, _ *dtq.Task) (any, error) {
				if err := dtq.Sleep(ctx, "nap", 300*time.Millisecond); err != nil {
					return nil, err
				}
				return "rested", nil
			},
			"after": func(_ context.Context, task *dtq.Task) (any, error) { return "after " + string(task.Previous), nil },
		})
		wf, err := e.c.EnqueueWorkflow(t.Context(), dtq.Chain(dtq.Call("napper", nil, nil), dtq.Call("after", nil, nil)), nil)
		if err != nil {
			t.Fatal(err)
		}
		done := e.waitWorkflow(wf.ID, 10*time.Second)
		if string(done.Result) != `"after \"rested\""` {
			t.Fatalf("workflow %s: result %s, want the second node's, after the first's", done.Status, done.Result)
		}
	})
}
