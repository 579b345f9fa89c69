package dtq_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/dtq-dev/dtq"
)

// skips returns the reasons of res's skipped tasks by id.
func skips(res *dtq.BulkResult) map[string]string {
	out := map[string]string{}
	for _, s := range res.Skipped {
		out[s.ID] = s.Reason
	}
	return out
}

// Bulk cancel over a selection and over a filter: a dry run counts and
// changes nothing; each task is cancelled as Cancel does; what a cancel
// does not take is skipped with its reason; a limit leaves More.
func TestBulkCancel(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		ctx := t.Context()
		if err := e.a.PauseQueue(ctx, "held"); err != nil {
			t.Fatal(err)
		}
		e.worker(nil, map[string]dtq.HandlerFunc{"job": func(context.Context, *dtq.Task) (any, error) { return nil, nil }})
		var reports, mails []string
		for range 3 {
			reports = append(reports, e.enqueue("report", nil, &dtq.EnqueueOpts{Queue: "held"}).ID)
		}
		reports = append(reports, e.enqueue("report", nil, &dtq.EnqueueOpts{Queue: "held", Delay: time.Hour}).ID)
		for range 2 {
			mails = append(mails, e.enqueue("mail", nil, &dtq.EnqueueOpts{Queue: "held"}).ID)
		}
		done := e.enqueue("job", nil, nil)
		e.waitStatus(done.ID, dtq.StatusSucceeded, 10*time.Second)

		filter := &dtq.BulkFilter{Queue: "held", Type: "report"}
		dry, err := e.a.Bulk(ctx, dtq.BulkRequest{Action: dtq.BulkCancel, Filter: filter, DryRun: true})
		if err != nil || dry.Matched != 4 || dry.Done != 0 || dry.SkippedCount != 0 || !dry.DryRun || dry.More {
			t.Fatalf("dry run: %+v %v", dry, err)
		}
		limited, err := e.a.Bulk(ctx, dtq.BulkRequest{Action: dtq.BulkCancel, Filter: filter, DryRun: true, Limit: 3})
		if err != nil || limited.Matched != 3 || !limited.More {
			t.Fatalf("dry run with a limit of 3: %+v %v", limited, err)
		}
		for _, id := range reports {
			if tk, _ := e.c.Get(ctx, id); tk.Status == dtq.StatusCancelled {
				t.Fatalf("a dry run cancelled %s", id)
			}
		}
		res, err := e.a.Bulk(ctx, dtq.BulkRequest{Action: dtq.BulkCancel, Filter: filter, Rate: 1000})
		if err != nil || res.Matched != 4 || res.Done != 4 || res.SkippedCount != 0 {
			t.Fatalf("cancel by filter: %+v %v", res, err)
		}
		for _, id := range reports {
			e.waitStatus(id, dtq.StatusCancelled, time.Second)
		}
		for _, id := range mails {
			if tk, _ := e.c.Get(ctx, id); tk.Status != dtq.StatusQueued {
				t.Errorf("a task the filter did not match is %s", tk.Status)
			}
		}

		// A selection: one to cancel, the rest skipped with their reasons.
		ids := []string{mails[0], reports[0], done.ID, "held-01ARZ3NDEKTSV4RRFFQ69G5FAV", "no id"}
		res, err = e.a.Bulk(ctx, dtq.BulkRequest{Action: dtq.BulkCancel, IDs: ids})
		if err != nil || res.Matched != 5 || res.Done != 1 || res.SkippedCount != 4 {
			t.Fatalf("cancel by ids: %+v %v", res, err)
		}
		want := map[string]string{reports[0]: dtq.SkipCancelledAlready, done.ID: dtq.SkipFinished,
			"held-01ARZ3NDEKTSV4RRFFQ69G5FAV": dtq.SkipNotFound, "no id": dtq.SkipNotFound}
		if got := skips(res); !mapsEqual(got, want) {
			t.Errorf("skipped %v, want %v", got, want)
		}
		e.waitStatus(mails[0], dtq.StatusCancelled, time.Second)

		entries, err := e.a.Audit(ctx, 100)
		if err != nil {
			t.Fatal(err)
		}
		var details []string
		for _, a := range entries {
			if a.Action == "bulk-cancel" {
				details = append(details, a.Detail)
			}
			if a.Action == "cancel" {
				t.Errorf("a bulk cancel audited each task: %+v", a)
			}
		}
		if len(details) != 2 || !strings.Contains(details[0], "5 ids: 1 done of 5 matched, 4 skipped") ||
			!strings.Contains(details[1], `type="report"`) {
			t.Errorf("bulk-cancel audit entries (dry runs are not): %q", details)
		}
	})
}

