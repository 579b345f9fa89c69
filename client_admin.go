package dtq

import (
	"context"
	"strconv"
	"strings"
	"time"

	"github.com/dtq-dev/dtq/internal/keys"
	"github.com/dtq-dev/dtq/internal/taskid"
	"github.com/dtq-dev/dtq/internal/taskscript"
	"github.com/redis/rueidis"
)

// Cancel cancels a task. A QUEUED or SCHEDULED task is CANCELLED at once. A
// RUNNING task's handler context is cancelled on whichever worker runs it
// (cause ErrCancelled) and the task ends CANCELLED; the returned task shows
// CancelRequested until then. Cancelling a CANCELLED task does nothing; a
// SUCCEEDED or DEAD task returns ErrNotCancellable.
func (c *Client) Cancel(ctx context.Context, id string) (*Task, error) {
	queue, _, err := taskid.Parse(id)
	if err != nil {
		return nil, ErrNotFound
	}
	k := keys.NewTasks(c.cfg.Namespace, queue)
	status, cancelledType, err := taskscript.Cancel(ctx, c.redis, k, id, c.cfg.Retention)
	if err != nil {
		return nil, err
	}
	if o := c.cfg.Observer; o != nil && cancelledType != "" {
		o.TaskEnded(queue, cancelledType, OutcomeCancelled)
	}
	switch Status(status) {
	case "":
		return nil, ErrNotFound
	case StatusSucceeded, StatusDead:
		return nil, ErrNotCancellable
	}
	c.audit(ctx, "cancel", queue, id, status)
	return c.Get(ctx, id)
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
func (c *Client) ListDead(ctx context.Context, queue string, limit int, cursor string) (letters []DeadLetter, next string, err error) {
	if err := keys.CheckName("queue", queue); err != nil {
		return nil, "", invalid("queue", "%v", err)
	}
	if limit <= 0 || limit > 1000 {
		return nil, "", invalid("limit", "must be 1-1000 (got %d)", limit)
	}
	k := keys.NewTasks(c.cfg.Namespace, queue)
	end := "+"
	if cursor != "" {
		if !streamID(cursor) {
			return nil, "", invalid("cursor", "is not a cursor from a previous page")
		}
		end = "(" + cursor
	}
	entries, err := c.redis.Do(ctx, c.redis.B().Xrevrange().Key(k.DLQ()).End(end).Start("-").Count(int64(limit)).Build()).AsXRange()
	if err != nil {
		return nil, "", err
	}
	ids := make([]string, len(entries))
	for i, e := range entries {
		ids[i] = e.FieldValues["i"]
	}
	tasks, err := c.getMany(ctx, ids)
	if err != nil {
		return nil, "", err
	}
	for i, e := range entries {
		if tasks[i] == nil {
			continue
		}
		ms, _ := strconv.ParseInt(e.ID[:indexByte(e.ID, '-')], 10, 64)
		letters = append(letters, DeadLetter{Task: tasks[i], Reason: e.FieldValues["r"], DeadAt: time.UnixMilli(ms).UTC()})
	}
	if len(entries) == limit {
		next = entries[len(entries)-1].ID
	}
	return letters, next, nil
}

// streamID reports whether s is a stream entry id, "<ms>-<seq>".
func streamID(s string) bool {
	ms, seq, ok := strings.Cut(s, "-")
	_, err1 := strconv.ParseUint(ms, 10, 64)
	_, err2 := strconv.ParseUint(seq, 10, 64)
	return ok && err1 == nil && err2 == nil
}

// Requeue moves a DEAD task back to QUEUED, with its attempt and crash
// counts reset and its history kept.
func (c *Client) Requeue(ctx context.Context, id string) (*Task, error) {
	if err := c.dlqOne(ctx, taskscript.Requeue, id); err != nil {
		return nil, err
	}
	return c.Get(ctx, id)
}

// Discard removes a DEAD task from its dead-letter stream; it expires after
// the retention.
func (c *Client) Discard(ctx context.Context, id string) error {
	return c.dlqOne(ctx, taskscript.Discard, id)
}

func (c *Client) dlqOne(ctx context.Context, action taskscript.DLQAction, id string) error {
	queue, _, err := taskid.Parse(id)
	if err != nil {
		return ErrNotFound
	}
	done, err := taskscript.DLQ(ctx, c.redis, keys.NewTasks(c.cfg.Namespace, queue), action, []string{id}, c.cfg.Retention)
	if err != nil {
		return err
	}
	if !done[0] {
		if _, err := c.Get(ctx, id); err != nil {
			return err
		}
		return ErrNotDead
	}
	c.audit(ctx, string(action), queue, id, "")
	return nil
}

// RequeueAll requeues every dead letter of queue and returns how many.
func (c *Client) RequeueAll(ctx context.Context, queue string) (int, error) {
	return c.dlqAll(ctx, taskscript.Requeue, queue)
}

// Purge discards every dead letter of queue and returns how many.
func (c *Client) Purge(ctx context.Context, queue string) (int, error) {
	return c.dlqAll(ctx, taskscript.Discard, queue)
}

func (c *Client) dlqAll(ctx context.Context, action taskscript.DLQAction, queue string) (int, error) {
	if err := keys.CheckName("queue", queue); err != nil {
		return 0, invalid("queue", "%v", err)
	}
	k := keys.NewTasks(c.cfg.Namespace, queue)
	// Only the entries there now: a requeued task that dies again while
	// this runs is not requeued a second time (nor forever).
	last, err := c.redis.Do(ctx, c.redis.B().Xrevrange().Key(k.DLQ()).End("+").Start("-").Count(1).Build()).AsXRange()
	if err != nil {
		return 0, err
	}
	total := 0
	for len(last) > 0 {
		entries, err := c.redis.Do(ctx, c.redis.B().Xrange().Key(k.DLQ()).Start("-").End(last[0].ID).Count(256).Build()).AsXRange()
		if err != nil {
			return total, err
		}
		if len(entries) == 0 {
			break
		}
		ids := make([]string, len(entries))
		for i, e := range entries {
			ids[i] = e.FieldValues["i"]
		}
		done, err := taskscript.DLQ(ctx, c.redis, k, action, ids, c.cfg.Retention)
		if err != nil {
			return total, err
		}
		// Entries whose task is no longer DEAD (or gone) are dropped too.
		var stale []string
		for i, ok := range done {
			if ok {
				total++
			} else {
				stale = append(stale, entries[i].ID)
			}
		}
		if len(stale) > 0 {
			if err := c.redis.Do(ctx, c.redis.B().Xdel().Key(k.DLQ()).Id(stale...).Build()).Error(); err != nil {
				return total, err
			}
		}
	}
	c.audit(ctx, string(action)+"-all", queue, "", strconv.Itoa(total))
	return total, nil
}

// Pause stops workers from starting tasks of queue (running ones finish);
// submissions are still accepted.
func (c *Client) Pause(ctx context.Context, queue string) error { return c.setPaused(ctx, queue, true) }

// Resume lets workers start tasks of queue again.
func (c *Client) Resume(ctx context.Context, queue string) error {
	return c.setPaused(ctx, queue, false)
}

func (c *Client) setPaused(ctx context.Context, queue string, paused bool) error {
	if err := keys.CheckName("queue", queue); err != nil {
		return invalid("queue", "%v", err)
	}
	q := c.queue(queue)
	if err := c.register(ctx, q); err != nil {
		return err
	}
	v, action := "0", "resume"
	if paused {
		v, action = "1", "pause"
	}
	cmds := rueidis.Commands{c.redis.B().Hset().Key(q.keys.Info()).FieldValue().FieldValue("paused", v).Build()}
	if !paused {
		cmds = append(cmds, c.redis.B().Xadd().Key(q.keys.Wakeup()).Maxlen().Threshold("1").Id("*").FieldValue().FieldValue("w", "1").Build())
	}
	for _, r := range c.redis.DoMulti(ctx, cmds...) {
		if err := r.Error(); err != nil {
			return err
		}
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
	// QueuedByPriority[p] counts queued tasks of priority p.
	QueuedByPriority [keys.Bands]int64 `json:"queued_by_priority"`
	// Totals since the queue was created.
	Submitted int64 `json:"submitted_total"`
	Succeeded int64 `json:"succeeded_total"`
	Retried   int64 `json:"retried_total"`
	Failed    int64 `json:"dead_total"`
	Cancelled int64 `json:"cancelled_total"`
}

// Stats returns the counts of queue.
func (c *Client) Stats(ctx context.Context, queue string) (*QueueStats, error) {
	if err := keys.CheckName("queue", queue); err != nil {
		return nil, invalid("queue", "%v", err)
	}
	all, err := c.statsMany(ctx, []string{queue})
	if err != nil {
		return nil, err
	}
	return all[0], nil
}

// Queues returns the stats of every queue of the namespace, by name.
func (c *Client) Queues(ctx context.Context) ([]*QueueStats, error) {
	names, err := c.redis.Do(ctx, c.redis.B().Smembers().Key(keys.Queues(c.cfg.Namespace)).Build()).AsStrSlice()
	if err != nil {
		return nil, err
	}
	sortStrings(names)
	return c.statsMany(ctx, names)
}

func (c *Client) statsMany(ctx context.Context, names []string) ([]*QueueStats, error) {
	cmds := make(rueidis.Commands, 0, 3*len(names))
	for _, n := range names {
		k := keys.NewTasks(c.cfg.Namespace, n)
		cmds = append(cmds, c.redis.B().Hgetall().Key(k.Info()).Build(),
			c.redis.B().Zcard().Key(k.Schedule()).Build(),
			c.redis.B().Xlen().Key(k.DLQ()).Build())
	}
	res := c.redis.DoMulti(ctx, cmds...)
	out := make([]*QueueStats, len(names))
	for i, n := range names {
		info, err := res[3*i].AsStrMap()
		if err != nil {
			return nil, err
		}
		num := func(f string) int64 { v, _ := strconv.ParseInt(info[f], 10, 64); return v }
		s := &QueueStats{Name: n, Paused: info["paused"] == "1", Running: num("running"),
			Submitted: num("submitted"), Succeeded: num("succeeded"), Retried: num("retried"),
			Failed: num("dead"), Cancelled: num("cancelled")}
		for p := range keys.Bands {
			s.QueuedByPriority[p] = max(0, num("q"+strconv.Itoa(p)))
			s.Queued += s.QueuedByPriority[p]
		}
		s.Scheduled, _ = res[3*i+1].AsInt64()
		s.Dead, _ = res[3*i+2].AsInt64()
		out[i] = s
	}
	return out, nil
}

// getMany fetches tasks by id in one round trip; missing ones are nil.
func (c *Client) getMany(ctx context.Context, ids []string) ([]*Task, error) {
	cmds := make(rueidis.Commands, len(ids))
	queues := make([]string, len(ids))
	for i, id := range ids {
		q, ulid, err := taskid.Parse(id)
		if err != nil {
			q, ulid = "invalid", "invalid"
		}
		queues[i] = q
		cmds[i] = c.redis.B().Hgetall().Key(keys.NewTasks(c.cfg.Namespace, q).Task(ulid)).Build()
	}
	if len(cmds) == 0 {
		return nil, nil
	}
	out := make([]*Task, len(ids))
	for i, r := range c.redis.DoMulti(ctx, cmds...) {
		h, err := r.AsStrMap()
		if err != nil {
			return nil, err
		}
		if len(h) > 0 {
			out[i] = taskFromHash(ids[i], queues[i], h)
		}
	}
	return out, nil
}

// AuditEntry is one admin action.
type AuditEntry struct {
	ID     string    `json:"id"`
	Time   time.Time `json:"time"`
	Action string    `json:"action"`
	Queue  string    `json:"queue,omitempty"`
	TaskID string    `json:"task_id,omitempty"`
	Detail string    `json:"detail,omitempty"`
}

// audit records an admin action; failures are logged, not returned (the
// action itself happened).
func (c *Client) audit(ctx context.Context, action, queue, task, detail string) {
	cmd := c.redis.B().Xadd().Key(keys.Audit(c.cfg.Namespace)).Maxlen().Almost().
		Threshold(strconv.FormatInt(c.cfg.AuditMaxLen, 10)).Id("*").FieldValue().
		FieldValue("action", action).FieldValue("queue", queue).FieldValue("task", task).FieldValue("detail", detail).Build()
	if err := c.redis.Do(ctx, cmd).Error(); err != nil {
		c.log.Warn("recording an audit entry failed", "action", action, logQueue, queue, logTaskID, task, "error", err)
	}
}

// Audit returns up to limit admin actions, newest first.
func (c *Client) Audit(ctx context.Context, limit int) ([]AuditEntry, error) {
	if limit <= 0 || limit > 1000 {
		return nil, invalid("limit", "must be 1-1000 (got %d)", limit)
	}
	entries, err := c.redis.Do(ctx, c.redis.B().Xrevrange().Key(keys.Audit(c.cfg.Namespace)).End("+").Start("-").Count(int64(limit)).Build()).AsXRange()
	if err != nil {
		return nil, err
	}
	out := make([]AuditEntry, len(entries))
	for i, e := range entries {
		ms, _ := strconv.ParseInt(e.ID[:indexByte(e.ID, '-')], 10, 64)
		f := e.FieldValues
		out[i] = AuditEntry{ID: e.ID, Time: time.UnixMilli(ms).UTC(), Action: f["action"], Queue: f["queue"], TaskID: f["task"], Detail: f["detail"]}
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
}

// Workers returns the workers whose heartbeat has not expired.
func (c *Client) Workers(ctx context.Context) ([]WorkerInfo, error) {
	ns := c.cfg.Namespace
	now := strconv.FormatInt(time.Now().UnixMilli(), 10)
	ids, err := c.redis.Do(ctx, c.redis.B().Zrangebyscore().Key(keys.Workers(ns)).Min(now).Max("+inf").Build()).AsStrSlice()
	if err != nil || len(ids) == 0 {
		return nil, err
	}
	cmds := make(rueidis.Commands, len(ids))
	for i, id := range ids {
		cmds[i] = c.redis.B().Hgetall().Key(keys.Worker(ns, id)).Build()
	}
	var out []WorkerInfo
	for _, r := range c.redis.DoMulti(ctx, cmds...) {
		h, err := r.AsStrMap()
		if err != nil {
			return nil, err
		}
		if len(h) == 0 {
			continue
		}
		atoi := func(s string) int { n, _ := strconv.Atoi(s); return n }
		out = append(out, WorkerInfo{
			ID: h["id"], Host: h["host"], PID: atoi(h["pid"]), Queues: splitComma(h["queues"]),
			Concurrency: atoi(h["concurrency"]), Busy: atoi(h["busy"]),
			StartedAt: msTime(h["started"]), LastHeartbeat: msTime(h["heartbeat"]),
		})
	}
	return out, nil
}
