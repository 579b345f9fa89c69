package dtq_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dtq-dev/dtq"
	"github.com/dtq-dev/dtq/internal/redisconn"
)

func fast(cfg dtq.WorkerConfig) *dtq.WorkerConfig {
	if cfg.BackoffBase == 0 {
		cfg.BackoffBase, cfg.BackoffMax = time.Millisecond, 5*time.Millisecond
	}
	return &cfg
}

// A retryable failure is retried after its backoff, and then succeeds; the
// history records every execution.
func TestRetryThenSucceed(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		e.worker(fast(dtq.WorkerConfig{}), map[string]dtq.HandlerFunc{
			"flaky": func(ctx context.Context, task *dtq.Task) (any, error) {
				if task.Attempt < 3 {
					return nil, dtq.RetryAfter(200*time.Millisecond, errors.New("not yet"))
				}
				return "ok", nil
			},
		})
		task := e.enqueue("flaky", nil, nil)
		done := e.waitStatus(task.ID, dtq.StatusSucceeded, 10*time.Second)
		if done.Attempt != 3 || len(done.History) != 3 {
			t.Fatalf("attempt %d, history %+v", done.Attempt, done.History)
		}
		for i, want := range []dtq.Outcome{dtq.OutcomeRetried, dtq.OutcomeRetried, dtq.OutcomeSucceeded} {
			if done.History[i].Outcome != want {
				t.Fatalf("history[%d] = %+v, want outcome %s", i, done.History[i], want)
			}
		}
		for i := 1; i < 3; i++ { // the retry delay, on the Redis clock
			if gap := done.History[i].StartedAt.Sub(done.History[i-1].FinishedAt); gap < 200*time.Millisecond {
				t.Fatalf("execution %d started %v after the previous failure, before its 200ms delay", i+1, gap)
			}
		}
		if done.History[0].Error != "not yet" || done.LastError != "not yet" {
			t.Fatalf("errors: %+v / %q", done.History[0], done.LastError)
		}
	})
}

// A permanent error sends the task to the dead-letter stream at once.
func TestPermanentErrorGoesDeadAtOnce(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		e.worker(fast(dtq.WorkerConfig{}), map[string]dtq.HandlerFunc{
			"bad": func(context.Context, *dtq.Task) (any, error) {
				return nil, dtq.Permanent(errors.New("payload is nonsense"))
			},
		})
		task := e.enqueue("bad", nil, &dtq.EnqueueOpts{MaxAttempts: 5})
		dead := e.waitStatus(task.ID, dtq.StatusDead, 10*time.Second)
		if dead.Attempt != 1 || len(dead.History) != 1 || dead.History[0].Outcome != dtq.OutcomeDead {
			t.Fatalf("attempt %d history %+v", dead.Attempt, dead.History)
		}
		letters, _, err := e.a.ListDead(t.Context(), "default", 10, "")
		if err != nil || len(letters) != 1 || letters[0].Task.ID != task.ID || letters[0].Reason != "payload is nonsense" {
			t.Fatalf("dead letters %+v (%v)", letters, err)
		}
	})
}

// Retryable failures go DEAD once attempts run out; requeue runs the task
// again with its history kept.
func TestMaxAttemptsThenRequeue(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		var fail atomic.Bool
		fail.Store(true)
		e.worker(fast(dtq.WorkerConfig{}), map[string]dtq.HandlerFunc{
			"maybe": func(context.Context, *dtq.Task) (any, error) {
				if fail.Load() {
					return nil, errors.New("boom")
				}
				return "fine", nil
			},
		})
		task := e.enqueue("maybe", nil, &dtq.EnqueueOpts{MaxAttempts: 3})
		dead := e.waitStatus(task.ID, dtq.StatusDead, 10*time.Second)
		if dead.Attempt != 3 || len(dead.History) != 3 || dead.History[2].Outcome != dtq.OutcomeDead {
			t.Fatalf("attempt %d history %+v", dead.Attempt, dead.History)
		}
		st, _ := e.a.Stats(t.Context(), "default")
		if st.Dead != 1 || st.Running != 0 || st.Queued != 0 {
			t.Fatalf("stats %+v", st)
		}
		fail.Store(false)
		if _, err := e.a.Requeue(t.Context(), task.ID); err != nil {
			t.Fatal(err)
		}
		done := e.waitStatus(task.ID, dtq.StatusSucceeded, 10*time.Second)
		if done.Attempt != 1 || len(done.History) != 4 || done.History[3].Outcome != dtq.OutcomeSucceeded {
			t.Fatalf("after requeue: attempt %d history %+v", done.Attempt, done.History)
		}
		if _, err := e.a.Requeue(t.Context(), task.ID); !errors.Is(err, dtq.ErrNotDead) {
			t.Fatalf("requeue of a succeeded task: %v, want ErrNotDead", err)
		}
		audit, _ := e.a.Audit(t.Context(), 10)
		if len(audit) == 0 || audit[0].Action != "requeue" || audit[0].TaskID != task.ID {
			t.Fatalf("audit %+v", audit)
		}
	})
}

