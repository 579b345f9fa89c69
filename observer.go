package dtq

import (
	"context"
	"errors"
	"strconv"
	"time"
)

// Observer receives this process's task events, for metrics (package
// internal/metrics turns them into Prometheus metrics). Set it in
// Config.Observer; the Client and every Worker built from it report to it.
//
// Methods are called synchronously on hot paths, from many goroutines at
// once: they must be safe for concurrent use, must not block, and should
// cost no more than a few counter increments. Task types and queue names are
// the raw strings of the tasks: an implementation that turns them into
// metric labels must bound them itself.
type Observer interface {
	// TaskSubmitted reports a task created by Enqueue or EnqueueMany (not a
	// duplicate submission of an idempotency key, nor a rejected one).
	TaskSubmitted(queue, taskType string)

	// TaskStarted reports an execution started by a Worker of this
	// process. pickup is how long the task had been ready when it started:
	// from when it entered its priority band (at submission, or when its
	// due time came — a delay, RunAt, or a retry's backoff) to its start,
	// both on the Redis clock, so at millisecond precision. For a task taken
	// over from a lost worker it runs from that first readiness. Every
	// TaskStarted is followed by exactly one TaskFinished.
	TaskStarted(queue, taskType string, pickup time.Duration)

	// TaskFinished reports the end of an execution that TaskStarted
	// reported: its recorded outcome, and run, how long the handler ran.
	TaskFinished(queue, taskType string, outcome Outcome, run time.Duration)

	// TaskEnded reports a task that finished without an execution of this
	// process: cancelled while QUEUED or SCHEDULED by Client.Cancel
	// (OutcomeCancelled), or DEAD when a Worker took it over from a lost
	// worker after WorkerConfig.MaxCrashes (OutcomeDead).
	TaskEnded(queue, taskType string, outcome Outcome)

	// TasksReclaimed reports n tasks a Worker took over from workers that
	// stopped renewing them (their process died or lost Redis).
	TasksReclaimed(queue string, n int)

	// RedisError reports a failed Redis call of the engine's background
	// and hot paths (not of the admin calls, whose errors go to their
	// callers), other than one whose context was cancelled. op is one of
	// "enqueue", "read", "start", "finish", "renew", "heartbeat",
	// "subscribe" and "publish".
	RedisError(op string, err error)
}

// Outcome is how an execution or a task ended: as a task's history
// records each run (Execution.Outcome, the HTTP API's and the CLI's
// "outcome") and as reported to an Observer (and counted in metrics).
type Outcome string

// Outcomes of an execution.
const (
	// OutcomeSucceeded: the handler returned no error; the task is
	// SUCCEEDED.
	OutcomeSucceeded Outcome = "succeeded"
	// OutcomeRetried: the execution failed and the task will run again
	// after its backoff (it is SCHEDULED).
	OutcomeRetried Outcome = "retried"
	// OutcomeDead: the task failed for good and is DEAD.
	OutcomeDead Outcome = "dead"
	// OutcomeCancelled: the task was cancelled and is CANCELLED.
	OutcomeCancelled Outcome = "cancelled"
	// OutcomeLost: the execution's outcome was not recorded: its worker
	// was lost (another worker took the task over after it stopped
	// renewing it) or, as an Observer sees it, could not reach Redis. The
	// task runs again, unless it was cancelled meanwhile or its workers
	// were lost more than WorkerConfig.MaxCrashes times (then it ends
	// CANCELLED or DEAD when taken over).
	OutcomeLost Outcome = "lost"
	// OutcomeSuspended: the execution ended without failing so that the
	// task waits (Sleep, WaitFor; it is SCHEDULED with Task.Suspended),
	// keeping its attempt. In a task's history its error says for what.
	OutcomeSuspended Outcome = "suspended"
)

// outcomeOf maps the status an outcome was recorded with ("" when it was
// rejected) to its Outcome.
func outcomeOf(status string) Outcome {
	switch Status(status) {
	case StatusSucceeded:
		return OutcomeSucceeded
	case StatusScheduled:
		return OutcomeRetried
	case StatusDead:
		return OutcomeDead
	case StatusCancelled:
		return OutcomeCancelled
	}
	return OutcomeLost
}

