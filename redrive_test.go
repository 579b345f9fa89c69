package dtq_test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dtq-dev/dtq"
	"github.com/dtq-dev/dtq/internal/store"
)

// A filtered redrive: a dry run counts first and changes nothing; the
// filters by type, error text and time pick the dead letters; a redrive
// requeues up to its limit (more reported), paced, audited, and only
// those.
func TestRedrive(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		ctx := t.Context()
		var fixed atomic.Bool
		e.worker(&dtq.WorkerConfig{Concurrency: 4}, map[string]dtq.HandlerFunc{
			"upload": func(context.Context, *dtq.Task) (any, error) {
				if fixed.Load() {
					return "ok", nil
				}
				return nil, dtq.Permanent(errors.New("Timeout talking to S3"))
			},
			"parse": func(context.Context, *dtq.Task) (any, error) { return nil, dtq.Permanent(errors.New("bad input")) },
		})
		before := time.Now().Add(-time.Second)
		var uploads []string
		for range 5 {
			uploads = append(uploads, e.enqueue("upload", nil, nil).ID)
		}
		parse := e.enqueue("parse", nil, nil).ID
		for _, id := range append(uploads, parse) {
			e.waitStatus(id, dtq.StatusDead, 10*time.Second)
		}
		q := dtq.RedriveFilter{Queue: "default"}
		for _, tc := range []struct {
			f    dtq.RedriveFilter
			want int
		}{
			{q, 6},
			{dtq.RedriveFilter{Queue: "default", Type: "upload"}, 5},
			{dtq.RedriveFilter{Queue: "default", ErrorContains: "timeout TALKING"}, 5},
			{dtq.RedriveFilter{Queue: "default", ErrorContains: "bad"}, 1},
			{dtq.RedriveFilter{Queue: "default", Type: "parse", ErrorContains: "S3"}, 0},
			{dtq.RedriveFilter{Queue: "default", Before: before}, 0},
			{dtq.RedriveFilter{Queue: "default", After: before}, 6},
			{dtq.RedriveFilter{Queue: "default", After: time.Now().Add(time.Hour)}, 0},
		} {
			res, err := e.a.Redrive(ctx, tc.f, dtq.RedriveOpts{DryRun: true})
			if err != nil || res.Matched != tc.want || res.Requeued != 0 || !res.DryRun || res.More {
				t.Errorf("dry run %+v: %+v %v, want %d matched", tc.f, res, err, tc.want)
			}
		}
		if st, _ := e.a.Stats(ctx, "default"); st.Dead != 6 {
			t.Fatalf("dry runs changed the dead letters: %d", st.Dead)
		}

		fixed.Store(true)
		f := dtq.RedriveFilter{Queue: "default", Type: "upload", ErrorContains: "s3"}
		res, err := e.a.Redrive(ctx, f, dtq.RedriveOpts{Limit: 3, Rate: 20})
		if err != nil || res.Matched != 3 || res.Requeued != 3 || !res.More {
			t.Fatalf("redrive of 3: %+v %v", res, err)
		}
		res, err = e.a.Redrive(ctx, f, dtq.RedriveOpts{})
		if err != nil || res.Matched != 2 || res.Requeued != 2 || res.More {
			t.Fatalf("redrive of the rest: %+v %v", res, err)
		}
		for _, id := range uploads {
			if got := e.waitStatus(id, dtq.StatusSucceeded, 10*time.Second); got.Attempt != 1 {
				t.Errorf("%s: attempt %d after the requeue", id, got.Attempt)
			}
		}
		if got, _ := e.c.Get(ctx, parse); got.Status != dtq.StatusDead {
			t.Fatalf("the parse task, filtered out, is %s", got.Status)
		}
		audit, err := e.a.Audit(ctx, 2)
		if err != nil || len(audit) != 2 || audit[0].Action != "redrive" || audit[1].Action != "redrive" {
			t.Fatalf("audit %+v %v", audit, err)
		}
		var ve *dtq.ValidationError
		for _, bad := range []struct {
			f dtq.RedriveFilter
			o dtq.RedriveOpts
		}{
			{dtq.RedriveFilter{Queue: "bad queue"}, dtq.RedriveOpts{}},
			{q, dtq.RedriveOpts{Limit: -1}},
			{q, dtq.RedriveOpts{Rate: 0.01}},
			{dtq.RedriveFilter{Queue: "default", After: time.Now(), Before: time.Now().Add(-time.Hour)}, dtq.RedriveOpts{}},
		} {
			if _, err := e.a.Redrive(ctx, bad.f, bad.o); !errors.As(err, &ve) {
				t.Errorf("redrive %+v %+v: %v, want a ValidationError", bad.f, bad.o, err)
			}
		}
	})
}

