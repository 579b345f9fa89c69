package dtq

import (
	"context"
	"errors"
	"math"
	"strconv"
	"unicode/utf8"

	"github.com/dtq-dev/dtq/internal/store"
	"github.com/dtq-dev/dtq/internal/taskid"
)

// MaxProgressNote bounds a progress report's note, in bytes.
const MaxProgressNote = 1024

// Progress reports how far the handler of ctx's task got: fraction from 0
// to 1 and a note (at most MaxProgressNote bytes of UTF-8). It is shown by
// Get (Task.Progress) while the execution runs, sent as an event (a
// RUNNING event with Progress set) and drawn on the dashboard's task page.
// A report of an execution that is no longer the task's is ErrRunLost.
func Progress(ctx context.Context, fraction float64, note string) error {
	tc, ok := ctx.Value(ctxKey{}).(*taskContext)
	if !ok {
		return ErrNoTask
	}
	t := tc.task
	f := store.Fence{Run: t.run, Band: t.band, EntryID: t.entry, Worker: t.Worker, Started: t.started}
	return tc.client.reportProgress(ctx, t.Queue, t.ID, f, t.Type, t.Attempt, t.Priority, fraction, note)
}

// checkProgress validates a report.
func checkProgress(fraction float64, note string) error {
	if math.IsNaN(fraction) || fraction < 0 || fraction > 1 {
		return invalid("fraction", "must be from 0 to 1 (got %v)", fraction)
	}
	if len(note) > MaxProgressNote || !utf8.ValidString(note) {
		return invalid("note", "must be valid UTF-8 of at most %d bytes", MaxProgressNote)
	}
	return nil
}

// reportProgress records and publishes the progress of task id's run.
func (c *engine) reportProgress(ctx context.Context, queue, id string, f store.Fence, typ string, attempt, prio int, fraction float64,
	note string) error {
	if err := checkProgress(fraction, note); err != nil {
		return err
	}
	_, ulid, err := taskid.Parse(id)
	if err != nil {
		return ErrNotFound
	}
	q := c.queue(queue)
	ok, err := q.store.SetProgress(ctx, ulid, f, fraction, note)
	if err != nil {
		return err
	}
	if !ok {
		return ErrRunLost
	}
	t := &Task{ID: id, Type: typ, Attempt: attempt, Priority: prio}
	c.publish(q.store.Keys().Events(), []string{progressLine(t, fraction, note)})
	return nil
}

// LeaseProgress reports the progress of lease token's task, as Progress
// does for a Go handler's. A lease no longer held is ErrLeaseLost.
func (s *LeaseServer) LeaseProgress(ctx context.Context, token string, fraction float64, note string) error {
	l, err := parseLeaseToken(token)
	if err != nil {
		return err
	}
	f := store.Fence{Run: l.run, Band: l.band, EntryID: l.entry, Worker: l.consumer, Started: l.started}
	err = s.reportProgress(ctx, l.queue, l.id, f, "", l.attempt, l.band, fraction, note)
	if errors.Is(err, ErrRunLost) {
		return ErrLeaseLost
	}
	return err
}

// progressLine is the event line of a progress report: a RUNNING event
// whose last field, empty in every other RUNNING event, is
// "<fraction>|<note>" (parseEvent; eventLine makes tabs and newlines
// spaces).
func progressLine(t *Task, fraction float64, note string) string {
	return eventLine(t, StatusRunning, strconv.FormatFloat(fraction, 'f', -1, 64)+"|"+note)
}