// LimitObserver is an Observer that also wants to know when a queue's
// limits (Admin.SetLimits, SetTypeLimits, SetKeyLimits) held a worker
// back. When Config.Observer implements it, Workers call ClaimsThrottled
// with the number of tasks a read wanted to claim and was not granted, or
// that a scoped limit held back at their start (the tasks stay QUEUED, or
// SCHEDULED for a rate's reserved start); it must not block.
type LimitObserver interface {
	Observer
	ClaimsThrottled(queue string, n int)
}

// DebounceObserver is an Observer that also wants to know when a debounced
// submission (EnqueueOpts.Debounce) joined the pending task of its key
// instead of creating one (EnqueueResult.Debounced). When Config.Observer
// implements it, the Client calls DebounceJoined once per such submission
// it made, with the task joined (a submission that created the task is a
// TaskSubmitted); it must not block.
type DebounceObserver interface {
	Observer
	DebounceJoined(t TaskRef)
}

// OnFullObserver is an Observer that also wants to know what the rules of
// full concurrency limits (LimitSpec.OnFull) did. When Config.Observer
// implements it, Workers (and the lease calls of HTTP workers) call
// LimitOnFull at the start that applied rule, with n: 1 for CancelNewest
// (the task started is CANCELLED; it is also a TaskEnded) and for
// CancelRunning (the cancellation of the oldest run under the limit was
// requested; not when one of its runs was being cancelled already), and
// for ReplaceWaiting the number of waiting tasks it cancelled (each also a
// TaskEnded). Each is reported once, by the process whose start applied
// the rule; it must not block.
type OnFullObserver interface {
	Observer
	LimitOnFull(queue string, rule OnFull, n int)
}

// TaskRef names the task a TaskObserver callback is about.
type TaskRef struct {
	ID, Queue, Type string
}

// TaskObserver is an Observer that wants to know which task each event is
// about, to tie a metric or a trace to it. When Config.Observer implements
// TaskObserver, dtq calls OnSubmitted, OnStarted, OnFinished, OnEnded and
// OnReclaimed in place of TaskSubmitted, TaskStarted, TaskFinished,
// TaskEnded and TasksReclaimed (RedisError stays as it is), with the same
// meaning and on the same goroutines; embed NopTaskObserver for the methods
// it does not need.
type TaskObserver interface {
	Observer
	OnSubmitted(t TaskRef)
	OnStarted(t TaskRef, pickup time.Duration)
	OnFinished(t TaskRef, outcome Outcome, run time.Duration)
	OnEnded(t TaskRef, outcome Outcome)
	// OnReclaimed reports one task a Worker took over from a worker that
	// stopped renewing it.
	OnReclaimed(t TaskRef)
}

// NopObserver implements Observer doing nothing: embed it in an observer to
// implement only the methods it needs. (It has no TaskObserver methods, so
// an observer embedding it gets the plain calls it implements; embed
// NopTaskObserver for a TaskObserver.)
type NopObserver struct{}

func (NopObserver) TaskSubmitted(string, string)                        {}
func (NopObserver) TaskStarted(string, string, time.Duration)           {}
func (NopObserver) TaskFinished(string, string, Outcome, time.Duration) {}
func (NopObserver) TaskEnded(string, string, Outcome)                   {}
func (NopObserver) TasksReclaimed(string, int)                          {}
func (NopObserver) RedisError(string, error)                            {}

// NopTaskObserver implements TaskObserver doing nothing: embed it in a
// TaskObserver to implement only the On methods it needs.
type NopTaskObserver struct{ NopObserver }

func (NopTaskObserver) OnSubmitted(TaskRef)                        {}
func (NopTaskObserver) OnStarted(TaskRef, time.Duration)           {}
func (NopTaskObserver) OnFinished(TaskRef, Outcome, time.Duration) {}
func (NopTaskObserver) OnEnded(TaskRef, Outcome)                   {}
func (NopTaskObserver) OnReclaimed(TaskRef)                        {}

