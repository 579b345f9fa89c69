package dtq

import (
	"context"
	"strconv"
	"time"

	"github.com/dtq-dev/dtq/internal/store"
	"github.com/dtq-dev/dtq/internal/taskid"
)

// Cancel cancels a task. A QUEUED or SCHEDULED task is CANCELLED at once. A
// RUNNING task's handler context is cancelled on whichever worker runs it
// (cause ErrCancelled) and the task ends CANCELLED; the returned task shows
// CancelRequested until then. Cancelling a CANCELLED task does nothing; a
// SUCCEEDED or DEAD task returns ErrNotCancellable.
func (c *Client) Cancel(ctx context.Context, id string) (*Task, error) {
	queue, status, _, err := c.cancel(ctx, id)
	if err != nil {
		return nil, err
	}
	c.audit(ctx, auditCancel, queue, id, status)
	t, err := c.get(ctx, id)
	if err == nil && t.Status == StatusCancelled {
		c.wakeParent(ctx, t)
	}
	return t, err
}

// cancel is Cancel but for its audit entry, the task's read and its
// parent's wake-up: it returns the task's queue, its status after the call
// and whether this call cancelled it (a QUEUED or SCHEDULED task).
func (c *engine) cancel(ctx context.Context, id string) (queue, status string, now bool, err error) {
	queue, _, err = taskid.Parse(id)
	if err != nil {
		return "", "", false, ErrNotFound
	}
	status, cancelledType, err := c.store.Queue(queue).Cancel(ctx, id, c.keepOthers())
	if err != nil {
		return "", "", false, err
	}
	if cancelledType != "" {
		c.obs.ended(TaskRef{ID: id, Queue: queue, Type: cancelledType}, OutcomeCancelled)
	}
	switch Status(status) {
	case "":
		return "", "", false, ErrNotFound
	case StatusSucceeded, StatusDead:
		return "", "", false, ErrNotCancellable
	}
	return queue, status, cancelledType != "", nil
}

// DeadLetter is a task in a dead-letter stream.
type DeadLetter struct {
	Task   *Task     `json:"task"`
	Reason string    `json:"reason"`
	DeadAt time.Time `json:"dead_at"`
}

// ListDead returns up to limit dead letters of queue, newest first, starting
// after cursor ("" for the newest); next is the cursor of the following page
// ("" at the end).
func (a *Admin) ListDead(ctx context.Context, queue string, limit int, cursor string) (letters []DeadLetter, next string, err error) {
	if err := checkQueue("queue", queue); err != nil {
		return nil, "", err
	}
	if limit <= 0 || limit > 1000 {
		return nil, "", invalid("limit", "must be 1-1000 (got %d)", limit)
	}
	if cursor != "" && !streamID(cursor) {
		return nil, "", invalid("cursor", "is not a cursor from a previous page")
	}
	entries, err := a.store.Queue(queue).DeadLetters(ctx, limit, cursor)
	if err != nil {
		return nil, "", err
	}
	ids := make([]string, len(entries))
	for i, e := range entries {
		ids[i] = e.TaskID
	}
	tasks, err := a.getMany(ctx, ids)
	if err != nil {
		return nil, "", err
	}
	for i, e := range entries {
		if tasks[i] == nil {
			continue
		}
		letters = append(letters, DeadLetter{Task: tasks[i], Reason: e.Reason, DeadAt: time.UnixMilli(e.At).UTC()})
	}
	if len(entries) == limit {
		next = entries[len(entries)-1].EntryID
	}
	return letters, next, nil
}

// streamID reports whether s is a stream entry id, "<ms>-<seq>".
func streamID(s string) bool {
	ms, seq, ok := cutByte(s, '-')
	_, err1 := strconv.ParseUint(ms, 10, 64)
	_, err2 := strconv.ParseUint(seq, 10, 64)
	return ok && err1 == nil && err2 == nil
}

// Requeue moves a DEAD task in its dead-letter stream back to QUEUED, with
// its attempt and crash counts reset and its history kept. A task discarded
// from the stream is ErrNotDead.
func (a *Admin) Requeue(ctx context.Context, id string) (*Task, error) {
	if err := a.dlqOne(ctx, store.Requeue, id); err != nil {
		return nil, err
	}
	return a.get(ctx, id)
}

// Discard removes a DEAD task from its dead-letter stream; it expires after
// the retention. Discarding a task discarded already is no error and
// changes nothing (nor is it audited again).
func (a *Admin) Discard(ctx context.Context, id string) error {
	return a.dlqOne(ctx, store.Discard, id)
}

