package store

import (
	"context"
	"strconv"
	"time"

	"github.com/dtq-dev/dtq/internal/taskid"
	"github.com/redis/rueidis"
)

// Cancel runs cancel.lua for task id of this queue. It returns the task's
// status after the call ("" when there is no such task) and, when this call
// cancelled a QUEUED or SCHEDULED task, its type (else ""). A cancelled
// entry admitted under its group's window gives its group room: the
// group's next waiters move in (gpromote.lua; a failure there is left to
// the scheduler's SweepGroups).
func (q *Queue) Cancel(ctx context.Context, id string, retention time.Duration) (status, cancelledType string, err error) {
	_, ulid, perr := taskid.Parse(id)
	if perr != nil {
		return "", "", nil //nolint:nilerr // not a task id: no such task, which "" says
	}
	band, eid, born := taskid.Entry(ulid)
	if !born {
		band, eid = 0, ""
	}
	ks := []string{q.k.Info(), q.k.Schedule(), q.k.Done(), q.k.Run(), q.k.Task(ulid), q.k.Finished(), q.k.Band(band),
		q.k.GroupWait(), q.k.ScopeWait()}
	ks = q.k.bands(ks)
	ks = append(ks, "", q.k.GroupCount(), q.k.Suspended(), q.k.OrderHold(), q.k.OrderLine(), q.k.Wakeup(), q.k.OrderIndex())
	const wfAt = 19 // ks[wfAt]: the workflow's hash, below (KEYS[20])
	// A step of a workflow is cancelled together with its step's end in the
	// workflow: the script names the workflow, and is called again with it.
	wf := ""
	for range 2 {
		args := []string{id, q.k.Events(), q.k.Cancels(), ms(retention), Group, eid, itoa(band), ulid, wf, q.name}
		ks[wfAt] = q.k.Workflow(invalidULID)
		if wf != "" {
			ks[wfAt] = q.k.Workflow(wf)
		}
		v, err := cancelScript.Exec(ctx, q.s.r, ks, args).AsStrSlice()
		if err != nil {
			return "", "", err
		}
		switch {
		case len(v) == 2 && v[0] == "WF" && wf == "":
			wf = v[1]
			continue
		case len(v) == 1:
			return v[0], "", nil
		case len(v) >= 2 && v[0] == StatusCancelled:
			if ms := v[2:]; len(ms) > 0 {
				_, _ = q.promoteWaiters(ctx, ms)
			}
			return v[0], v[1], nil
		}
		return "", "", unexpected("cancel", v)
	}
	return "", "", unexpected("cancel", "a workflow named twice")
}

// DLQAction is what DLQ does to dead tasks.
type DLQAction string

// Actions of DLQ.
const (
	Requeue DLQAction = "requeue"
	Discard DLQAction = "discard"
)

// DLQResult is what DLQ did to one task.
type DLQResult int

// Results of DLQ (dlq.lua's codes).
const (
	// DLQNotDead: the task is no dead letter — not DEAD, gone, or (for a
	// requeue) discarded already; nothing was done.
	DLQNotDead DLQResult = 0
	// DLQDone: the task was requeued or discarded.
	DLQDone DLQResult = 1
	// DLQDiscardedAlready: a discard of a task discarded already; nothing
	// was done.
	DLQDiscardedAlready DLQResult = 2
)

// DLQ runs dlq.lua for task ids of this queue; it reports, per id, what it
// did.
func (q *Queue) DLQ(ctx context.Context, action DLQAction, ids []string, retention time.Duration) ([]DLQResult, error) {
	ks := make([]string, 0, 15+len(ids))
	ks = append(ks, q.k.Info(), q.k.DLQ(), q.k.Done())
	ks = q.k.bands(ks)
	ks = append(ks, q.k.GroupWait(), q.k.GroupCount(), q.k.OrderHold(), q.k.OrderLine())
	args := append(make([]string, 0, 4+len(ids)), string(action), q.k.Events(), ms(retention), itoa(len(ids)))
	for _, id := range ids {
		ks = append(ks, q.k.Task(ulidOf(id)))
		args = append(args, id)
	}
	v, err := dlqScript.Exec(ctx, q.s.r, ks, args).AsIntSlice()
	if err != nil {
		return nil, err
	}
	if len(v) != len(ids) {
		return nil, unexpected("dlq", v)
	}
	out := make([]DLQResult, len(v))
	for i, n := range v {
		if n < 0 || n > int64(DLQDiscardedAlready) {
			return nil, unexpected("dlq", v)
		}
		out[i] = DLQResult(n)
	}
	return out, nil
}

