package dtq

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"time"

	"github.com/dtq-dev/dtq/internal/backoff"
	"github.com/dtq-dev/dtq/internal/claim"
	"github.com/dtq-dev/dtq/internal/store"
	"go.opentelemetry.io/otel/trace"
)

// execution is a task running on this worker.
type execution struct {
	task   *Task
	queue  *workerQueue
	cancel context.CancelCauseFunc
	steps  runSteps // its task's durable steps (step_run.go)

	span     trace.SpanContext // of its dtq.run span (the submission's when not recorded)
	recorded bool              // whether that span records (logger)
}

// logger returns l with the attributes that tie a log line about the
// execution to its trace: trace_id, and span_id — its dtq.run span's —
// when that span was recorded (one that was not, with no tracer provider,
// carries the submission's trace: the task's). l itself when neither has a
// trace, so an untraced execution costs nothing.
func (ex *execution) logger(l *slog.Logger) *slog.Logger {
	sc := ex.span
	switch {
	case !sc.IsValid():
		return l
	case !ex.recorded:
		return l.With(logTraceID, sc.TraceID().String())
	}
	return l.With(logTraceID, sc.TraceID().String(), logSpanID, sc.SpanID().String())
}

type ctxKey struct{}

// taskContext is what a handler's context carries (see TaskFromContext).
type taskContext struct {
	task   *Task
	client *Client
	steps  *runSteps
}

// TaskFromContext returns the task a handler's context belongs to.
func TaskFromContext(ctx context.Context) (*Task, bool) {
	tc, ok := ctx.Value(ctxKey{}).(*taskContext)
	if !ok {
		return nil, false
	}
	return tc.task, true
}

// launch runs t on its own goroutine. It holds one execution slot while the
// handler runs; recording the outcome then holds one of as many recording
// tokens instead, so that a new task can start meanwhile, while a slow
// Redis still throttles claiming (the slot is only freed once a token is
// taken). The task stays renewed until its outcome is recorded.
// A leased task (of a queue with a concurrency limit) gives its lease back
// once its outcome is recorded.
func (w *Worker) launch(wq *workerQueue, t *Task, leased bool) {
	ctx, cancel := context.WithCancelCause(w.runBase)
	ctx, span := w.c.startRunSpan(ctx, t, time.Time{})
	ex := &execution{task: t, queue: wq, cancel: cancel, span: span.SpanContext(), recorded: span.IsRecording()}
	w.mu.Lock()
	w.running[t.ID] = ex
	w.mu.Unlock()
	w.runs.Go(func() {
		defer func() {
			w.mu.Lock()
			delete(w.running, t.ID)
			w.mu.Unlock()
			cancel(nil)
		}()
		obs := w.c.obs
		handler := wq.reader.TakeHandler(ctx) // (claimed ahead: wait for a handler slot)
		began := time.Now()
		var item store.FinishItem
		confirmErr := w.confirmClaim(ctx, ex)
		record := false
		if confirmErr == nil {
			if w.log.Enabled(ctx, slog.LevelDebug) {
				ex.logger(w.log).Debug("task started", logTaskID, t.ID, logQueue, t.Queue, logTaskType, t.Type, "attempt", t.Attempt)
			}
			item, record = w.execute(ctx, ex)
		}
		ran := time.Since(began)
		if handler {
			wq.reader.HandlerDone(ran)
		}
		ref := TaskRef{ID: t.ID, Queue: wq.q.name, Type: t.Type}
		if leased {
			defer wq.reader.ReleaseLease(context.WithoutCancel(ctx))
		}
		if !record {
			endRunSpan(span, "", "")
			wq.reader.Slots.Release(1)
			if confirmErr != nil {
				ex.logger(w.log).Info("claimed task not run: it may have been taken over while this worker stalled",
					logTaskID, t.ID, logQueue, t.Queue, logTaskType, t.Type, "attempt", t.Attempt, "error", confirmErr)
			} else {
				ex.logger(w.log).Info("task taken over by another worker; this execution's outcome is dropped",
					logTaskID, t.ID, logQueue, t.Queue, logTaskType, t.Type, "attempt", t.Attempt)
			}
			obs.finished(ref, OutcomeLost, ran)
			return
		}
		w.recording <- struct{}{}
		scoped := len(t.leased) > 0
		if !scoped {
			wq.reader.Slots.Release(1)
		}
		_, fspan := w.c.tracer().Start(ctx, "dtq.finish")
		var status string
		if item.Outcome == store.OutcomeSuspend {
			status, item = w.suspend(ex, item)
		} else {
			status = w.finish(ex, item)
		}
		ex.steps.keepAfter(context.WithoutCancel(ctx), w.c.engine, t, status, item.RetryDelay)
		if Status(status).Finished() {
			w.c.wakeParent(ctx, t)
		}
		fspan.End()
		endRunSpan(span, status, item.Text)
		<-w.recording
		if scoped {
			// Its scoped leases go once its outcome is recorded (a run
			// taken over shares them with the run that took it over: kept,
			// above), and its slot after them: a start the slot allows
			// finds the lease free, rather than being held back for it.
			wq.reader.ReleaseScopes(context.WithoutCancel(ctx), claim.ScopeLeases(t.ID, t.run, t.leased))
			wq.reader.Slots.Release(1)
		}
		if item.Outcome == store.OutcomeSuspend && status != "" {
			obs.finished(ref, OutcomeSuspended, ran)
			return
		}
		w.logFailure(ex, status, item.Text)
		obs.finished(ref, outcomeOf(status), ran)
	})
}

