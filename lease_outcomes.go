package dtq

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"time"

	"github.com/dtq-dev/dtq/internal/backoff"
	"github.com/dtq-dev/dtq/internal/store"
)

// MaxLeaseOutcomes is how many outcomes one EndLeases call records.
const MaxLeaseOutcomes = MaxLeaseBatch

// LeaseOutcome is one lease's outcome for EndLeases: its task succeeded
// with Result (a JSON value; nil is null) or, with Failure set, failed.
type LeaseOutcome struct {
	Token   string
	Result  json.RawMessage
	Failure *LeaseFailure
}

// LeaseEnded is what EndLeases made of one outcome: the task's status
// after it, or why nothing changed — ErrLeaseLost, or a *ValidationError
// for a malformed outcome.
type LeaseEnded struct {
	Status Status
	Err    error

	// task is the task as the outcome left it: what the lease knew of it
	// (current reports read it again), or, for an outcome recorded before,
	// the task as read (current).
	task    *Task
	current bool
}

// EndLeases records the outcomes of many leases, as CompleteLease and
// FailLease record one, and answers each, in order. A holder reports the
// outcomes of its tasks together: those of one queue cost one read of
// their entries and one finish. Its error is the call's (Redis); an
// outcome's own is in its LeaseEnded. Recording an outcome again (a retry
// after a lost answer) changes nothing and answers the task's status.
func (s *LeaseServer) EndLeases(ctx context.Context, outs []LeaseOutcome) ([]LeaseEnded, error) {
	if len(outs) > MaxLeaseOutcomes {
		return nil, invalid("outcomes", "must be at most %d (got %d)", MaxLeaseOutcomes, len(outs))
	}
	ans := make([]LeaseEnded, len(outs))
	// Grouped by queue and holder: one finish records a holder's outcomes.
	groups := map[string][]leaseEnd{}
	var order []string
	for i, o := range outs {
		e, err := leaseEndOf(o)
		if err != nil {
			ans[i].Err = err
			continue
		}
		e.i = i
		key := e.l.queue + "\x00" + e.l.consumer
		if _, ok := groups[key]; !ok {
			order = append(order, key)
		}
		groups[key] = append(groups[key], e)
	}
	for _, key := range order {
		if err := s.endGroup(ctx, groups[key], ans); err != nil {
			return nil, err
		}
	}
	return ans, nil
}

// leaseEnd is an outcome to record: the lease's execution, what to set on
// its finish item, and the pause of its limits (a RetryAfter).
type leaseEnd struct {
	i     int // its place in the call
	l     leaseToken
	pause time.Duration
	set   func(*store.FinishItem, *store.Spec)
}

// leaseEndOf checks outcome o and says what recording it sets.
func leaseEndOf(o LeaseOutcome) (leaseEnd, error) {
	l, err := parseLeaseToken(o.Token)
	if err != nil {
		return leaseEnd{}, err
	}
	if o.Failure == nil {
		result := o.Result
		if result == nil {
			result = json.RawMessage("null")
		}
		if !json.Valid(result) {
			return leaseEnd{}, invalid("result", "must be a JSON value")
		}
		return leaseEnd{l: l, set: func(it *store.FinishItem, _ *store.Spec) {
			it.Outcome, it.Text = store.OutcomeOK, string(result)
		}}, nil
	}
	f := *o.Failure
	if f.RetryAfter < 0 || f.RetryAfter > MaxDelay {
		return leaseEnd{}, invalid("retry_after", "must be 0-%v (got %v)", MaxDelay, f.RetryAfter)
	}
	if f.Error == "" {
		f.Error = "failed"
	}
	e := leaseEnd{l: l, set: func(it *store.FinishItem, sp *store.Spec) {
		it.Text = truncate(f.Error, maxErrorText)
		switch {
		case f.Permanent:
			it.Outcome = store.OutcomeDead
		case f.RetryAfter > 0:
			it.Outcome, it.RetryDelay = store.OutcomeRetry, roundUpMs(f.RetryAfter)
		default:
			b := backoff.Backoff{Base: time.Second, Max: 10 * time.Minute}
			for range it.Attempt - 1 {
				b.Next()
			}
			it.Outcome, it.RetryDelay = store.OutcomeRetry, b.Next()
		}
		if it.Outcome == store.OutcomeRetry && it.Attempt >= sp.MaxAttempts {
			it.Outcome = store.OutcomeDead // no attempts left
		}
	}}
	if !f.Permanent {
		e.pause = f.RetryAfter
	}
	return e, nil
}

