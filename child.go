package dtq

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"time"
)

// childResult is the suffix of the step name under which Child records its
// child's outcome (the step name itself records the child's id).
const childResult = ".result"

// How often a parent checks its child while it waits: half the child's
// age, within these bounds.
const (
	childCheckMin = time.Second
	childCheckMax = time.Minute
)

// ChildError is Child's answer for a child that ended DEAD or CANCELLED.
type ChildError struct {
	ID     string // the child's task id
	Status Status // DEAD or CANCELLED
	Err    string // its last error
}

func (e *ChildError) Error() string {
	return fmt.Sprintf("dtq: child task %s ended %s: %s", e.ID, e.Status, e.Err)
}

// Unwrap makes errors.Is(err, ErrChildFailed) hold.
func (e *ChildError) Unwrap() error { return ErrChildFailed }

// childRecord is Child's step record of its child: its id.
type childRecord struct {
	Child string `json:"child"`
}

// childOutcome is Child's step record of its child's end.
type childOutcome struct {
	Status Status          `json:"status"`
	Result json.RawMessage `json:"result,omitempty"`
	Error  string          `json:"error,omitempty"`
}

// Child enqueues a child task (of taskType with payload, in the parent's
// queue unless opts says another) once per task — a step of this name
// records its id, and its submission is idempotent on a key derived from
// the parent and the name, so a resumed or retried parent never enqueues
// it twice — then waits for it: the parent's execution suspends (Child
// returns ErrSuspended, for the handler to return) and the task checks its
// child again later, until it has ended. It returns the child's result
// when it SUCCEEDED, a *ChildError (wrapping ErrChildFailed) when it ended
// DEAD or CANCELLED. The child's outcome is recorded as step name+".result",
// so a later execution gets the same answer even after the child expired.
//
// While the child runs the parent checks it after half the child's age,
// at least a second and at most a minute apart (each check is a short
// execution of the parent, in its history as "suspended"). A cancelled
// parent leaves its child running. name is at most MaxStepName-7 bytes;
// opts.IdempotencyKey, when set, is used as the child's key instead.
func Child(ctx context.Context, name, taskType string, payload any, opts *EnqueueOpts) (json.RawMessage, error) {
	if len(name) > MaxStepName-len(childResult) {
		return nil, invalid("step", "name of a child must be 1-%d bytes (got %d)", MaxStepName-len(childResult), len(name))
	}
	sc, rec, done, err := beginStep(ctx, name)
	if err != nil {
		return nil, err
	}
	var id string
	if done {
		var r childRecord
		if err := json.Unmarshal(rec.Result, &r); err != nil || r.Child == "" {
			return nil, fmt.Errorf("dtq: step %q is not a child (its record %s): a step's name is its own", name, truncate(string(rec.Result), 80))
		}
		id = r.Child
	} else if id, err = sc.enqueueChild(ctx, name, taskType, payload, opts); err != nil {
		return nil, err
	}
	rc, rec, done, err := beginStep(ctx, name+childResult)
	if err != nil {
		return nil, err
	}
	if !done { // (only an execution of the task writes it: the records read hold it)
		child, err := sc.tc.client.Get(ctx, id)
		if err != nil {
			return nil, fmt.Errorf("dtq: the child task %s of step %q: %w", id, name, err)
		}
		if !child.Status.Finished() {
			wait := min(max(time.Since(child.CreatedAt)/2, childCheckMin), childCheckMax)
			return nil, sc.tc.steps.suspendFor(waitChild, name, time.Now().Add(wait))
		}
		data, _ := json.Marshal(childOutcome{Status: child.Status, Result: child.Result, Error: child.LastError})
		if rec.Result, err = rc.record(ctx, name+childResult, data); err != nil {
			return nil, err
		}
	}
	var out childOutcome
	if err := json.Unmarshal(rec.Result, &out); err != nil {
		return nil, fmt.Errorf("dtq: step %q is not a child's result (its record %s)", name+childResult, truncate(string(rec.Result), 80))
	}
	if out.Status != StatusSucceeded {
		return nil, &ChildError{ID: id, Status: out.Status, Err: out.Error}
	}
	if out.Result == nil {
		out.Result = json.RawMessage("null")
	}
	return out.Result, nil
}

// waitChild is what a parent suspended for while its child runs.
const waitChild = "child"

// enqueueChild submits the child of step name, idempotently, and records
// its id as the step.
func (sc stepCall) enqueueChild(ctx context.Context, name, taskType string, payload any, opts *EnqueueOpts) (string, error) {
	var o EnqueueOpts
	if opts != nil {
		o = *opts
	}
	if o.Queue == "" {
		o.Queue = sc.f.queue
	}
	if o.IdempotencyKey == "" && o.Unique == nil {
		sum := sha256.Sum256([]byte(sc.f.id + "/" + name))
		o.IdempotencyKey = "dtq.child/" + hex.EncodeToString(sum[:])
	}
	res, err := sc.tc.client.Enqueue(ctx, taskType, payload, &o)
	if err != nil {
		return "", fmt.Errorf("dtq: enqueueing the child of step %q: %w", name, err)
	}
	data, _ := json.Marshal(childRecord{Child: res.Task.ID})
	stood, err := sc.record(ctx, name, data)
	if err != nil {
		return "", err
	}
	var r childRecord
	if err := json.Unmarshal(stood, &r); err != nil || r.Child == "" {
		return "", fmt.Errorf("dtq: step %q is not a child (its record %s)", name, truncate(string(stood), 80))
	}
	return r.Child, nil
}