// A task of a type the worker has no handler for is not its to run
// (CONTRACT 3.3.1c): it stays QUEUED, untouched, for a worker that runs
// its type, and the worker keeps working.
func TestTaskOfAnotherTypeWaitsForItsWorker(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		e.worker(nil, map[string]dtq.HandlerFunc{"known": func(context.Context, *dtq.Task) (any, error) { return 1, nil }})
		unknown := e.enqueue("mystery", nil, nil)
		known := e.enqueue("known", nil, nil)
		e.waitStatus(known.ID, dtq.StatusSucceeded, 10*time.Second)
		time.Sleep(300 * time.Millisecond) // (a chance to run it: it must not)
		got, err := e.c.Get(t.Context(), unknown.ID)
		if err != nil || got.Status != dtq.StatusQueued || got.Attempt != 0 || got.LastError != "" {
			t.Fatalf("the task of another type: %+v %v, want QUEUED, never run", got, err)
		}
		// A worker that runs its type does.
		e.worker(nil, map[string]dtq.HandlerFunc{"mystery": func(context.Context, *dtq.Task) (any, error) { return 2, nil }})
		e.waitStatus(unknown.ID, dtq.StatusSucceeded, 10*time.Second)
	})
}

// Panics and timeouts are failures; with one attempt they go DEAD.
func TestPanicAndTimeoutAreFailures(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		e.worker(fast(dtq.WorkerConfig{}), map[string]dtq.HandlerFunc{
			"panics": func(context.Context, *dtq.Task) (any, error) { panic("kaboom") },
			"slow": func(ctx context.Context, _ *dtq.Task) (any, error) {
				<-ctx.Done()
				return nil, ctx.Err()
			},
		})
		p := e.enqueue("panics", nil, &dtq.EnqueueOpts{MaxAttempts: 1})
		s := e.enqueue("slow", nil, &dtq.EnqueueOpts{MaxAttempts: 1, Timeout: 50 * time.Millisecond})
		if got := e.waitStatus(p.ID, dtq.StatusDead, 10*time.Second); !strings.Contains(got.LastError, "handler panicked: kaboom") {
			t.Fatalf("panic error %q", got.LastError)
		}
		if got := e.waitStatus(s.ID, dtq.StatusDead, 10*time.Second); !strings.Contains(got.LastError, "timed out after 50ms") {
			t.Fatalf("timeout error %q", got.LastError)
		}
	})
}

// A queued task is cancelled at once and never runs; a running task's
// handler is cancelled and the task ends CANCELLED.
func TestCancel(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		if err := e.a.PauseQueue(t.Context(), "default"); err != nil {
			t.Fatal(err)
		}
		var ranQueued atomic.Bool
		started := make(chan string, 1)
		e.worker(nil, map[string]dtq.HandlerFunc{
			"never": func(context.Context, *dtq.Task) (any, error) { ranQueued.Store(true); return nil, nil },
			"long": func(ctx context.Context, task *dtq.Task) (any, error) {
				started <- task.ID
				<-ctx.Done()
				if !errors.Is(context.Cause(ctx), dtq.ErrCancelled) {
					return nil, errors.New("cancelled for the wrong reason")
				}
				return nil, ctx.Err()
			},
		})
		queued := e.enqueue("never", nil, nil)
		got, err := e.c.Cancel(t.Context(), queued.ID)
		if err != nil || got.Status != dtq.StatusCancelled {
			t.Fatalf("cancel queued: %+v, %v", got, err)
		}
		if err := e.a.ResumeQueue(t.Context(), "default"); err != nil {
			t.Fatal(err)
		}
		running := e.enqueue("long", nil, nil)
		select {
		case <-started:
		case <-time.After(10 * time.Second):
			t.Fatal("long task never started")
		}
		got, err = e.c.Cancel(t.Context(), running.ID)
		// The worker may finish cancelling before Cancel reads the task back.
		if err != nil || (got.Status != dtq.StatusRunning && got.Status != dtq.StatusCancelled) ||
			got.CancelRequested != (got.Status == dtq.StatusRunning) {
			t.Fatalf("cancel running: %+v, %v", got, err)
		}
		done := e.waitStatus(running.ID, dtq.StatusCancelled, 10*time.Second)
		if done.History[0].Outcome != dtq.OutcomeCancelled || done.CancelRequested {
			t.Fatalf("history %+v, cancel requested %v", done.History, done.CancelRequested)
		}
		if ranQueued.Load() {
			t.Fatal("a cancelled queued task ran")
		}
		if _, err := e.c.Cancel(t.Context(), done.ID); err != nil {
			t.Fatalf("cancel of a cancelled task: %v", err)
		}
		if _, err := e.c.Cancel(t.Context(), "default-01ARZ3NDEKTSV4RRFFQ69G5FAV"); !errors.Is(err, dtq.ErrNotFound) {
			t.Fatalf("cancel of an unknown task: %v", err)
		}
	})
}

