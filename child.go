package dtq

import (
	"context"
	"strings"

	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"github.com/dtq-dev/dtq/internal/store"
	"github.com/dtq-dev/dtq/internal/taskid"
	"time"
)

// childResult is the suffix of the step name under which Child records its
// child's outcome (the step name itself records the child's id).
const childResult = ".result"

// How often a parent checks its child while it waits — half the child's
// age, within these bounds — should its wake not come (wakeParent).
const (
	childCheckMin = 5 * time.Second
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
// The child's end wakes the parent at once when a worker or a lease
// records it, or a Cancel does (the child carries the link: not a child
// submitted with opts.Unique). Should that wake not come — the child's
// worker died in between, the child went DEAD by crashes — the parent
// checks the child after half its age, at least 5 s and at most a minute
// apart (each check a short execution of the parent, in its history as
// "suspended"). A cancelled parent leaves its child running. name is at most MaxStepName-7 bytes;
// opts.IdempotencyKey, when set, is used as the child's key instead.
func Child(ctx context.Context, name, taskType string, payload any, opts *EnqueueOpts) (json.RawMessage, error) {
	if err := checkChildName(name); err != nil {
		return nil, err
	}
	sc, rec, done, err := beginStep(ctx, name)
	if err != nil {
		return nil, err
	}
	c := sc.tc.client
	var id string
	if !done {
		if id, err = c.enqueueChild(ctx, sc.f.id, sc.f.queue, name, taskType, payload, opts); err != nil {
			return nil, err
		}
		if rec.Result, err = sc.record(ctx, name, childIDRecord(id)); err != nil {
			return nil, err
		}
	}
	if id, err = childIDOf(name, rec.Result); err != nil {
		return nil, err
	}
	rc, rec, done, err := beginStep(ctx, name+childResult)
	if err != nil {
		return nil, err
	}
	if !done { // (only an execution of the task writes it: the records read hold it)
		end, wait, err := c.checkChild(ctx, name, id)
		if err != nil {
			return nil, err
		}
		if end == nil {
			return nil, sc.tc.steps.suspendFor(store.WaitChild, name, time.Now().Add(wait))
		}
		if rec.Result, err = rc.record(ctx, name+childResult, end); err != nil {
			return nil, err
		}
	}
	return childAnswer(name, id, rec.Result)
}

// checkChildName checks the step name of a child (its result's step name
// must fit too).
func checkChildName(name string) error {
	if len(name) > MaxStepName-len(childResult) {
		return invalid("step", "name of a child must be 1-%d bytes (got %d)", MaxStepName-len(childResult), len(name))
	}
	return nil
}

// enqueueChild submits the child of step name of task parent (of queue
// parentQueue), idempotently: in the parent's queue unless opts names
// another, on a key derived from the parent and the name unless opts
// gives one. It returns the child's id.
func (c *Client) enqueueChild(ctx context.Context, parent, parentQueue, name, taskType string, payload any, opts *EnqueueOpts) (string, error) {
	var o EnqueueOpts
	if opts != nil {
		o = *opts
	}
	if o.Queue == "" {
		o.Queue = parentQueue
	}
	if o.IdempotencyKey == "" && o.Unique == nil {
		sum := sha256.Sum256([]byte(parent + "/" + name))
		o.IdempotencyKey = "dtq.child/" + hex.EncodeToString(sum[:])
	}
	if o.Unique == nil { // (a unique task's submission takes no link: its parent checks it)
		o.parent = parent + " " + name
	}
	res, err := c.Enqueue(ctx, taskType, payload, &o)
	if err != nil {
		return "", fmt.Errorf("dtq: enqueueing the child of step %q: %w", name, err)
	}
	return res.Task.ID, nil
}

// childIDRecord is the record of a child's step: its id.
func childIDRecord(id string) []byte {
	data, _ := json.Marshal(childRecord{Child: id})
	return data
}

// childIDOf reads the record of child step name: the child's id.
func childIDOf(name string, data []byte) (string, error) {
	var r childRecord
	if err := json.Unmarshal(data, &r); err != nil || r.Child == "" {
		return "", fmt.Errorf("dtq: step %q is not a child (its record %s): a step's name is its own", name, truncate(string(data), 80))
	}
	return r.Child, nil
}

// checkChild reads child id of step name: its end as a record of
// name+childResult once it has finished (nil while it runs, with how
// long to wait before checking it again: half its age, within
// childCheckMin-childCheckMax).
func (c *Client) checkChild(ctx context.Context, name, id string) ([]byte, time.Duration, error) {
	child, err := c.Get(ctx, id)
	if err != nil {
		return nil, 0, fmt.Errorf("dtq: the child task %s of step %q: %w", id, name, err)
	}
	if !child.Status.Finished() {
		return nil, min(max(time.Since(child.CreatedAt)/2, childCheckMin), childCheckMax), nil
	}
	data, _ := json.Marshal(childOutcome{Status: child.Status, Result: child.Result, Error: child.LastError})
	return data, 0, nil
}

// childAnswer is Child's answer from the record of a child's end: its
// result, or a *ChildError.
func childAnswer(name, id string, data []byte) (json.RawMessage, error) {
	var out childOutcome
	if err := json.Unmarshal(data, &out); err != nil {
		return nil, fmt.Errorf("dtq: step %q is not a child's result (its record %s)", name+childResult, truncate(string(data), 80))
	}
	if out.Status != StatusSucceeded {
		return nil, &ChildError{ID: id, Status: out.Status, Err: out.Error}
	}
	if out.Result == nil {
		out.Result = json.RawMessage("null")
	}
	return out.Result, nil
}

// wakeParent wakes the task awaiting t (Child), if any, now that t has
// ended: it need not wait for its next check of t. A failure is only
// logged: that check finds the end.
func (c *engine) wakeParent(ctx context.Context, t *Task) {
	if t.parent == "" {
		return
	}
	id, step, ok := strings.Cut(t.parent, " ")
	queue, _, err := taskid.Parse(id)
	if !ok || err != nil {
		return
	}
	if _, err := c.queue(queue).store.WakeAwaiting(context.WithoutCancel(ctx), id, step); err != nil {
		c.redisError("wake", err)
		c.log.Debug("waking the task awaiting a child failed; it checks the child itself", logTaskID, t.ID, "parent", id, "error", err)
	}
}
