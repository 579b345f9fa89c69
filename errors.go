package dtq

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/dtq-dev/dtq/internal/keys"
	"github.com/redis/rueidis"
)

var (
	// ErrNotFound is returned for a task id that does not exist (never did,
	// or expired after its retention).
	ErrNotFound = errors.New("dtq: task not found")

	// ErrInvalid is wrapped by every ValidationError.
	ErrInvalid = errors.New("dtq: invalid argument")

	// ErrQueueFull is wrapped by QueueFullError.
	ErrQueueFull = errors.New("dtq: queue full")

	// ErrTooLarge is wrapped by TooLargeError.
	ErrTooLarge = errors.New("dtq: payload too large")

	// ErrIdempotencyConflict is wrapped by IdempotencyConflictError.
	ErrIdempotencyConflict = errors.New("dtq: idempotency key reused with a different request")

	// ErrNotCancellable is returned by Cancel for a task that has finished.
	ErrNotCancellable = errors.New("dtq: task already finished")

	// ErrNotDead is returned by dead-letter operations on a task that is
	// not in its dead-letter stream: not DEAD, or (Requeue) discarded.
	ErrNotDead = errors.New("dtq: task is not dead")

	// ErrNotScheduled is returned by RunNow for a task that is not waiting
	// in the schedule: not SCHEDULED (QUEUED, RUNNING or finished), or
	// QUEUED waiting for its order key.
	ErrNotScheduled = errors.New("dtq: task is not scheduled")

	// ErrWorkerNotFound is returned by QuietWorker and StopWorker for an
	// id that names no live worker.
	ErrWorkerNotFound = errors.New("dtq: no live worker of that id")

	// ErrLeaseHolder is returned by QuietWorker and StopWorker for an HTTP
	// lease holder (WorkerKindHTTP): it takes tasks by calling the lease
	// API, which cannot be told to stop it; stop its process instead.
	ErrLeaseHolder = errors.New("dtq: the worker is an HTTP lease holder: quiet and stop reach Go workers only")

	// ErrCancelled is the cause of a handler's context when its task was
	// cancelled (context.Cause(ctx) == ErrCancelled).
	ErrCancelled = errors.New("dtq: task cancelled")

	// ErrRunLost is the cause of a Go handler's context when its run is no
	// longer the task's: another worker took the task over after the
	// visibility timeout, or the task was deleted (this run's result would
	// be rejected anyway; the history records the run as OutcomeLost).
	// Progress answers it too. A lease's counterpart is ErrLeaseLost.
	ErrRunLost = errors.New("dtq: task taken over by another worker")

	// ErrLeaseLost is the answer of the LeaseServer's calls for a lease
	// that is no longer its holder's: it timed out and its task was taken
	// over (or finished, or deleted), or its outcome was recorded already.
	// Nothing was changed. A Go handler's counterpart is ErrRunLost.
	ErrLeaseLost = errors.New("dtq: the lease is lost: it timed out and the task was taken over, or it ended already")

	// ErrLeaseServerStopped is Lease's answer on a LeaseServer that is not
	// running: not started yet, or stopped.
	ErrLeaseServerStopped = errors.New("dtq: the lease server is not running (Start it first; a stopped one stays stopped)")

	// ErrNoTask is Progress's and Step's answer for a context that is not
	// a handler's.
	ErrNoTask = errors.New("dtq: the context is not a task handler's")

	// ErrDuplicateStep is Step's answer for a step name the execution used
	// already: names are unique within a task.
	ErrDuplicateStep = errors.New("dtq: a step of this name ran already in this execution (step names are unique within a task)")

	// ErrSuspended is Sleep's and WaitFor's answer when the execution must
	// end so that the task waits (the handler returns it); Step's after
	// that in the same execution.
	ErrSuspended = errors.New("dtq: the execution suspended (Sleep, WaitFor): return from the handler; the task runs again when it is due")

	// ErrWaitTimedOut is WaitFor's answer when its timeout passed before
	// the signal came.
	ErrWaitTimedOut = errors.New("dtq: the wait timed out before its signal came")

	// ErrSignalDelivered is Signal's answer when the task holds a record
	// of that name already: a signal delivered before, or its wait's
	// timeout (the first stands).
	ErrSignalDelivered = errors.New("dtq: the task has a signal of this name already, or its wait for it timed out")

	// ErrChildFailed is wrapped by a *ChildError: a child awaited by
	// Child ended DEAD or CANCELLED.
	ErrChildFailed = errors.New("dtq: the child task did not succeed")

	// ErrTaskFinished is Signal's answer for a task that has finished
	// (SUCCEEDED, DEAD or CANCELLED): nothing is recorded.
	ErrTaskFinished = errors.New("dtq: task has finished")

	// ErrOperationInProgress is returned (marked retryable) by
	// IdempotentOperation when another execution holds the same key right
	// now.
	ErrOperationInProgress = errors.New("dtq: idempotent operation in progress elsewhere")

	// ErrScheduleNotFound is returned for a schedule that does not exist.
	ErrScheduleNotFound = errors.New("dtq: schedule not found")

	// ErrWorkflowNotFound is returned for a workflow id that names no
	// workflow (unknown, or expired after the retention). It wraps
	// ErrNotFound.
	ErrWorkflowNotFound = fmt.Errorf("dtq: workflow not found: %w", ErrNotFound)

	// ErrNotReplicated: with Config.DurableReplicas, the master wrote the
	// submission but too few replicas acknowledged it in time. Submit again
	// with the same idempotency key: it returns the task if it survived.
	ErrNotReplicated = errors.New("dtq: written, but not acknowledged by enough replicas")

	// ErrLayout: the namespace's data is of another key layout version
	// (a *LayoutError says which).
	ErrLayout = errors.New("dtq: unknown key layout")

	// ErrQueueNotEmpty is wrapped by QueueNotEmptyError.
	ErrQueueNotEmpty = errors.New("dtq: queue holds tasks")

	// ErrStopped is the cause of a handler's context when the worker stops
	// without waiting for it (StopAndCancel, or the grace period ran out).
	ErrStopped = errors.New("dtq: worker stopped")
)

