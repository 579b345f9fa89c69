package dtq_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/dtq-dev/dtq"
)

// RunNow runs a delayed task, a task waiting out its retry's backoff, a
// sleeping one and a debounced one at once; anything not in the schedule
// is ErrNotScheduled and unchanged; each run-now is audited.
func TestRunNow(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		ctx := t.Context()
		ran := make(chan string, 16)
		e.worker(&dtq.WorkerConfig{Queues: []string{"now"}}, map[string]dtq.HandlerFunc{
			"job": func(_ context.Context, tk *dtq.Task) (any, error) { ran <- tk.ID; return nil, nil },
			"flaky": func(_ context.Context, tk *dtq.Task) (any, error) {
				if tk.Attempt == 1 {
					return nil, dtq.RetryAfter(time.Hour, errors.New("later"))
				}
				ran <- tk.ID
				return nil, nil
			},
			"nap": func(ctx context.Context, tk *dtq.Task) (any, error) {
				if err := dtq.Sleep(ctx, "nap", time.Hour); err != nil {
					return nil, err
				}
				ran <- tk.ID
				return nil, nil
			},
		})
		in := func(opts *dtq.EnqueueOpts) *dtq.EnqueueOpts { opts.Queue = "now"; return opts }
		runs := func(id string) {
			t.Helper()
			select {
			case got := <-ran:
				if got != id {
					t.Fatalf("ran %s, want %s", got, id)
				}
			case <-time.After(10 * time.Second):
				t.Fatalf("%s did not run", id)
			}
		}

		delayed := e.enqueue("job", nil, in(&dtq.EnqueueOpts{Delay: time.Hour}))
		if tk, err := e.a.RunNow(ctx, delayed.ID); err != nil || tk.Status != dtq.StatusQueued && tk.Status != dtq.StatusRunning {
			t.Fatalf("run now of a delayed task: %+v %v", tk, err)
		}
		runs(delayed.ID)
		e.waitStatus(delayed.ID, dtq.StatusSucceeded, 10*time.Second)
		if _, err := e.a.RunNow(ctx, delayed.ID); !errors.Is(err, dtq.ErrNotScheduled) {
			t.Errorf("run now of a SUCCEEDED task: %v, want ErrNotScheduled", err)
		}

		retrying := e.enqueue("flaky", nil, in(&dtq.EnqueueOpts{}))
		e.waitStatus(retrying.ID, dtq.StatusScheduled, 10*time.Second)
		if _, err := e.a.RunNow(ctx, retrying.ID); err != nil {
			t.Fatal(err)
		}
		runs(retrying.ID)
		if tk := e.waitStatus(retrying.ID, dtq.StatusSucceeded, 10*time.Second); tk.Attempt != 2 {
			t.Errorf("retried at once: attempt %d, want 2", tk.Attempt)
		}

		sleeping := e.enqueue("nap", nil, in(&dtq.EnqueueOpts{}))
		e.waitStatus(sleeping.ID, dtq.StatusScheduled, 10*time.Second)
		if _, err := e.a.RunNow(ctx, sleeping.ID); err != nil {
			t.Fatal(err)
		}
		runs(sleeping.ID)
		e.waitStatus(sleeping.ID, dtq.StatusSucceeded, 10*time.Second)

		deb := &dtq.DebounceOpts{Key: "k", Period: time.Hour}
		first := e.enqueue("job", "a", in(&dtq.EnqueueOpts{Debounce: deb}))
		if _, err := e.a.RunNow(ctx, first.ID); err != nil {
			t.Fatal(err)
		}
		runs(first.ID)
		// The debounce key's next submission makes a new task.
		if next := e.enqueue("job", "b", in(&dtq.EnqueueOpts{Debounce: deb})); next.ID == first.ID || next.Status != dtq.StatusScheduled {
			t.Errorf("a submission after the run-now: %+v, want a new SCHEDULED task", next)
		}

		// Not in the schedule: QUEUED (paused queue), CANCELLED, unknown.
		if err := e.a.PauseQueue(ctx, "held"); err != nil {
			t.Fatal(err)
		}
		queued := e.enqueue("job", nil, &dtq.EnqueueOpts{Queue: "held"})
		if _, err := e.a.RunNow(ctx, queued.ID); !errors.Is(err, dtq.ErrNotScheduled) {
			t.Errorf("run now of a QUEUED task: %v, want ErrNotScheduled", err)
		}
		cancelled := e.enqueue("job", nil, &dtq.EnqueueOpts{Queue: "held", Delay: time.Hour})
		if _, err := e.c.Cancel(ctx, cancelled.ID); err != nil {
			t.Fatal(err)
		}
		if _, err := e.a.RunNow(ctx, cancelled.ID); !errors.Is(err, dtq.ErrNotScheduled) {
			t.Errorf("run now of a CANCELLED task: %v, want ErrNotScheduled", err)
		}
		if tk, _ := e.c.Get(ctx, cancelled.ID); tk.Status != dtq.StatusCancelled {
			t.Errorf("a refused run-now changed the task: %s", tk.Status)
		}
		for _, id := range []string{"held-01ARZ3NDEKTSV4RRFFQ69G5FAV", "no id"} {
			if _, err := e.a.RunNow(ctx, id); !errors.Is(err, dtq.ErrNotFound) {
				t.Errorf("run now of %q: %v, want ErrNotFound", id, err)
			}
		}
		entries, err := e.a.Audit(ctx, 100)
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, a := range entries {
			if a.Action == "run-now" {
				n++
			}
		}
		if n != 4 {
			t.Errorf("%d run-now audit entries, want 4", n)
		}
	})
}