// A running task cancelled whose handler ignores its context and returns
// a result ends CANCELLED; its error says "cancelled" and the result is
// kept as its result, never as its error.
func TestCancelledHandlerResultIsNoError(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		started, finish := make(chan struct{}), make(chan struct{})
		e.worker(nil, map[string]dtq.HandlerFunc{
			"stubborn": func(ctx context.Context, task *dtq.Task) (any, error) {
				close(started)
				<-finish // ignores ctx
				return map[string]int{"done": 1}, nil
			},
		})
		task := e.enqueue("stubborn", nil, nil)
		select {
		case <-started:
		case <-time.After(10 * time.Second):
			t.Fatal("the task never started")
		}
		if _, err := e.c.Cancel(t.Context(), task.ID); err != nil {
			t.Fatal(err)
		}
		close(finish)
		done := e.waitStatus(task.ID, dtq.StatusCancelled, 10*time.Second)
		if done.LastError != "cancelled" || done.History[0].Error != "cancelled" || string(done.Result) != `{"done":1}` {
			t.Fatalf("error %q, history %+v, result %s: want error \"cancelled\", the result as result", done.LastError, done.History, done.Result)
		}
	})
}

// Idempotent submission: 100 concurrent submits with one key create one
// task; a different request with the key is a conflict.
func TestIdempotencyUnderConcurrency(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		opts := &dtq.EnqueueOpts{IdempotencyKey: "order-42"}
		var wg sync.WaitGroup
		results := make([]*dtq.EnqueueResult, 100)
		errs := make([]error, 100)
		for i := range 100 {
			wg.Go(func() {
				results[i], errs[i] = e.c.Enqueue(t.Context(), "charge", map[string]int{"cents": 4200}, opts)
			})
		}
		wg.Wait()
		created, ids := 0, map[string]bool{}
		for i := range 100 {
			if errs[i] != nil {
				t.Fatal(errs[i])
			}
			ids[results[i].Task.ID] = true
			if !results[i].Duplicate {
				created++
			}
		}
		if created != 1 || len(ids) != 1 {
			t.Fatalf("%d created, %d distinct ids; want 1 and 1", created, len(ids))
		}
		page, err := e.c.List(t.Context(), dtq.ListOpts{Queue: "default"})
		if err != nil || len(page.Tasks) != 1 {
			t.Fatalf("tasks in the queue: %d (%v), want 1", len(page.Tasks), err)
		}
		_, err = e.c.Enqueue(t.Context(), "charge", map[string]int{"cents": 9999}, opts)
		var conflict *dtq.IdempotencyConflictError
		if !errors.As(err, &conflict) || !ids[conflict.TaskID] {
			t.Fatalf("different payload, same key: %v, want an IdempotencyConflictError naming the original", err)
		}
	})
}

