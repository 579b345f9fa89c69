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
	TaskSubmitted(t TaskRef)

	// TaskStarted reports an execution started by a Worker of this
	// process. pickup is how long the task had been ready when it started:
	// from when it entered its priority band (at submission, or when its
	// due time came — a delay, RunAt, or a retry's backoff) to its start,
	// both on the Redis clock, so at millisecond precision. For a task taken
	// over from a lost worker it runs from that first readiness. Every
	// TaskStarted is followed by exactly one TaskFinished.
	TaskStarted(t TaskRef, pickup time.Duration)

	// TaskFinished reports the end of an execution that TaskStarted
	// reported: its recorded outcome, and run, how long the handler ran.
	TaskFinished(t TaskRef, outcome Outcome, run time.Duration)

	// TaskEnded reports a task that finished without an execution of this
	// process: cancelled while QUEUED or SCHEDULED by Client.Cancel
	// (OutcomeCancelled), or DEAD when a Worker took it over from a lost
	// worker after WorkerConfig.MaxCrashes (OutcomeDead).
	TaskEnded(t TaskRef, outcome Outcome)

	// TaskReclaimed reports a task a Worker took over from a worker that
	// stopped renewing it (its process died or lost Redis).
	TaskReclaimed(t TaskRef)

	// ClaimsThrottled reports that a queue's limits held a worker back:
	// n tasks a read wanted to claim and was not granted, or that a scoped
	// limit held back at their start (they stay QUEUED, or SCHEDULED for a
	// rate's reserved start).
	ClaimsThrottled(queue string, n int)

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

// TaskRef names the task an Observer callback is about.
type TaskRef struct {
	ID, Queue, Type string
}

// NopObserver implements Observer doing nothing: embed it in an observer to
// implement only the methods it needs.
type NopObserver struct{}

func (NopObserver) TaskSubmitted(TaskRef)                        {}
func (NopObserver) TaskStarted(TaskRef, time.Duration)           {}
func (NopObserver) TaskFinished(TaskRef, Outcome, time.Duration) {}
func (NopObserver) TaskEnded(TaskRef, Outcome)                   {}
func (NopObserver) TaskReclaimed(TaskRef)                        {}
func (NopObserver) ClaimsThrottled(string, int)                  {}
func (NopObserver) RedisError(string, error)                     {}

// observer dispatches the engine's task events to Config.Observer. The
// zero value reports nothing.
type observer struct{ o Observer }

func newObserver(o Observer) observer { return observer{o: o} }

func (x observer) throttled(queue string, n int) {
	if x.o != nil && n > 0 {
		x.o.ClaimsThrottled(queue, n)
	}
}

// on reports whether there is an observer: callers skip the work of
// measuring for none.
func (x observer) on() bool { return x.o != nil }

func (x observer) submitted(t TaskRef) {
	if x.o != nil {
		x.o.TaskSubmitted(t)
	}
}

func (x observer) started(t TaskRef, pickup time.Duration) {
	if x.o != nil {
		x.o.TaskStarted(t, pickup)
	}
}

func (x observer) finished(t TaskRef, outcome Outcome, run time.Duration) {
	if x.o != nil {
		x.o.TaskFinished(t, outcome, run)
	}
}

func (x observer) ended(t TaskRef, outcome Outcome) {
	if x.o != nil {
		x.o.TaskEnded(t, outcome)
	}
}

// reclaimed reports the tasks of queue taken over from lost workers.
func (x observer) reclaimed(_ string, tasks []TaskRef) {
	if x.o == nil {
		return
	}
	for _, t := range tasks {
		x.o.TaskReclaimed(t)
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
)