func (c *engine) dlqOne(ctx context.Context, action store.DLQAction, id string) error {
	queue, _, err := taskid.Parse(id)
	if err != nil {
		return ErrNotFound
	}
	done, err := c.store.Queue(queue).DLQ(ctx, action, []string{id}, c.keepOthers())
	if err != nil {
		return err
	}
	switch done[0] {
	case store.DLQDiscardedAlready:
		return nil
	case store.DLQNotDead:
		if _, err := c.get(ctx, id); err != nil {
			return err
		}
		return ErrNotDead
	}
	c.audit(ctx, dlqAudit(action), queue, id, "")
	return nil
}

// Purge discards every dead letter of queue there when it starts and
// returns how many. (Redrive requeues many dead letters.)
func (a *Admin) Purge(ctx context.Context, queue string) (int, error) {
	if err := checkQueue("queue", queue); err != nil {
		return 0, err
	}
	q := a.store.Queue(queue)
	// Only the entries there now: a task that dies while this runs stays.
	last, err := q.DeadLetters(ctx, 1, "")
	if err != nil {
		return 0, err
	}
	total := 0
	for len(last) > 0 {
		entries, err := q.DeadLettersUpTo(ctx, last[0].EntryID, dlqBatch)
		if err != nil {
			return total, err
		}
		if len(entries) == 0 {
			break
		}
		ids := make([]string, len(entries))
		for i, e := range entries {
			ids[i] = e.TaskID
		}
		done, err := q.DLQ(ctx, store.Discard, ids, a.keepOthers())
		if err != nil {
			return total, err
		}
		// Entries whose task is no longer in the stream (not DEAD, gone,
		// or discarded) are dropped too.
		var stale []string
		for i, r := range done {
			if r == store.DLQDone {
				total++
			} else {
				stale = append(stale, entries[i].EntryID)
			}
		}
		if len(stale) > 0 {
			if err := q.DropDeadLetters(ctx, stale); err != nil {
				return total, err
			}
		}
	}
	a.audit(ctx, auditDiscardAll, queue, "", strconv.Itoa(total))
	return total, nil
}

// dlqBatch is how many dead letters one dlq.lua call takes at most (Purge,
// Redrive).
const dlqBatch = 256

// PauseQueue stops workers from starting tasks of queue (running ones
// finish); submissions are still accepted. It is audited (pause).
func (a *Admin) PauseQueue(ctx context.Context, queue string) error {
	return a.setPaused(ctx, queue, true)
}

// ResumeQueue lets workers start tasks of queue again. It is audited
// (resume).
func (a *Admin) ResumeQueue(ctx context.Context, queue string) error {
	return a.setPaused(ctx, queue, false)
}

func (c *engine) setPaused(ctx context.Context, queue string, paused bool) error {
	if err := checkQueue("queue", queue); err != nil {
		return err
	}
	q := c.queue(queue)
	if err := c.register(ctx, q); err != nil {
		return err
	}
	if err := q.store.SetPaused(ctx, paused); err != nil {
		return err
	}
	action := auditResume
	if paused {
		action = auditPause
	}
	c.audit(ctx, action, queue, "", "")
	return nil
}

// QueueStats describes one queue now.
type QueueStats struct {
	Name      string `json:"name"`
	Paused    bool   `json:"paused"`
	Queued    int64  `json:"queued"`
	Scheduled int64  `json:"scheduled"`
	Running   int64  `json:"running"`
	Dead      int64  `json:"dead"` // in the dead-letter stream
	// QueuedByPriority[p] counts queued tasks of priority p in the bands.
	QueuedByPriority [store.Bands]int64 `json:"queued_by_priority"`
	// GroupWaiting counts the queued tasks waiting for their group's turn
	// (EnqueueOpts.Group): Queued is them and those in the bands.
	GroupWaiting int64 `json:"group_waiting"`
	// LimitWaiting counts the queued tasks a full concurrency limit of a
	// task type or limit key holds back (SetTypeLimits, SetKeyLimits);
	// counted in Queued too.
	LimitWaiting int64 `json:"limit_waiting"`
	// OrderWaiting counts the queued tasks waiting for their order key
	// (EnqueueOpts.OrderKey); counted in Queued too.
	OrderWaiting int64 `json:"order_waiting"`
	// Suspended counts the SCHEDULED tasks whose execution suspended
	// (Sleep, WaitFor): part of Scheduled.
	Suspended int64 `json:"suspended"`
	// Totals since the queue was created.
	Submitted int64 `json:"submitted_total"`
	Succeeded int64 `json:"succeeded_total"`
	Retried   int64 `json:"retried_total"`
	Failed    int64 `json:"dead_total"`
	Cancelled int64 `json:"cancelled_total"`
}

