package dtq

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/dtq-dev/dtq/internal/store"
	"github.com/dtq-dev/dtq/internal/taskid"
)

// Durable sleeps and waits of a leased task (CONTRACT §3.10.5): its
// holder asks the lease server, which answers that the sleep or wait is
// over (the holder goes on), or ends the lease with the task suspended
// (the holder stops running it; a later lease resumes it).

// LeaseWait is the answer of SleepLease and WaitLease.
type LeaseWait struct {
	// Suspended is set when the lease ended with the task suspended: its
	// holder stops running it (the task runs again, under a new lease,
	// when it is due).
	Suspended *Suspension
	// Payload is the signal's payload, and TimedOut says no signal came
	// in time, for a wait that is over (WaitLease; Suspended nil).
	Payload  json.RawMessage
	TimedOut bool
	// Child is the end of a child that ended (ChildLease; Suspended nil).
	Child *ChildEnd
}

// ChildEnd is how an awaited child ended (LeaseWait.Child).
type ChildEnd struct {
	ID     string          // the child's task id
	Status Status          // SUCCEEDED, DEAD or CANCELLED
	Result json.RawMessage // its result when SUCCEEDED
	Error  string          // its last error otherwise
}

// SleepLease is Sleep for lease token's execution: step name, d long. The
// answer says the sleep is over (the zero LeaseWait: go on) or the lease
// ended with the task suspended until then. A lease no longer held is
// ErrLeaseLost; one whose task's cancellation was requested ends it
// CANCELLED and is ErrLeaseLost too.
func (s *LeaseServer) SleepLease(ctx context.Context, token, name string, d time.Duration) (LeaseWait, error) {
	if d > MaxSuspend {
		return LeaseWait{}, invalid("seconds", "a sleep of %v is longer than MaxSuspend (%v)", d, MaxSuspend)
	}
	l, ulid, rec, had, err := s.leaseStep(ctx, token, name)
	if err != nil {
		return LeaseWait{}, err
	}
	var until time.Time
	if had {
		if until, err = sleepUntil(name, rec.Result); err != nil {
			return LeaseWait{}, err
		}
	} else {
		if d <= 0 {
			return LeaseWait{}, nil
		}
		data, _ := json.Marshal(sleepRecord{Until: time.Now().Add(d).UTC().Truncate(time.Millisecond)})
		stood, _, err := s.RecordLeaseStep(ctx, token, name, data)
		if err != nil {
			return LeaseWait{}, err
		}
		if until, err = sleepUntil(name, stood); err != nil {
			return LeaseWait{}, err
		}
	}
	if !time.Now().Before(until) {
		return LeaseWait{}, nil
	}
	return s.suspendLease(ctx, l, ulid, &suspension{kind: store.WaitSleep, name: name, until: until})
}

// WaitLease is WaitFor for lease token's execution: signal name, for at
// most timeout. The answer is the signal's payload or its timeout when the
// wait is over, else the lease ended with the task suspended. Errors as
// SleepLease's.
func (s *LeaseServer) WaitLease(ctx context.Context, token, name string, timeout time.Duration) (LeaseWait, error) {
	if timeout <= 0 || timeout > MaxSuspend {
		return LeaseWait{}, invalid("timeout_seconds", "of a wait must be 0.001-%v s (got %v)", MaxSuspend.Seconds(), timeout.Seconds())
	}
	l, ulid, rec, had, err := s.leaseStep(ctx, token, name)
	if err != nil {
		return LeaseWait{}, err
	}
	if had {
		if rec.By == store.StepByTimeout {
			return LeaseWait{TimedOut: true}, nil
		}
		return LeaseWait{Payload: json.RawMessage(rec.Result)}, nil
	}
	return s.suspendLease(ctx, l, ulid, &suspension{kind: store.WaitSignal, name: name, until: time.Now().Add(timeout)})
}

// leaseStep parses token, checks a step's name and reads the step's record
// (had: there is one).
func (s *LeaseServer) leaseStep(ctx context.Context, token, name string) (l leaseToken, ulid string, rec store.StepRecord, had bool, err error) {
	if l, err = parseLeaseToken(token); err != nil {
		return l, "", rec, false, err
	}
	if err = checkStep(name, []byte("null")); err != nil {
		return l, "", rec, false, err
	}
	if _, ulid, err = taskid.Parse(l.id); err != nil {
		return l, "", rec, false, err
	}
	rec, had, err = s.queue(l.queue).store.StepOf(ctx, ulid, name)
	return l, ulid, rec, had, err
}

// suspendLease ends lease l's execution suspended for sp (suspend.lua),
// releasing its limits, and publishes the SCHEDULED event.
func (s *LeaseServer) suspendLease(ctx context.Context, l leaseToken, ulid string, sp *suspension) (LeaseWait, error) {
	q := s.queue(l.queue)
	e, err := q.store.Entry(ctx, l.band, l.entry) // (for the event: the entry goes)
	if err != nil {
		return LeaseWait{}, err
	}
	if e == nil || e.Spec == nil || e.TaskID != l.id {
		return LeaseWait{}, ErrLeaseLost
	}
	f := store.Fence{Run: l.run, Band: l.band, EntryID: l.entry, Worker: l.consumer, Started: l.started}
	code, due, err := q.store.Suspend(ctx, s.durability(), ulid, f, sp.kind, sp.name, time.Until(sp.until))
	var nre *store.NotReplicatedError
	if err != nil && !errors.As(err, &nre) {
		s.redisError("suspend", err)
		return LeaseWait{}, err
	}
	switch code {
	case store.Suspended:
		s.releaseLeaseLimits(ctx, l, 0)
		t := &Task{ID: l.id, Queue: l.queue, Type: e.Spec.Type, Attempt: l.attempt, Priority: l.band}
		s.publish(q.store.Keys().Events(), []string{suspendLine(t, sp, due)})
		return LeaseWait{Suspended: &Suspension{For: sp.kind, Name: sp.name, Until: msTime(due)}}, nil
	case store.SuspendCancelled:
		ended := make([]LeaseEnded, 1)
		if err := s.endGroup(ctx, []leaseEnd{{l: l, set: func(it *store.FinishItem, _ *store.Spec) {
			it.Outcome, it.Text = store.OutcomeCancel, "cancelled"
		}}}, ended); err != nil {
			return LeaseWait{}, err
		}
		if ended[0].Err != nil {
			return LeaseWait{}, ended[0].Err
		}
		return LeaseWait{}, fmt.Errorf("%w: the task was cancelled (it is CANCELLED now)", ErrLeaseLost)
	}
	return LeaseWait{}, ErrLeaseLost
}
