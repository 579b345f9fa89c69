package dtq_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/dtq-dev/dtq"
	"github.com/dtq-dev/dtq/internal/store"
)

// keysOf lists the keys of queue in Redis.
func (e *env) keysOf(queue string) []string {
	e.t.Helper()
	ks, err := e.Client.Do(e.t.Context(), e.Client.B().Keys().Pattern(e.Namespace+":{"+queue+"}:*").Build()).AsStrSlice()
	if err != nil {
		e.t.Fatal(err)
	}
	slices.Sort(ks)
	return ks
}

// A queue that holds work is not deleted without Force; with it, nothing of
// the queue is left in Redis — task hashes, finished records, dead letters,
// schedules, unique locks, debounced tasks and idempotency records included — and a new
// submission with an old idempotency key makes a new task.
func TestDeleteQueue(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		ctx := t.Context()
		const q = "doomed"
		done := e.enqueue("ok", nil, &dtq.EnqueueOpts{Queue: q, IdempotencyKey: "k1"})
		dead := e.enqueue("bad", nil, &dtq.EnqueueOpts{Queue: q, MaxAttempts: 1})
		w := e.worker(&dtq.WorkerConfig{Queues: []string{q}}, map[string]dtq.HandlerFunc{
			"ok":  func(context.Context, *dtq.Task) (any, error) { return "r", nil },
			"bad": func(context.Context, *dtq.Task) (any, error) { return nil, errors.New("no") },
			"nap": func(ctx context.Context, _ *dtq.Task) (any, error) { // suspended, with step records
				if _, err := dtq.Step(ctx, "one", func(context.Context) (int, error) { return 1, nil }); err != nil {
					return nil, err
				}
				return nil, dtq.Sleep(ctx, "nap", time.Hour)
			},
		})
		napping := e.enqueue("nap", nil, &dtq.EnqueueOpts{Queue: q})
		e.waitStatus(napping.ID, dtq.StatusScheduled, 10*time.Second)
		e.waitStatus(done.ID, dtq.StatusSucceeded, 10*time.Second)
		e.waitStatus(dead.ID, dtq.StatusDead, 10*time.Second)
		finished, err := e.c.EnqueueWorkflow(ctx, dtq.Chain(dtq.Call("ok", nil, nil)), &dtq.WorkflowOpts{Queue: q})
		if err != nil {
			t.Fatal(err)
		}
		e.waitWorkflow(finished.ID, 10*time.Second)
		if err := w.Stop(ctx); err != nil {
			t.Fatal(err)
		}
		waiting, err := e.c.EnqueueWorkflow(ctx, dtq.Chain(dtq.Call("ok", nil, nil), dtq.Call("ok", nil, nil)), &dtq.WorkflowOpts{Queue: q})
		if err != nil {
			t.Fatal(err)
		}
		later := e.enqueue("ok", nil, &dtq.EnqueueOpts{Queue: q, Delay: time.Hour, IdempotencyKey: "k2"})
		e.enqueue("ok", nil, &dtq.EnqueueOpts{Queue: q, Unique: &dtq.UniqueOpts{Key: "u"}})
		e.enqueue("ok", nil, &dtq.EnqueueOpts{Queue: q, Debounce: &dtq.DebounceOpts{Key: "d", Period: time.Hour}})
		if _, err := dtq.NewAdmin(e.c).UpsertSchedule(ctx, dtq.Schedule{Name: "nightly", Queue: q, Cron: "@daily", TaskType: "ok"}); err != nil {
			t.Fatal(err)
		}
		if err := dtq.NewAdmin(e.c).PauseQueue(ctx, q); err != nil {
			t.Fatal(err)
		}

		_, err = dtq.NewAdmin(e.c).DeleteQueue(ctx, q, nil)
		var ne *dtq.QueueNotEmptyError
		if !errors.As(err, &ne) || !errors.Is(err, dtq.ErrQueueNotEmpty) || ne.Queued != 2 || ne.Scheduled != 3 || ne.Dead != 1 || ne.Running != 0 {
			t.Fatalf("DeleteQueue without Force: %v (%+v)", err, ne)
		}
		if _, err := e.c.Get(ctx, later.ID); err != nil {
			t.Fatalf("a refused delete deleted: %v", err)
		}

		got, err := dtq.NewAdmin(e.c).DeleteQueue(ctx, q, &dtq.DeleteQueueOpts{Force: true})
		if err != nil || got.Queued != 2 || got.Scheduled != 3 || got.Dead != 1 {
			t.Fatalf("DeleteQueue with Force: %+v, %v", got, err)
		}
		if ks := e.keysOf(q); len(ks) != 0 {
			t.Fatalf("left in Redis after DeleteQueue: %v", ks)
		}
		for _, id := range []string{done.ID, dead.ID, later.ID, napping.ID} {
			if _, err := e.c.Get(ctx, id); !errors.Is(err, dtq.ErrNotFound) {
				t.Fatalf("Get(%s) after delete: %v", id, err)
			}
		}
		for _, id := range []string{finished.ID, waiting.ID} {
			if _, err := e.c.GetWorkflow(ctx, id); !errors.Is(err, dtq.ErrWorkflowNotFound) {
				t.Fatalf("GetWorkflow(%s) after delete: %v", id, err)
			}
		}
		qs, err := dtq.NewAdmin(e.c).Queues(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range qs {
			if s.Name == q {
				t.Fatalf("Queues still lists %q", q)
			}
		}
		audit, err := dtq.NewAdmin(e.c).Audit(ctx, 1)
		if err != nil || len(audit) != 1 || audit[0].Action != "queue-delete" || audit[0].Queue != q || !strings.Contains(audit[0].Detail, "force") {
			t.Fatalf("audit %+v, %v", audit, err)
		}
		// Deleting what does not exist is no error.
		if _, err := dtq.NewAdmin(e.c).DeleteQueue(ctx, q, nil); err != nil {
			t.Fatalf("deleting a deleted queue: %v", err)
		}

		// The queue is made again by a submission; old keys answer nothing.
		res, err := e.c.Enqueue(ctx, "ok", nil, &dtq.EnqueueOpts{Queue: q, IdempotencyKey: "k1"})
		if err != nil || res.Duplicate || res.Task.ID == done.ID {
			t.Fatalf("resubmitted k1: %+v, %v", res, err)
		}
		st, err := dtq.NewAdmin(e.c).Stats(ctx, q)
		if err != nil || st.Queued != 1 || st.Paused || st.Succeeded != 0 || st.Scheduled != 0 || st.Dead != 0 {
			t.Fatalf("stats of the queue made again: %+v, %v", st, err)
		}
		if qs, _ := dtq.NewAdmin(e.c).Queues(ctx); !slices.ContainsFunc(qs, func(s *dtq.QueueStats) bool { return s.Name == q }) {
			t.Fatal("the queue made again is not listed")
		}
	})
}

