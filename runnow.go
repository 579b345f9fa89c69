package dtq

import (
	"context"

	"github.com/dtq-dev/dtq/internal/taskid"
)

// RunNow moves a task waiting in the schedule into its priority band at
// once: it is QUEUED, as when its due time comes, and runs in its turn. It
// takes a SCHEDULED task — delayed (EnqueueOpts.Delay), waiting out a
// retry's backoff, suspended (a Sleep ends early; a WaitFor ends as timed
// out, ErrWaitTimedOut, unless its signal came), or debounced (it runs
// with the payload it has; a later submission of its debounce key makes a
// new task) — and a task its order key passed to whose own delay is still
// ahead. Any other task is ErrNotScheduled (a task waiting for its order
// key too: it runs when the key's task before it ends); an unknown one
// ErrNotFound. It is audited (run-now) and returns the task.
func (a *Admin) RunNow(ctx context.Context, id string) (*Task, error) {
	queue, _, err := taskid.Parse(id)
	if err != nil {
		return nil, ErrNotFound
	}
	moved, _, err := a.store.Queue(queue).RunNow(ctx, id)
	if err != nil {
		return nil, err
	}
	t, err := a.get(ctx, id)
	if err != nil {
		return nil, err
	}
	if !moved {
		return nil, ErrNotScheduled
	}
	a.audit(ctx, auditRunNow, queue, id, t.Type)
	return t, nil
}