// logFailure logs an execution whose recorded outcome is a failure: a
// retry, or DEAD.
func (w *Worker) logFailure(ex *execution, status, errText string) {
	t := ex.task
	switch Status(status) {
	case StatusScheduled:
		ex.logger(w.log).Info("task failed; it will be retried",
			logTaskID, t.ID, logQueue, t.Queue, logTaskType, t.Type, "attempt", t.Attempt, "error", errText)
	case StatusDead:
		ex.logger(w.log).Warn("task failed for good: it is dead",
			logTaskID, t.ID, logQueue, t.Queue, logTaskType, t.Type, "attempt", t.Attempt, "error", errText)
	}
}

// confirmClaim checks, before a handler runs, that a claim this worker
// made a while ago is still its own. A claim starts the task (an implicit
// first run is its claim), but a worker frozen between the claim and the
// handler (SIGSTOP, a long GC pause, a host stall) may find it reclaimed by
// another worker, which runs it already: running it too would repeat its
// side effects. So a claim older than half the visibility timeout is
// renewed first, fenced by its run; a lost one (or one Redis could not
// confirm: it is reclaimed after the visibility timeout) is not run.
func (w *Worker) confirmClaim(ctx context.Context, ex *execution) error {
	t := ex.task
	age := time.Since(t.claimed).Round(time.Millisecond)
	if t.claimed.IsZero() || age < w.cfg.VisibilityTimeout/2 {
		return nil
	}
	cctx, cancel := context.WithTimeout(ctx, w.cfg.VisibilityTimeout/4)
	defer cancel()
	res, err := ex.queue.q.store.Renew(cctx, w.cfg.ID, []store.RenewItem{{TaskID: t.ID, Band: t.band, EntryID: t.entry, Run: t.run, Started: t.started}})
	switch {
	case err != nil:
		w.c.redisError("renew", err)
		return fmt.Errorf("claimed %v ago, renewing it failed: %w", age, err)
	case res[0] == store.Lost:
		return fmt.Errorf("claimed %v ago, taken over by another worker since: %w", age, ErrRunLost)
	case res[0] == store.Cancelled:
		ex.cancel(ErrCancelled)
	}
	return nil
}