// IsOutOfMemory reports whether err is Redis refusing a write because it
// reached its maxmemory limit (with maxmemory-policy noeviction, as dtq
// needs). Nothing of the refused call was written: a script or
// transaction is refused before its first write. Retry later, or free
// memory or raise the limit.
func IsOutOfMemory(err error) bool {
	var rerr *rueidis.RedisError
	return errors.As(err, &rerr) && strings.HasPrefix(rerr.Error(), "OOM ")
}

// ValidationError reports a bad argument or configuration value; Field
// names it as written in Go or JSON.
type ValidationError struct {
	Field   string
	Problem string
}

func (e *ValidationError) Error() string { return "dtq: " + e.Field + " " + e.Problem }

// Unwrap returns ErrInvalid.
func (e *ValidationError) Unwrap() error { return ErrInvalid }

// checkQueue returns a ValidationError of field when q is no queue name.
func checkQueue(field, q string) error {
	if keys.ValidName(q) {
		return nil
	}
	return invalid(field, "%q is not a queue name: want %s", q, keys.NameRule)
}

func invalid(field, format string, args ...any) error {
	return &ValidationError{Field: field, Problem: fmt.Sprintf(format, args...)}
}

// QueueFullError is returned by Enqueue when the queue holds its maximum
// depth of queued, scheduled and running tasks.
type QueueFullError struct {
	Queue      string
	MaxDepth   int64
	RetryAfter time.Duration // a hint: when to try again
}

func (e *QueueFullError) Error() string {
	return fmt.Sprintf("dtq: queue %q is full (%d tasks queued, scheduled or running); retry after %v", e.Queue, e.MaxDepth, e.RetryAfter)
}

// Unwrap returns ErrQueueFull.
func (e *QueueFullError) Unwrap() error { return ErrQueueFull }

// QueueNotEmptyError is returned by DeleteQueue, without
// DeleteQueueOpts.Force, for a queue that holds tasks not finished: what it
// holds. Nothing was deleted.
type QueueNotEmptyError struct {
	Queue                            string
	Queued, Scheduled, Running, Dead int64
}

func (e *QueueNotEmptyError) Error() string {
	return fmt.Sprintf("dtq: queue %q holds %d queued, %d scheduled, %d running and %d dead tasks: delete it with Force to delete them too",
		e.Queue, e.Queued, e.Scheduled, e.Running, e.Dead)
}

// Unwrap returns ErrQueueNotEmpty.
func (e *QueueNotEmptyError) Unwrap() error { return ErrQueueNotEmpty }

// TooLargeError is returned by Enqueue for a payload over the limit.
type TooLargeError struct {
	Size, Limit int
}

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("dtq: payload is %d bytes, over the limit of %d", e.Size, e.Limit)
}

// Unwrap returns ErrTooLarge.
func (e *TooLargeError) Unwrap() error { return ErrTooLarge }

// IdempotencyConflictError is returned by Enqueue when its idempotency key
// was used for a different request; TaskID is the original task.
type IdempotencyConflictError struct {
	Key    string
	TaskID string
}

func (e *IdempotencyConflictError) Error() string {
	return fmt.Sprintf("dtq: idempotency key %q was used for a different request (task %s)", e.Key, e.TaskID)
}

// Unwrap returns ErrIdempotencyConflict.
func (e *IdempotencyConflictError) Unwrap() error { return ErrIdempotencyConflict }

// LayoutError is returned by Admin.CheckLayout (and Worker.Start, and a
// Client's first submission) when the namespace's data in Redis was written
// in a key layout this version of dtq does not read: processes of different
// versions must not share a namespace.
type LayoutError struct {
	Namespace   string
	Found, Want string // layout versions
}

func (e *LayoutError) Error() string {
	return fmt.Sprintf("dtq: namespace %q holds data of layout version %s; this dtq reads and writes version %s "+
		"(run one version per namespace: drain and stop the old processes first, or use another namespace)",
		e.Namespace, e.Found, e.Want)
}

// Unwrap returns ErrLayout.
func (e *LayoutError) Unwrap() error { return ErrLayout }

// Handler error classes.

type classified struct {
	err       error
	permanent bool
	after     time.Duration // > 0: retry after this long
}

func (c *classified) Error() string {
	if c.err == nil {
		return "<nil>"
	}
	return c.err.Error()
}
func (c *classified) Unwrap() error { return c.err }

// Retryable marks err as retryable: the task is retried (with backoff) while
// attempts remain. It is the default for unmarked errors unless
// WorkerConfig.UnmarkedPermanent is set.
func Retryable(err error) error { return &classified{err: err} }

// Permanent marks err as permanent: the task goes to the dead-letter stream
// at once, whatever attempts remain.
func Permanent(err error) error { return &classified{err: err, permanent: true} }

// RetryAfter marks err as retryable after d instead of the backoff.
func RetryAfter(d time.Duration, err error) error { return &classified{err: err, after: d} }

// classify returns whether err is permanent and a forced retry delay (0 for
// the backoff), given the worker's default for unmarked errors.
func classify(err error, unmarkedPermanent bool) (permanent bool, after time.Duration) {
	var c *classified
	if errors.As(err, &c) {
		return c.permanent, c.after
	}
	return unmarkedPermanent, 0
}