// Force deletes a queue under a running task: the handler's context ends
// (its lease is gone) and its outcome writes nothing back.
func TestDeleteQueueUnderARunningTask(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		ctx := t.Context()
		const q = "busy"
		started, ended := make(chan struct{}), make(chan error, 1)
		e.worker(&dtq.WorkerConfig{Queues: []string{q}, VisibilityTimeout: time.Second}, map[string]dtq.HandlerFunc{
			"long": func(ctx context.Context, _ *dtq.Task) (any, error) {
				close(started)
				<-ctx.Done()
				ended <- context.Cause(ctx)
				return "late", nil
			},
		})
		task := e.enqueue("long", nil, &dtq.EnqueueOpts{Queue: q})
		<-started
		if _, err := dtq.NewAdmin(e.c).DeleteQueue(ctx, q, nil); !errors.Is(err, dtq.ErrQueueNotEmpty) {
			t.Fatalf("without Force: %v", err)
		}
		got, err := dtq.NewAdmin(e.c).DeleteQueue(ctx, q, &dtq.DeleteQueueOpts{Force: true})
		if err != nil || got.Running != 1 {
			t.Fatalf("DeleteQueue: %+v, %v", got, err)
		}
		select {
		case cause := <-ended:
			if !errors.Is(cause, dtq.ErrRunLost) {
				t.Fatalf("handler's context ended with %v, want ErrRunLost", cause)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("the handler's context did not end")
		}
		if _, err := e.c.Get(ctx, task.ID); !errors.Is(err, dtq.ErrNotFound) {
			t.Fatalf("Get after delete: %v", err)
		}
		// Nothing but the worker's own (empty) bands comes back.
		time.Sleep(200 * time.Millisecond)
		for _, k := range e.keysOf(q) {
			if !strings.Contains(k, ":band:") && k != store.NewKeys(e.Namespace, q).Info() {
				t.Fatalf("after the handler returned: key %s", k)
			}
		}
		if st, err := dtq.NewAdmin(e.c).Stats(ctx, q); err != nil || st.Running+st.Queued+st.Succeeded != 0 {
			t.Fatalf("stats: %+v, %v", st, err)
		}
	})
}
