package dtq

import (
	"context"
	"fmt"
	"time"
)

// DeleteQueueOpts are the options of DeleteQueue.
type DeleteQueueOpts struct {
	// Force deletes the queue whatever it holds: QUEUED, SCHEDULED and DEAD
	// tasks with it, and RUNNING ones, whose outcomes are then lost (their
	// handlers' contexts end with ErrRunLost at their next renewal). Defaults
	// to false: a queue holding such tasks is not deleted.
	Force bool
}

// DeletedQueue is what DeleteQueue deleted.
type DeletedQueue struct {
	Queue     string `json:"queue"`
	Queued    int64  `json:"queued"`
	Scheduled int64  `json:"scheduled"`
	Running   int64  `json:"running"`
	Dead      int64  `json:"dead"`
}

// DeleteQueue deletes queue and everything of it: its tasks (finished ones
// too), dead letters, schedules, unique locks, idempotency records, pause
// flag and totals, and takes it out of the namespace's queue set (Queues).
// Without opts.Force it returns a *QueueNotEmptyError and deletes nothing
// when the queue holds a QUEUED, SCHEDULED, RUNNING or DEAD task. Deleting
// a queue that does not exist is no error.
//
// The queue's keys of one per queue go in one atomic step; the keys of its
// single tasks are then found by a SCAN of every Redis node, so the call
// takes time in proportion to the whole database. If it fails, call it
// again: it finishes what the first call left. A submission to the queue
// meanwhile (or later) makes it again, empty but for that task, which the
// deletion keeps, and a Client of another process that still submits to it
// lists it again in Queues within a minute. Workers still serving the
// queue keep waiting on it (stop them first). It is asynq's DeleteQueue,
// BullMQ's obliterate.
func (a *Admin) DeleteQueue(ctx context.Context, queue string, opts *DeleteQueueOpts) (*DeletedQueue, error) {
	if err := checkQueue("queue", queue); err != nil {
		return nil, err
	}
	force := opts != nil && opts.Force
	q := a.queue(queue)
	held, deleted, err := q.store.Drop(ctx, force)
	if err != nil {
		return nil, err
	}
	if !deleted {
		return nil, &QueueNotEmptyError{Queue: queue, Queued: held.Queued, Scheduled: held.Scheduled, Running: held.Running, Dead: held.Dead}
	}
	a.mu.Lock()
	q.registered = time.Time{}
	a.mu.Unlock()
	if err := a.store.UnregisterQueue(ctx, queue); err != nil {
		return nil, err
	}
	detail := ""
	if force {
		detail = "force"
	}
	if held.Work() {
		detail += fmt.Sprintf(" held %d queued, %d scheduled, %d running, %d dead", held.Queued, held.Scheduled, held.Running, held.Dead)
	}
	a.audit(ctx, auditQueueDelete, queue, "", detail)
	return &DeletedQueue{Queue: queue, Queued: held.Queued, Scheduled: held.Scheduled, Running: held.Running, Dead: held.Dead}, nil
}