// observer dispatches the engine's task events to Config.Observer — to its
// TaskObserver methods when it has them — and to the stored history's
// counts (h, nil when Config.DisableHistory). The zero value reports
// nothing.
type observer struct {
	o Observer
	t TaskObserver
	l LimitObserver
	d DebounceObserver
	f OnFullObserver
	h *historyFold
}

func newObserver(o Observer, h *historyFold) observer {
	t, _ := o.(TaskObserver)
	l, _ := o.(LimitObserver)
	d, _ := o.(DebounceObserver)
	f, _ := o.(OnFullObserver)
	return observer{o: o, t: t, l: l, d: d, f: f, h: h}
}

func (x observer) throttled(queue string, n int) {
	if x.l != nil && n > 0 {
		x.l.ClaimsThrottled(queue, n)
	}
}

func (x observer) debounceJoined(t TaskRef) {
	if x.d != nil {
		x.d.DebounceJoined(t)
	}
}

func (x observer) onFull(queue string, rule OnFull, n int) {
	if x.f != nil && n > 0 {
		x.f.LimitOnFull(queue, rule, n)
	}
}

// on reports whether there is an observer: callers skip the work of
// measuring for none.
func (x observer) on() bool { return x.o != nil || x.h != nil }

func (x observer) submitted(t TaskRef) {
	x.h.submitted(t.Queue, t.Type)
	switch {
	case x.t != nil:
		x.t.OnSubmitted(t)
	case x.o != nil:
		x.o.TaskSubmitted(t.Queue, t.Type)
	}
}

func (x observer) started(t TaskRef, pickup time.Duration) {
	x.h.started(t.Queue, t.Type, pickup)
	switch {
	case x.t != nil:
		x.t.OnStarted(t, pickup)
	case x.o != nil:
		x.o.TaskStarted(t.Queue, t.Type, pickup)
	}
}

func (x observer) finished(t TaskRef, outcome Outcome, run time.Duration) {
	x.h.finished(t.Queue, t.Type, outcome, run)
	switch {
	case x.t != nil:
		x.t.OnFinished(t, outcome, run)
	case x.o != nil:
		x.o.TaskFinished(t.Queue, t.Type, outcome, run)
	}
}

func (x observer) ended(t TaskRef, outcome Outcome) {
	x.h.ended(t.Queue, t.Type, outcome)
	switch {
	case x.t != nil:
		x.t.OnEnded(t, outcome)
	case x.o != nil:
		x.o.TaskEnded(t.Queue, t.Type, outcome)
	}
}

// reclaimed reports the tasks of queue taken over from lost workers.
func (x observer) reclaimed(queue string, tasks []TaskRef) {
	switch {
	case len(tasks) == 0:
	case x.t != nil:
		for _, t := range tasks {
			x.t.OnReclaimed(t)
		}
	case x.o != nil:
		x.o.TasksReclaimed(queue, len(tasks))
	}
}

// redisError reports err of op to the observer, if any.
func (c *engine) redisError(op string, err error) {
	if o := c.cfg.Observer; o != nil && err != nil && !errors.Is(err, context.Canceled) {
		o.RedisError(op, err)
	}
}

// pickup is the time from when a band entry was added (its id's
// millisecond part) to started (Unix ms), both from the Redis clock; never
// negative.
func pickup(entryID, started string) time.Duration {
	end, err := strconv.ParseInt(started, 10, 64)
	if err != nil {
		return 0
	}
	ms, _, _ := cutByte(entryID, '-')
	begin, err := strconv.ParseInt(ms, 10, 64)
	if err != nil || end < begin {
		return 0
	}
	return time.Duration(end-begin) * time.Millisecond
}

// Log attribute keys of the engine's task log lines.
const (
	logTaskID   = "task_id"
	logQueue    = "queue"
	logTaskType = "task_type"
	logTraceID  = "trace_id" // of the task's execution (execution.logger)
	logSpanID   = "span_id"
)
