package dtq_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dtq-dev/dtq"
)

// A parent awaits its child: enqueued once however often the parent runs,
// its result returned once it succeeded; a child that fails for good is a
// ChildError; both outcomes are recorded as the parent's steps.
func TestChildAwaited(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		var childRuns, parentRuns atomic.Int64
		e.worker(&dtq.WorkerConfig{}, map[string]dtq.HandlerFunc{
			"parent": func(ctx context.Context, task *dtq.Task) (any, error) {
				parentRuns.Add(1)
				got, err := dtq.Child(ctx, "thumb", "child", task.Payload, nil)
				var ce *dtq.ChildError
				if errors.As(err, &ce) && errors.Is(err, dtq.ErrChildFailed) {
					return "child " + string(ce.Status) + ": " + ce.Err, nil
				}
				if err != nil {
					return nil, err
				}
				return got, nil
			},
			"idleparent": func(ctx context.Context, _ *dtq.Task) (any, error) {
				_, err := dtq.Child(ctx, "stuck", "child", nil, &dtq.EnqueueOpts{Queue: "nowhere"})
				var ce *dtq.ChildError
				if errors.As(err, &ce) {
					return "child " + string(ce.Status) + ": " + ce.Err, nil
				}
				return nil, err
			},
			"child": func(_ context.Context, task *dtq.Task) (any, error) {
				childRuns.Add(1)
				time.Sleep(1500 * time.Millisecond)
				if string(task.Payload) == `"bad"` {
					return nil, dtq.Permanent(errors.New("cannot"))
				}
				return map[string]any{"size": 42}, nil
			},
		})
		ok := e.enqueue("parent", "good", nil)
		waiting := e.waitStatus(ok.ID, dtq.StatusScheduled, 10*time.Second)
		if waiting.Suspended == nil || waiting.Suspended.For != "child" || waiting.Suspended.Name != "thumb" {
			t.Fatalf("parent %+v, want suspended for its child", waiting.Suspended)
		}
		done := e.waitStatus(ok.ID, dtq.StatusSucceeded, 15*time.Second)
		// Woken by the child's end, before its own check of the child.
		if last := done.History[len(done.History)-1]; !last.StartedAt.Before(waiting.Suspended.Until) {
			t.Errorf("the parent resumed at %v, not before its check at %v: the child's end did not wake it",
				last.StartedAt, waiting.Suspended.Until)
		}
		if string(done.Result) != `{"size":42}` || childRuns.Load() != 1 {
			t.Fatalf("parent result %s with %d child runs; want the child's result, 1 run", done.Result, childRuns.Load())
		}
		if n := len(done.History); n != 2 || done.History[0].Outcome != dtq.OutcomeSuspended || done.Attempt != 1 {
			t.Fatalf("parent history %+v (attempt %d): want one suspended run, then its end, in attempt 1", done.History, done.Attempt)
		}
		if len(done.Steps) != 2 || done.Steps[0].Name != "thumb" || done.Steps[1].Name != "thumb.result" {
			t.Fatalf("parent steps %+v, want thumb and thumb.result", done.Steps)
		}
		page, err := e.c.List(t.Context(), dtq.ListOpts{Queue: "default", Type: "child"})
		if err != nil || len(page.Tasks) != 1 {
			t.Fatalf("children: %d, %v; want 1 (enqueued once over %d parent runs)", len(page.Tasks), err, parentRuns.Load())
		}

		// A child cancelled (it waits in a queue no worker serves): the
		// cancel wakes the parent, which gets a ChildError.
		idle := e.enqueue("idleparent", nil, nil)
		waiting = e.waitStatus(idle.ID, dtq.StatusScheduled, 10*time.Second)
		kids, err := e.c.List(t.Context(), dtq.ListOpts{Queue: "nowhere"})
		if err != nil || len(kids.Tasks) != 1 {
			t.Fatalf("the idle child: %d, %v", len(kids.Tasks), err)
		}
		if _, err := e.c.Cancel(t.Context(), kids.Tasks[0].ID); err != nil {
			t.Fatal(err)
		}
		done = e.waitStatus(idle.ID, dtq.StatusSucceeded, 15*time.Second)
		if string(done.Result) != `"child CANCELLED: cancelled"` || !done.History[len(done.History)-1].StartedAt.Before(waiting.Suspended.Until) {
			t.Fatalf("parent of a cancelled child: %s, resumed %v (its check at %v)", done.Result,
				done.History[len(done.History)-1].StartedAt, waiting.Suspended.Until)
		}

		bad := e.enqueue("parent", "bad", nil)
		done = e.waitStatus(bad.ID, dtq.StatusSucceeded, 15*time.Second)
		if string(done.Result) != `"child DEAD: cannot"` {
			t.Fatalf("parent of a failed child: %s", done.Result)
		}
	})
}