// Stats returns the counts of queue.
func (a *Admin) Stats(ctx context.Context, queue string) (*QueueStats, error) {
	if err := checkQueue("queue", queue); err != nil {
		return nil, err
	}
	all, err := a.statsMany(ctx, []string{queue})
	if err != nil {
		return nil, err
	}
	return all[0], nil
}

// QueueExists reports whether queue exists: whether it is in the
// namespace's queue list (Queues), which a queue enters as a task,
// workflow or schedule is submitted to it, a limit, group weight or pause
// is set on it or a lease is taken from it, and leaves when DeleteQueue
// deletes it. The HTTP API answers 404 for an admin action on a queue
// that does not exist; the Go methods act on any queue name (and make it
// exist).
func (a *Admin) QueueExists(ctx context.Context, queue string) (bool, error) {
	if err := checkQueue("queue", queue); err != nil {
		return false, err
	}
	return a.store.QueueRegistered(ctx, queue)
}

// Queues returns the stats of every queue of the namespace, by name.
func (a *Admin) Queues(ctx context.Context) ([]*QueueStats, error) {
	names, err := a.store.QueueNames(ctx)
	if err != nil {
		return nil, err
	}
	sortStrings(names)
	return a.statsMany(ctx, names)
}

func (c *engine) statsMany(ctx context.Context, names []string) ([]*QueueStats, error) {
	counts, err := c.store.Counts(ctx, names)
	if err != nil {
		return nil, err
	}
	out := make([]*QueueStats, len(names))
	for i, n := range names {
		ct := counts[i]
		s := &QueueStats{Name: n, Paused: ct.Paused, Scheduled: ct.Scheduled, Running: ct.Running, Dead: ct.Dead,
			QueuedByPriority: ct.QueuedByPriority, Submitted: ct.Submitted, Succeeded: ct.Succeeded,
			Retried: ct.Retried, Failed: ct.Failed, Cancelled: ct.Cancelled, GroupWaiting: ct.GroupWaiting,
			LimitWaiting: ct.ScopeWaiting, OrderWaiting: ct.OrderWaiting, Suspended: ct.Suspended}
		s.Queued = ct.GroupWaiting + ct.ScopeWaiting + ct.OrderWaiting
		for _, q := range ct.QueuedByPriority {
			s.Queued += q
		}
		out[i] = s
	}
	return out, nil
}

// getMany fetches tasks by id in one round trip; missing ones are nil.
func (c *engine) getMany(ctx context.Context, ids []string) ([]*Task, error) {
	rs, err := c.store.GetMany(ctx, ids)
	if err != nil {
		return nil, err
	}
	out := make([]*Task, len(rs))
	for i, r := range rs {
		if r != nil {
			out[i] = taskOf(r)
		}
	}
	return out, nil
}

// WorkerInfo describes a live worker, from its heartbeat.
type WorkerInfo struct {
	ID            string    `json:"id"`
	Host          string    `json:"host"`
	PID           int       `json:"pid"`
	Queues        []string  `json:"queues"`
	Concurrency   int       `json:"concurrency"`
	Busy          int       `json:"busy"`
	StartedAt     time.Time `json:"started_at"`
	LastHeartbeat time.Time `json:"last_heartbeat"`
	// Kind is WorkerKindGo (a Worker; its heartbeat every 5 s) or
	// WorkerKindHTTP (a lease holder, seen at each of its lease calls;
	// its ID is "http:<its name>"); Library what it says it runs on ("":
	// unknown).
	Kind    string `json:"kind"`
	Library string `json:"library,omitempty"`
	// State is what a Go worker says it does: WorkerRunning, WorkerQuiet
	// or WorkerStopping ("" for a lease holder); Requested what an admin
	// asked of it and it may not have heard yet: "quiet" or "stop"
	// (QuietWorker, StopWorker; "" for nothing).
	State     string `json:"state,omitempty"`
	Requested string `json:"requested,omitempty"`
}

// Kinds of worker (WorkerInfo.Kind).
const (
	WorkerKindGo   = "go"
	WorkerKindHTTP = "http"
)

// Workers returns the workers whose heartbeat has not expired.
func (a *Admin) Workers(ctx context.Context) ([]WorkerInfo, error) {
	rs, err := a.store.Workers(ctx)
	if err != nil {
		return nil, err
	}
	var out []WorkerInfo
	for _, w := range rs {
		out = append(out, WorkerInfo{ID: w.ID, Host: w.Host, PID: w.PID, Queues: w.Queues, Concurrency: w.Concurrency,
			Busy: w.Busy, StartedAt: msTime(w.Started), LastHeartbeat: msTime(w.Heartbeat), Kind: w.Kind, Library: w.Library,
			State: w.State, Requested: w.Control})
	}
	return out, nil
}