// Bulk requeue takes dead letters only; bulk delete takes finished tasks
// that are no dead letters, and Get answers ErrNotFound for them after.
func TestBulkRequeueAndDelete(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		ctx := t.Context()
		e.worker(nil, map[string]dtq.HandlerFunc{
			"job":  func(context.Context, *dtq.Task) (any, error) { return "ok", nil },
			"fail": func(context.Context, *dtq.Task) (any, error) { return nil, dtq.Permanent(errors.New("no")) },
		})
		var dead []string
		for range 3 {
			dead = append(dead, e.enqueue("fail", nil, nil).ID)
		}
		ok := e.enqueue("job", nil, nil).ID
		for _, id := range dead {
			e.waitStatus(id, dtq.StatusDead, 10*time.Second)
		}
		e.waitStatus(ok, dtq.StatusSucceeded, 10*time.Second)
		if err := e.a.PauseQueue(ctx, "held"); err != nil {
			t.Fatal(err)
		}
		queued := e.enqueue("job", nil, &dtq.EnqueueOpts{Queue: "held"}).ID

		// Delete: the finished one goes; a dead letter and a queued task stay.
		res, err := e.a.Bulk(ctx, dtq.BulkRequest{Action: dtq.BulkDelete, IDs: []string{ok, dead[0], queued}})
		if err != nil || res.Done != 1 || res.SkippedCount != 2 {
			t.Fatalf("delete: %+v %v", res, err)
		}
		if got, want := skips(res), map[string]string{dead[0]: dtq.SkipDeadLetter, queued: dtq.SkipNotFinished}; !mapsEqual(got, want) {
			t.Errorf("delete skipped %v, want %v", got, want)
		}
		if _, err := e.c.Get(ctx, ok); !errors.Is(err, dtq.ErrNotFound) {
			t.Errorf("Get of a deleted task: %v, want ErrNotFound", err)
		}
		page, err := e.c.List(ctx, dtq.ListOpts{Queue: "default", Status: dtq.StatusSucceeded})
		if err != nil || len(page.Tasks) != 0 {
			t.Errorf("a deleted task is listed: %+v %v", page, err)
		}
		for _, id := range append(dead, queued) {
			if _, err := e.c.Get(ctx, id); err != nil {
				t.Errorf("a task delete skipped is gone: %v", err)
			}
		}

		// Requeue by filter: the dead letters of type fail, run again.
		res, err = e.a.Bulk(ctx, dtq.BulkRequest{Action: dtq.BulkRequeue, Filter: &dtq.BulkFilter{Queue: "default", Type: "fail"}, DryRun: true})
		if err != nil || res.Matched != 3 || res.Done != 0 {
			t.Fatalf("requeue dry run: %+v %v", res, err)
		}
		res, err = e.a.Bulk(ctx, dtq.BulkRequest{Action: dtq.BulkRequeue, Filter: &dtq.BulkFilter{Queue: "default", Type: "fail"}})
		if err != nil || res.Matched != 3 || res.Done != 3 {
			t.Fatalf("requeue: %+v %v", res, err)
		}
		for _, id := range dead {
			eventually(t, 10*time.Second, "a second run", func() bool {
				tk, err := e.c.Get(ctx, id)
				return err == nil && tk.Status == dtq.StatusDead && len(tk.History) == 2
			})
		}
		res, err = e.a.Bulk(ctx, dtq.BulkRequest{Action: dtq.BulkRequeue, IDs: []string{queued}})
		if err != nil || res.Done != 0 || skips(res)[queued] != dtq.SkipNotDead {
			t.Errorf("requeue of a queued task: %+v %v", res, err)
		}
		entries, err := e.a.Audit(ctx, 100)
		if err != nil {
			t.Fatal(err)
		}
		var actions []string
		for _, a := range entries {
			if strings.HasPrefix(a.Action, "bulk-") {
				actions = append(actions, a.Action)
			}
		}
		if !slices.Equal(actions, []string{"bulk-requeue", "bulk-requeue", "bulk-delete"}) {
			t.Errorf("audited %v", actions)
		}
	})
}

// A bad request is refused with the field it names, and changes nothing.
func TestBulkRefusesBadRequests(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		ctx := t.Context()
		id := e.enqueue("job", nil, &dtq.EnqueueOpts{Delay: time.Hour}).ID
		many := make([]string, dtq.MaxBulkIDs+1)
		for i := range many {
			many[i] = id + strings.Repeat("x", i%3)
		}
		for _, c := range []struct {
			r     dtq.BulkRequest
			field string
		}{
			{dtq.BulkRequest{Action: "purge", IDs: []string{id}}, "action"},
			{dtq.BulkRequest{Action: dtq.BulkCancel}, "ids"},
			{dtq.BulkRequest{Action: dtq.BulkCancel, IDs: []string{id}, Filter: &dtq.BulkFilter{Queue: "default"}}, "ids"},
			{dtq.BulkRequest{Action: dtq.BulkCancel, IDs: []string{id, id}}, "ids"},
			{dtq.BulkRequest{Action: dtq.BulkCancel, IDs: many}, "ids"},
			{dtq.BulkRequest{Action: dtq.BulkCancel, IDs: []string{id}, Rate: 0.01}, "rate"},
			{dtq.BulkRequest{Action: dtq.BulkCancel, IDs: []string{id}, Limit: dtq.MaxBulkLimit + 1}, "limit"},
			{dtq.BulkRequest{Action: dtq.BulkCancel, Filter: &dtq.BulkFilter{Queue: "bad queue"}}, "queue"},
			{dtq.BulkRequest{Action: dtq.BulkCancel, Filter: &dtq.BulkFilter{Queue: "default", Status: dtq.StatusSucceeded}}, "status"},
			{dtq.BulkRequest{Action: dtq.BulkRequeue, Filter: &dtq.BulkFilter{Queue: "default", Status: dtq.StatusQueued}}, "status"},
			{dtq.BulkRequest{Action: dtq.BulkDelete, Filter: &dtq.BulkFilter{Queue: "default", Status: dtq.StatusDead}}, "status"},
			{dtq.BulkRequest{Action: dtq.BulkDelete, Filter: &dtq.BulkFilter{Queue: "default", CreatedAfter: time.Now(), CreatedBefore: time.Now().Add(-time.Hour)}}, "created_before"},
		} {
			_, err := e.a.Bulk(ctx, c.r)
			var ve *dtq.ValidationError
			if !errors.As(err, &ve) || ve.Field != c.field {
				t.Errorf("%+v: %v, want a ValidationError of %s", c.r.Filter, err, c.field)
			}
		}
		if tk, _ := e.c.Get(ctx, id); tk.Status != dtq.StatusScheduled {
			t.Errorf("a refused bulk changed a task: %s", tk.Status)
		}
	})
}

func mapsEqual(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}