// endGroup records the outcomes es, of one queue and holder, into ans.
func (s *LeaseServer) endGroup(ctx context.Context, es []leaseEnd, ans []LeaseEnded) error {
	q := s.queue(es[0].l.queue)
	at := make([]store.EntryAt, len(es))
	for i, e := range es {
		at[i] = store.EntryAt{Band: e.l.band, ID: e.l.entry}
	}
	// The entry a task runs from holds its fields (it stays until the
	// task's outcome is recorded).
	entries, err := q.store.Entries(ctx, at)
	if err != nil {
		return err
	}
	var items []store.FinishItem
	var live []int // es's index of each item
	for i, e := range es {
		en := entries[i]
		if en == nil || en.Spec == nil || en.TaskID != e.l.id {
			ans[e.i] = s.endedBefore(ctx, e.l)
			continue
		}
		l := e.l
		it := store.FinishItem{TaskID: l.id, IdemHash: en.Spec.IdemHash, Band: l.band, EntryID: l.entry, Run: l.run, Crashes: l.crashes,
			Attempt: l.attempt, Started: l.started}
		it.Born = en.BornSpec()
		if sp := en.Spec; sp.Workflow != "" {
			it.Workflow, it.Step, it.Prev = sp.Workflow, sp.Step, sp.Prev
		}
		e.set(&it, en.Spec)
		items = append(items, it)
		live = append(live, i)
	}
	if len(items) == 0 {
		return nil
	}
	keepSucceeded, keepOthers := s.cfg.retentions()
	res, err := q.store.Finish(ctx, store.FinishConfig{Retention: keepOthers, KeepSucceeded: keepSucceeded > 0,
		IdemWindow: s.cfg.IdempotencyWindow, Durability: s.durability()}, es[0].l.consumer, items)
	var nre *store.NotReplicatedError
	if err != nil && !errors.As(err, &nre) {
		s.redisError("finish", err)
		return err
	}
	var lines []string
	for k, i := range live {
		e, it, spec := es[i], items[k], entries[i].Spec
		if res[k] == "" {
			ans[e.i].Err = ErrLeaseLost
			continue
		}
		s.releaseLeaseLimits(ctx, e.l, e.pause)
		errText := ""
		if it.Outcome != store.OutcomeOK {
			errText = it.Text
		}
		status := Status(res[k])
		t := &Task{ID: e.l.id, Queue: e.l.queue, Type: spec.Type, Attempt: e.l.attempt, Priority: e.l.band, Worker: e.l.consumer,
			TraceParent: spec.Trace, parent: spec.Parent}
		if status.Finished() {
			s.wakeParent(ctx, t)
		}
		// The execution's span, from its start to now: the holder ran it.
		startMs, _ := strconv.ParseInt(e.l.started, 10, 64)
		_, span := s.startRunSpan(ctx, t, time.UnixMilli(startMs))
		endRunSpan(span, string(status), errText)
		lines = append(lines, eventLine(t, status, errText))
		ans[e.i] = LeaseEnded{Status: status, task: &Task{ID: t.ID, Queue: t.Queue, Type: t.Type, Status: status}}
	}
	if len(lines) > 0 {
		s.publish(q.store.Keys().Events(), lines)
	}
	return nil
}

// endedBefore answers an outcome whose execution's entry is gone: trimmed
// after its outcome was recorded — by this lease (a retried call answers
// the task's status) or by another execution (the lease is lost).
func (s *LeaseServer) endedBefore(ctx context.Context, l leaseToken) LeaseEnded {
	got, err := s.get(ctx, l.id)
	switch {
	case err == nil && got.run == l.run && got.Status.Finished():
		return LeaseEnded{Status: got.Status, task: got, current: true}
	case err != nil && !errors.Is(err, ErrNotFound):
		return LeaseEnded{Err: err}
	}
	return LeaseEnded{Err: ErrLeaseLost}
}

// endOne records one outcome and answers its task as it is now.
func (s *LeaseServer) endOne(ctx context.Context, o LeaseOutcome) (*Task, error) {
	ans, err := s.EndLeases(ctx, []LeaseOutcome{o})
	if err != nil {
		return nil, err
	}
	a := ans[0]
	if a.Err != nil {
		return nil, a.Err
	}
	if a.current {
		return a.task, nil
	}
	got, err := s.get(ctx, a.task.ID)
	if errors.Is(err, ErrNotFound) {
		return a.task, nil // deleted as it succeeded (no retention of succeeded tasks)
	}
	return got, err
}
