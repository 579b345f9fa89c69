package dtq_test

import (
	"context"
	"testing"
	"time"

	"github.com/dtq-dev/dtq"
)

// Suspended tasks are visible: List with Suspended pages only them,
// earliest due first (a task merely delayed is not one), and the queue's
// stats count them as part of Scheduled, until a signal wakes one and a
// cancel ends the other.
func TestListAndCountSuspended(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		ctx := t.Context()
		e.worker(&dtq.WorkerConfig{Queues: []string{"naps"}}, map[string]dtq.HandlerFunc{
			"nap": func(ctx context.Context, _ *dtq.Task) (any, error) {
				return nil, dtq.Sleep(ctx, "nap", 2*time.Hour)
			},
			"approve": func(ctx context.Context, _ *dtq.Task) (any, error) {
				return dtq.WaitFor(ctx, "approval", time.Hour)
			},
		})
		in := &dtq.EnqueueOpts{Queue: "naps"}
		nap := e.enqueue("nap", nil, in)
		approve := e.enqueue("approve", nil, in)
		delayed := e.enqueue("nap", nil, &dtq.EnqueueOpts{Queue: "naps", Delay: 3 * time.Hour})
		e.waitStatus(nap.ID, dtq.StatusScheduled, 10*time.Second)
		e.waitStatus(approve.ID, dtq.StatusScheduled, 10*time.Second)

		ids := func(o dtq.ListOpts) ([]string, string) {
			t.Helper()
			o.Queue = "naps"
			page, err := e.c.List(ctx, o)
			if err != nil {
				t.Fatalf("list %+v: %v", o, err)
			}
			var out []string
			for _, task := range page.Tasks {
				if task.Suspended == nil {
					t.Errorf("list %+v: task %s has no suspension", o, task.ID)
				}
				out = append(out, task.ID)
			}
			return out, page.Next
		}
		// The wait ends in an hour, the sleep in two.
		if got, _ := ids(dtq.ListOpts{Suspended: true}); len(got) != 2 || got[0] != approve.ID || got[1] != nap.ID {
			t.Errorf("suspended: %v, want [%s %s] (earliest due first; not the delayed %s)", got, approve.ID, nap.ID, delayed.ID)
		}
		first, next := ids(dtq.ListOpts{Suspended: true, Limit: 1})
		second, _ := ids(dtq.ListOpts{Suspended: true, Limit: 1, Cursor: next})
		if len(first) != 1 || first[0] != approve.ID || len(second) != 1 || second[0] != nap.ID {
			t.Errorf("paged by one: %v then %v (cursor %q)", first, second, next)
		}
		if got, _ := ids(dtq.ListOpts{Suspended: true, Type: "nap", Status: dtq.StatusScheduled}); len(got) != 1 || got[0] != nap.ID {
			t.Errorf("suspended of type nap: %v", got)
		}
		if got, _ := ids(dtq.ListOpts{Suspended: true, Status: dtq.StatusQueued}); len(got) != 0 {
			t.Errorf("suspended and QUEUED: %v, want none", got)
		}
		counts := func(scheduled, suspended int64) {
			t.Helper()
			st, err := e.a.Stats(ctx, "naps")
			if err != nil {
				t.Fatal(err)
			}
			if st.Scheduled != scheduled || st.Suspended != suspended {
				t.Errorf("stats: scheduled %d, suspended %d; want %d and %d", st.Scheduled, st.Suspended, scheduled, suspended)
			}
		}
		counts(3, 2)

		if err := e.c.Signal(ctx, approve.ID, "approval", "yes"); err != nil {
			t.Fatal(err)
		}
		e.waitStatus(approve.ID, dtq.StatusSucceeded, 10*time.Second)
		counts(2, 1)
		if _, err := e.c.Cancel(ctx, nap.ID); err != nil {
			t.Fatal(err)
		}
		counts(1, 0)
		if got, _ := ids(dtq.ListOpts{Suspended: true}); len(got) != 0 {
			t.Errorf("suspended after the signal and the cancel: %v", got)
		}
	})
}
