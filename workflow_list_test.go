package dtq_test

import (
	"errors"
	"testing"
	"time"

	"github.com/dtq-dev/dtq"
)

// ListWorkflows lists a queue's workflows newest first with their status
// and progress, filters by status and creation time, pages with a cursor
// and refuses bad options naming the field.
func TestListWorkflows(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		ctx := t.Context()
		submit := func() *dtq.Workflow {
			t.Helper()
			// (a millisecond of its own: the list orders by creation time,
			// in ms, and workflows of one ms by id — random within it)
			time.Sleep(2 * time.Millisecond)
			w, err := e.c.EnqueueWorkflow(ctx, dtq.Chain(dtq.Call("a", 1, nil), dtq.Call("b", 2, nil)), &dtq.WorkflowOpts{Queue: "wl"})
			if err != nil {
				t.Fatal(err)
			}
			return w
		}
		first := submit()
		second := submit()
		if _, err := e.c.CancelWorkflow(ctx, second.ID); err != nil {
			t.Fatal(err)
		}
		e.waitWorkflow(second.ID, 5*time.Second)
		third := submit()

		page, err := e.a.ListWorkflows(ctx, dtq.ListWorkflowsOpts{Queue: "wl"})
		if err != nil {
			t.Fatal(err)
		}
		if len(page.Workflows) != 3 || page.Next != "" {
			t.Fatalf("listed %d workflows, next %q; want 3 and no next page", len(page.Workflows), page.Next)
		}
		for i, want := range []*dtq.Workflow{third, second, first} {
			got := page.Workflows[i]
			if got.ID != want.ID || !got.CreatedAt.Equal(want.CreatedAt) || got.Root != nil {
				t.Fatalf("workflow %d: %+v, want %s created %v without nodes", i, got, want.ID, want.CreatedAt)
			}
		}
		if w := page.Workflows[0]; w.Status != dtq.WorkflowRunning || w.Progress != (dtq.WorkflowProgress{Total: 2, Pending: 1, Active: 1}) {
			t.Fatalf("a running workflow listed as %s %+v", w.Status, w.Progress)
		}
		if w := page.Workflows[1]; w.Status != dtq.WorkflowCancelled || w.Progress.Cancelled != 2 || w.Error == "" || w.FinishedAt == nil {
			t.Fatalf("a cancelled workflow listed as %s %+v error %q finished %v", w.Status, w.Progress, w.Error, w.FinishedAt)
		}

		cancelled, err := e.a.ListWorkflows(ctx, dtq.ListWorkflowsOpts{Queue: "wl", Status: dtq.WorkflowCancelled})
		if err != nil || len(cancelled.Workflows) != 1 || cancelled.Workflows[0].ID != second.ID {
			t.Fatalf("CANCELLED: %+v %v", cancelled, err)
		}
		since, err := e.a.ListWorkflows(ctx, dtq.ListWorkflowsOpts{Queue: "wl", CreatedAfter: third.CreatedAt})
		if err != nil || len(since.Workflows) != 1 || since.Workflows[0].ID != third.ID {
			t.Fatalf("created after the third's creation: %+v %v", since, err)
		}
		before, err := e.a.ListWorkflows(ctx, dtq.ListWorkflowsOpts{Queue: "wl", CreatedBefore: first.CreatedAt.Add(time.Millisecond)})
		if err != nil || len(before.Workflows) == 0 || before.Workflows[len(before.Workflows)-1].ID != first.ID ||
			before.Workflows[0].CreatedAt.After(first.CreatedAt) {
			t.Fatalf("created before the first's creation + 1ms: %+v %v", before, err)
		}
		none, err := e.a.ListWorkflows(ctx, dtq.ListWorkflowsOpts{Queue: "wl", CreatedBefore: first.CreatedAt})
		if err != nil || len(none.Workflows) != 0 {
			t.Fatalf("created before the first: %+v %v", none, err)
		}
		var ids []string
		o := dtq.ListWorkflowsOpts{Queue: "wl", Limit: 2}
		for {
			p, err := e.a.ListWorkflows(ctx, o)
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range p.Workflows {
				ids = append(ids, w.ID)
			}
			if p.Next == "" {
				break
			}
			o.Cursor = p.Next
		}
		if len(ids) != 3 || ids[0] != third.ID || ids[2] != first.ID {
			t.Fatalf("pages of 2: %v", ids)
		}

		for _, tc := range []struct {
			o     dtq.ListWorkflowsOpts
			field string
		}{
			{dtq.ListWorkflowsOpts{}, "queue"},
			{dtq.ListWorkflowsOpts{Queue: "wl", Status: "DONE"}, "status"},
			{dtq.ListWorkflowsOpts{Queue: "wl", Limit: 501}, "limit"},
			{dtq.ListWorkflowsOpts{Queue: "wl", Cursor: "nope"}, "cursor"},
			{dtq.ListWorkflowsOpts{Queue: "wl", CreatedAfter: third.CreatedAt, CreatedBefore: first.CreatedAt}, "created_before"},
		} {
			_, err := e.a.ListWorkflows(ctx, tc.o)
			var ve *dtq.ValidationError
			if !errors.As(err, &ve) || ve.Field != tc.field {
				t.Fatalf("%+v: %v, want a ValidationError of %s", tc.o, err, tc.field)
			}
		}
	})
}
