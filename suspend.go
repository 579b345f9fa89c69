package dtq

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/dtq-dev/dtq/internal/store"
)

// MaxSuspend bounds a durable sleep and a wait's timeout.
const MaxSuspend = 365 * 24 * time.Hour

// Suspension says what a suspended task waits for: it is SCHEDULED, due
// at Until, and its next execution resumes it with its recorded steps.
type Suspension struct {
	// For is "sleep" (Sleep), "signal" (WaitFor) or "child" (Child).
	For string `json:"for"`
	// Name is the sleep's step name, the signal's, or the child's step.
	Name string `json:"name"`
	// Until is when it is due: the sleep's end, the wait's timeout, or
	// its next check of its child.
	Until time.Time `json:"until"`
}

// suspension is what an execution suspended for.
type suspension struct {
	kind, name string
	until      time.Time
}

// sleepRecord is a sleep's step record: when it ends.
type sleepRecord struct {
	Until time.Time `json:"sleep_until"`
	// RunNow, Unix ms, ends the sleep then: Admin.RunNow (runnow.lua
	// writes it into the record).
	RunNow int64 `json:"run_now_ms,omitempty"`
}

// Sleep is a durable sleep: a step (its name unique within the task, as
// Step's) that ends the current execution without failing it. The task
// leaves the worker — its slot, its limits' leases and its group's window
// are free meanwhile —, waits SCHEDULED (Task.Suspended says until when)
// and is due again after d, on any worker, with its attempt kept; the
// handler then runs from the start, its recorded steps returning their
// results, and this Sleep returns nil at once.
//
// Sleep returns ErrSuspended when the execution must end: the handler
// returns it (or any error: the execution suspends whatever it returns,
// and later steps of it return ErrSuspended). d is at most MaxSuspend; d
// <= 0 returns nil at once. Outside a handler Sleep is ErrNoTask.
func Sleep(ctx context.Context, name string, d time.Duration) error {
	if d > MaxSuspend {
		return invalid("sleep", "of %v is longer than MaxSuspend (%v)", d, MaxSuspend)
	}
	sc, rec, done, err := beginStep(ctx, name)
	if err != nil {
		return err
	}
	var until time.Time
	if done {
		until, err = sleepUntil(name, rec.Result)
		if err != nil {
			return err
		}
	} else {
		if d <= 0 {
			return nil
		}
		data, _ := json.Marshal(sleepRecord{Until: time.Now().Add(d).UTC().Truncate(time.Millisecond)})
		stood, err := sc.record(ctx, name, data)
		if err != nil {
			return err
		}
		if until, err = sleepUntil(name, stood); err != nil {
			return err
		}
	}
	if !time.Now().Before(until) {
		return nil // slept: this is a resumed execution
	}
	return sc.tc.steps.suspendFor(store.WaitSleep, name, until)
}

// sleepUntil reads a sleep's step record.
func sleepUntil(name string, data []byte) (time.Time, error) {
	var r sleepRecord
	if err := json.Unmarshal(data, &r); err != nil || r.Until.IsZero() {
		return time.Time{}, fmt.Errorf("dtq: step %q is not a sleep (its record %s): a step's name is its own", name, truncate(string(data), 80))
	}
	if r.RunNow != 0 {
		return time.UnixMilli(r.RunNow), nil
	}
	return r.Until, nil
}

// WaitFor waits for the signal name (Client.Signal) and returns its
// payload. A signal delivered before the call — even before the task
// started — is kept for it and returned at once. Else the execution ends
// without failing, as Sleep's does (WaitFor returns ErrSuspended, for the
// handler to return): the task waits SCHEDULED until the signal comes or
// timeout passes, then runs again, and this WaitFor returns the payload —
// or ErrWaitTimedOut. Which of the two came first is recorded once, as
// the step record of name: a signal after the timeout is refused
// (ErrSignalDelivered), and a resumed execution gets the same answer.
//
// name is the step's name too (unique within the task, 1-MaxStepName
// bytes of UTF-8); timeout is 1ms-MaxSuspend. Outside a handler WaitFor
// is ErrNoTask.
func WaitFor(ctx context.Context, name string, timeout time.Duration) (json.RawMessage, error) {
	if timeout <= 0 || timeout > MaxSuspend {
		return nil, invalid("timeout", "of a wait must be 1ms-%v (got %v)", MaxSuspend, timeout)
	}
	sc, rec, done, err := beginStep(ctx, name)
	if err != nil {
		return nil, err
	}
	if !done && sc.fresh {
		// The task's first execution read no records, but a signal may
		// have come before it ran.
		if rec, done, err = sc.readOne(ctx, name); err != nil {
			return nil, fmt.Errorf("dtq: reading the task's steps: %w", err)
		}
	}
	if done {
		if rec.By == store.StepByTimeout {
			return nil, fmt.Errorf("%w: signal %q, after %v", ErrWaitTimedOut, name, timeout)
		}
		return json.RawMessage(rec.Result), nil
	}
	return nil, sc.tc.steps.suspendFor(store.WaitSignal, name, time.Now().Add(timeout))
}

// suspendFor notes that the execution suspends, for what, until when; the
// worker ends it so (Worker.suspend). It returns ErrSuspended.
func (rs *runSteps) suspendFor(kind, name string, until time.Time) error {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	if rs.suspend == nil {
		rs.suspend = &suspension{kind: kind, name: name, until: until}
	}
	return ErrSuspended
}

// suspended returns what the execution suspended for (nil: it did not).
func (rs *runSteps) suspended() *suspension {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	return rs.suspend
}

// suspensionOf is the public view of a record's wait ("<kind> <name>").
func suspensionOf(wait string, due int64) *Suspension {
	kind, name, ok := strings.Cut(wait, " ")
	if !ok {
		return nil
	}
	return &Suspension{For: kind, Name: name, Until: msTime(due)}
}

// resume forgets the execution's suspension (it ended otherwise).
func (rs *runSteps) resume() {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	rs.suspend = nil
}