// deadLetter submits a task of typ and fails it for good through a lease:
// a dead letter of queue default.
func (e *env) deadLetter(typ string) string {
	e.t.Helper()
	id := e.enqueue(typ, nil, nil).ID
	l := e.lease(dtq.LeaseRequest{Worker: "w"}, 1)[0]
	if got, err := e.ls.FailLease(e.t.Context(), l.Token, dtq.LeaseFailure{Error: "bad input", Permanent: true}); err != nil ||
		got.ID != id || got.Status != dtq.StatusDead {
		e.t.Fatalf("fail %s for good: %+v %v", id, got, err)
	}
	return id
}

// audited counts the audit entries of action on task id.
func (e *env) audited(action, id string) int {
	e.t.Helper()
	audit, err := e.a.Audit(e.t.Context(), 100)
	if err != nil {
		e.t.Fatal(err)
	}
	n := 0
	for _, a := range audit {
		if a.Action == action && a.TaskID == id {
			n++
		}
	}
	return n
}

// Discard is idempotent: discarding a discarded dead letter again answers
// as the first discard did and changes nothing — the task is listed once
// and the discard audited once.
func TestDiscardAgainChangesNothing(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		ctx := t.Context()
		id := e.deadLetter("parse")
		for i := range 3 {
			if err := e.a.Discard(ctx, id); err != nil {
				t.Fatalf("discard %d: %v", i+1, err)
			}
		}
		page, err := e.c.List(ctx, dtq.ListOpts{Queue: "default"})
		if err != nil {
			t.Fatal(err)
		}
		listed := 0
		for _, task := range page.Tasks {
			if task.ID == id {
				listed++
			}
		}
		if listed != 1 || len(page.Tasks) != 1 {
			t.Errorf("List after 3 discards: %d tasks, %s %d times; want it once", len(page.Tasks), id, listed)
		}
		if n := e.audited("discard", id); n != 1 {
			t.Errorf("%d discards audited, want 1", n)
		}
		if got, err := e.c.Get(ctx, id); err != nil || got.Status != dtq.StatusDead {
			t.Errorf("the discarded task: %+v %v, want DEAD", got, err)
		}
	})
}

// A discarded dead letter is no longer in the dead-letter stream: Requeue
// of it is ErrNotDead, a redrive finds nothing, and it never runs again.
func TestRequeueOfADiscardedLetterIsNotDead(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		ctx := t.Context()
		id := e.deadLetter("parse")
		if err := e.a.Discard(ctx, id); err != nil {
			t.Fatal(err)
		}
		if got, err := e.a.Requeue(ctx, id); !errors.Is(err, dtq.ErrNotDead) {
			t.Fatalf("requeue of a discarded letter: %+v %v, want ErrNotDead", got, err)
		}
		if res, err := e.a.Redrive(ctx, dtq.RedriveFilter{Queue: "default"}, dtq.RedriveOpts{}); err != nil || res.Matched != 0 {
			t.Fatalf("redrive after the discard: %+v %v, want nothing matched", res, err)
		}
		if got, err := e.c.Get(ctx, id); err != nil || got.Status != dtq.StatusDead || got.Attempt != 1 {
			t.Fatalf("the discarded task: %+v %v, want DEAD, attempt 1", got, err)
		}
		if ls, err := e.ls.Lease(ctx, dtq.LeaseRequest{Worker: "w"}); err != nil || len(ls) != 0 {
			t.Fatalf("a lease after the requeue: %d %v, want none", len(ls), err)
		}
		if n := e.audited("requeue", id); n != 0 {
			t.Errorf("%d requeues audited, want none", n)
		}
	})
}

// A dead-letter entry whose task is gone is no dead letter: a redrive
// requeues the others and drops it from the stream.
func TestRedriveDropsEntriesOfGoneTasks(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		ctx := t.Context()
		gone, kept := e.deadLetter("parse"), e.deadLetter("parse")
		_, ulid, _ := strings.Cut(gone, "default-")
		if err := e.Client.Do(ctx, e.Client.B().Del().Key(store.NewKeys(e.Namespace, "default").Task(ulid)).Build()).Error(); err != nil {
			t.Fatal(err)
		}
		res, err := e.a.Redrive(ctx, dtq.RedriveFilter{Queue: "default"}, dtq.RedriveOpts{})
		if err != nil || res.Matched != 2 || res.Requeued != 1 {
			t.Fatalf("redrive: %+v %v, want 2 matched, 1 requeued", res, err)
		}
		if got, err := e.c.Get(ctx, kept); err != nil || got.Status != dtq.StatusQueued {
			t.Fatalf("the kept letter: %+v %v, want QUEUED", got, err)
		}
		if st, err := e.a.Stats(ctx, "default"); err != nil || st.Dead != 0 {
			t.Fatalf("stats after the redrive: %+v %v, want no dead letter left", st, err)
		}
	})
}