// DeadEntry is one entry of a dead-letter stream.
type DeadEntry struct {
	EntryID string
	TaskID  string
	Reason  string
	At      int64 // Unix ms
}

// DeadLetters returns up to limit dead-letter entries, newest first,
// before entry before ("" for the newest).
func (q *Queue) DeadLetters(ctx context.Context, limit int, before string) ([]DeadEntry, error) {
	end := "+"
	if before != "" {
		end = "(" + before
	}
	c := q.s.r
	es, err := c.Do(ctx, c.B().Xrevrange().Key(q.k.DLQ()).End(end).Start("-").Count(int64(limit)).Build()).AsXRange()
	return deadEntries(es), err
}

// DeadLettersUpTo returns up to limit dead-letter entries, oldest first,
// up to entry last (inclusive).
func (q *Queue) DeadLettersUpTo(ctx context.Context, last string, limit int) ([]DeadEntry, error) {
	c := q.s.r
	es, err := c.Do(ctx, c.B().Xrange().Key(q.k.DLQ()).Start("-").End(last).Count(int64(limit)).Build()).AsXRange()
	return deadEntries(es), err
}

// DropDeadLetters deletes dead-letter entries by entry id.
func (q *Queue) DropDeadLetters(ctx context.Context, entryIDs []string) error {
	c := q.s.r
	return c.Do(ctx, c.B().Xdel().Key(q.k.DLQ()).Id(entryIDs...).Build()).Error()
}

func deadEntries(es []rueidis.XRangeEntry) []DeadEntry {
	out := make([]DeadEntry, len(es))
	for i, e := range es {
		out[i] = DeadEntry{EntryID: e.ID, TaskID: e.FieldValues[DeadID], Reason: e.FieldValues[DeadReason], At: entryMs(e.ID)}
	}
	return out
}

// SetPaused pauses or resumes the queue; a resume wakes paused workers.
// A pause notes its time (InfoPausedAt, Redis time read after the flag is
// set): no claim delivered after it starts.
func (q *Queue) SetPaused(ctx context.Context, paused bool) error {
	c := q.s.r
	v := "0"
	if paused {
		v = "1"
	}
	cmds := rueidis.Commands{c.B().Hset().Key(q.k.Info()).FieldValue().FieldValue(InfoPaused, v).Build()}
	if paused {
		cmds = append(cmds, c.B().Time().Build())
	} else {
		cmds = append(cmds, c.B().Hdel().Key(q.k.Info()).Field(InfoPausedAt).Build(),
			c.B().Xadd().Key(q.k.Wakeup()).Maxlen().Threshold("1").Id("*").FieldValue().FieldValue("w", "1").Build())
	}
	res := c.DoMulti(ctx, cmds...)
	for _, r := range res {
		if err := r.Error(); err != nil {
			return err
		}
	}
	if !paused {
		return nil
	}
	t, err := res[1].AsStrSlice()
	if err != nil {
		return err
	}
	at, err := redisMs(t)
	if err != nil {
		return err
	}
	return c.Do(ctx, c.B().Hset().Key(q.k.Info()).FieldValue().FieldValue(InfoPausedAt, strconv.FormatInt(at, 10)).Build()).Error()
}

// DeadLettersRange returns up to limit dead-letter entries from start to
// end (stream ids, "-" and "+" for open ends; "(" before an id excludes
// it), oldest first.
func (q *Queue) DeadLettersRange(ctx context.Context, start, end string, limit int) ([]DeadEntry, error) {
	c := q.s.r
	es, err := c.Do(ctx, c.B().Xrange().Key(q.k.DLQ()).Start(start).End(end).Count(int64(limit)).Build()).AsXRange()
	return deadEntries(es), err
}