// execute runs the handler and returns the outcome to record (false: none,
// the task was taken over elsewhere).
func (w *Worker) execute(ctx context.Context, ex *execution) (store.FinishItem, bool) {
	t := ex.task
	w.mu.Lock()
	h := w.handlers[t.Type]
	w.mu.Unlock()
	item := store.FinishItem{
		TaskID: t.ID, IdemHash: t.idem, Band: t.band, EntryID: t.entry, Run: t.run, Crashes: t.Crashes, Attempt: t.Attempt, Started: t.started, Born: t.born,
	}
	if t.Workflow != "" {
		item.Workflow, item.Step, item.Prev = t.Workflow[len(t.Queue)+1:], t.WorkflowNode, t.Previous
	}
	if h == nil {
		item.Outcome, item.Text = store.OutcomeDead, fmt.Sprintf("no handler registered for task type %q", t.Type)
		return item, true
	}
	var result any
	err := context.Cause(ctx)
	cause := err
	if err == nil { // (a handler is never called with its context ended)
		hctx, stop := context.WithTimeoutCause(ctx, t.Timeout, context.DeadlineExceeded)
		hctx = context.WithValue(hctx, ctxKey{}, &taskContext{task: t, client: w.c, steps: &ex.steps})
		result, err = callHandler(hctx, h, t)
		cause = context.Cause(hctx)
		stop()
	}
	switch {
	case errors.Is(context.Cause(ctx), ErrRunLost):
		return item, false // taken over elsewhere: this run's outcome would be rejected
	case ex.steps.suspended() != nil && !errors.Is(context.Cause(ctx), ErrCancelled):
		// Sleep or WaitFor: the task waits, whatever the handler returned
		item.Outcome = store.OutcomeSuspend
		return item, true
	case err == nil:
		// Also when cancelled meanwhile: the finish script records a
		// cancelled task CANCELLED, keeping the result as its result.
		data, merr := json.Marshal(result)
		if merr != nil {
			item.Outcome, item.Text = store.OutcomeDead, "result cannot be encoded as JSON: "+merr.Error()
		} else {
			item.Outcome, item.Text = store.OutcomeOK, string(data)
		}
	case errors.Is(context.Cause(ctx), ErrCancelled):
		item.Outcome, item.Text = store.OutcomeCancel, "cancelled"
	case errors.Is(context.Cause(ctx), ErrStopped):
		item.Outcome, item.Text, item.RetryDelay = store.OutcomeRetry, "worker stopped: "+err.Error(), 0
	default:
		if errors.Is(cause, context.DeadlineExceeded) && ctx.Err() == nil {
			err = fmt.Errorf("timed out after %v: %w", t.Timeout, err)
			err = Retryable(err)
		}
		permanent, after := classify(err, w.cfg.UnmarkedPermanent)
		item.Text = truncate(err.Error(), maxErrorText)
		switch {
		case permanent:
			item.Outcome = store.OutcomeDead
		case after > 0:
			item.Outcome, item.RetryDelay = store.OutcomeRetry, after
			// "Slow down" from the remote: the queue's limits too, not
			// only this task.
			ex.queue.reader.PauseLimits(context.WithoutCancel(ctx), after, t.scopes)
		default:
			item.Outcome, item.RetryDelay = store.OutcomeRetry, w.retryDelay(t.Attempt)
		}
	}
	if item.Outcome == store.OutcomeRetry && t.Attempt >= t.MaxAttempts {
		item.Outcome = store.OutcomeDead // no attempts left
	}
	return item, true
}

// callHandler runs h, turning a panic into an error.
func callHandler(ctx context.Context, h HandlerFunc, t *Task) (result any, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("handler panicked: %v\n%s", r, truncate(string(debug.Stack()), 1024))
		}
	}()
	return h(ctx, t)
}

// finish records an execution's outcome, retrying while Redis cannot be
// reached (the task stays renewed meanwhile) until recordBase ends: a
// second after a stop's grace period. If that fails, the task is reclaimed
// after the visibility timeout and runs again. It returns the status
// recorded, "" for none.
func (w *Worker) finish(ex *execution, item store.FinishItem) string {
	// Retried until it is recorded or refused as stale: a late attempt is
	// harmless (the fence refuses it once the task was reclaimed), while
	// giving up early runs the task again. Renewal keeps the task this
	// worker's meanwhile.
	ctx := w.recordBase
	first, warned := time.Now(), false
	retry := backoff.Backoff{Max: min(backoff.DefaultMax, w.cfg.VisibilityTimeout/4)}
	for {
		status, err := ex.queue.finishes.Do(ctx, finishReq{task: ex.task, item: item})
		if err == nil {
			if status == "" {
				ex.logger(w.log).Info("task outcome rejected: another execution owns it now",
					logTaskID, item.TaskID, logQueue, ex.task.Queue, logTaskType, ex.task.Type)
			}
			return status
		}
		if !warned && time.Since(first) >= w.cfg.VisibilityTimeout/2 {
			warned = true
			ex.logger(w.log).Warn("recording task outcome is failing; still trying (the task runs again elsewhere if it is reclaimed first)",
				logTaskID, item.TaskID, logQueue, ex.task.Queue, logTaskType, ex.task.Type, "error", err)
		}
		if w.waitRetry(ctx, &retry) != nil {
			ex.logger(w.log).Warn("recording task outcome failed until the end of the stop's grace period; the task will run again",
				logTaskID, item.TaskID, logQueue, ex.task.Queue, logTaskType, ex.task.Type, "error", err)
			w.mu.Lock()
			w.unrecorded = append(w.unrecorded, item.TaskID)
			w.mu.Unlock()
			return ""
		}
	}
}

// stopRetryMax bounds each wait between outcome retries during a stop, so
// that an outcome is recorded soon after Redis is back, well within the
// grace period.
const stopRetryMax = 100 * time.Millisecond

// waitRetry waits before the next try of recording an outcome: the next
// backoff delay or, once a stop has begun, at most stopRetryMax (a stop
// beginning during a longer wait cuts it short). It returns ctx's error if
// ctx ends first, or ended already.
func (w *Worker) waitRetry(ctx context.Context, retry *backoff.Backoff) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	d := retry.Next()
	stopping := w.stopping
	select {
	case <-stopping:
		d, stopping = min(d, stopRetryMax), nil
	default:
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-stopping:
		return nil // try again now: the stop's waits are short
	case <-ctx.Done():
		return ctx.Err()
	}
}