// Admission control: a full queue and an oversized payload are typed errors.
func TestAdmissionControl(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		c, err := dtq.NewClient(redisconn.Wrap(e.Client), &dtq.Config{Namespace: e.Namespace, MaxDepth: 2, MaxPayloadBytes: 64})
		if err != nil {
			t.Fatal(err)
		}
		for range 2 {
			if _, err := c.Enqueue(t.Context(), "x", nil, nil); err != nil {
				t.Fatal(err)
			}
		}
		_, err = c.Enqueue(t.Context(), "x", nil, &dtq.EnqueueOpts{Delay: time.Hour})
		var full *dtq.QueueFullError
		if !errors.As(err, &full) || full.RetryAfter <= 0 || !errors.Is(err, dtq.ErrQueueFull) {
			t.Fatalf("third enqueue: %v, want a QueueFullError with a retry-after hint", err)
		}
		_, err = c.Enqueue(t.Context(), "x", strings.Repeat("a", 100), &dtq.EnqueueOpts{Queue: "other"})
		var big *dtq.TooLargeError
		if !errors.As(err, &big) || big.Limit != 64 {
			t.Fatalf("large payload: %v, want a TooLargeError", err)
		}
		st, _ := dtq.NewAdmin(c).Stats(t.Context(), "default")
		if st.Queued != 2 {
			t.Fatalf("queued %d, want 2", st.Queued)
		}
	})
}

// Finished tasks leave the depth at once: their band entries, acknowledged
// and trimmed later in bulk, do not hold the queue full meanwhile (a queue
// capped at 3 takes new tasks right after 3 have succeeded, also after
// retries, whose earlier entries are left behind too).
func TestFinishedTasksLeaveDepth(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		c, err := dtq.NewClient(redisconn.Wrap(e.Client), &dtq.Config{Namespace: e.Namespace, MaxDepth: 3})
		if err != nil {
			t.Fatal(err)
		}
		var runs atomic.Int32
		e.worker(fast(dtq.WorkerConfig{Concurrency: 4}), map[string]dtq.HandlerFunc{
			"x": func(context.Context, *dtq.Task) (any, error) {
				if runs.Add(1) <= 2 {
					return nil, errors.New("flaky") // two retries
				}
				return nil, nil
			},
		})
		for round := range 4 {
			var ids []string
			for range 3 {
				task, err := c.Enqueue(t.Context(), "x", nil, nil)
				if err != nil {
					t.Fatalf("round %d: %v (3 tasks of a queue capped at 3, the earlier ones finished)", round, err)
				}
				ids = append(ids, task.Task.ID)
			}
			for _, id := range ids {
				e.waitStatus(id, dtq.StatusSucceeded, 20*time.Second)
			}
		}
	})
}

// A redrive of a queue's every dead letter requeues those there when it
// starts, once each, even while a worker sends them straight back (a loop
// over "whatever is in the stream" would requeue them again and again);
// Purge empties it.
func TestRedriveAllThenPurge(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		const n = 600 // more than one batch of dlq.lua
		reqs := make([]dtq.EnqueueRequest, n)
		for i := range reqs {
			reqs[i] = dtq.EnqueueRequest{Type: "doomed", Opts: &dtq.EnqueueOpts{MaxAttempts: 1}}
		}
		if _, err := e.c.EnqueueMany(t.Context(), reqs); err != nil {
			t.Fatal(err)
		}
		e.worker(fast(dtq.WorkerConfig{Concurrency: 50}), map[string]dtq.HandlerFunc{
			"doomed": func(context.Context, *dtq.Task) (any, error) { return nil, dtq.Permanent(errors.New("no")) },
		})
		eventually(t, 20*time.Second, "all dead", func() bool {
			st, err := e.a.Stats(t.Context(), "default")
			return err == nil && st.Dead == n
		})
		res, err := e.a.Redrive(t.Context(), dtq.RedriveFilter{Queue: "default"},
			dtq.RedriveOpts{Limit: dtq.MaxRedriveLimit, Rate: dtq.MaxRedriveRate})
		if err != nil || res.Requeued != n || res.Matched != n || res.More {
			t.Fatalf("Redrive = %+v, %v; want %d requeued", res, err, n)
		}
		eventually(t, 20*time.Second, "all dead again", func() bool {
			st, err := e.a.Stats(t.Context(), "default")
			return err == nil && st.Dead == n
		})
		if got, err := e.a.Purge(t.Context(), "default"); err != nil || got != n {
			t.Fatalf("Purge = %d, %v; want %d", got, err, n)
		}
		letters, _, err := e.a.ListDead(t.Context(), "default", 10, "")
		if err != nil || len(letters) != 0 {
			t.Fatalf("after purge: %d letters (%v)", len(letters), err)
		}
	})
}
