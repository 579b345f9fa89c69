package dtq

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/dtq-dev/dtq/internal/store"
	"github.com/dtq-dev/dtq/internal/taskid"
)

// Limits of durable steps.
const (
	MaxStepName   = 128       // bytes of a step's name
	MaxStepResult = 256 << 10 // bytes of a step's result, as JSON
)

// Step runs fn once per task: the first time a handler of the task calls
// Step with this name and fn returns without error, its result is
// recorded — as JSON, fenced by the execution, atomically — and every
// later execution of the task (a retry, a takeover after a crash, a
// requeue from the dead letters) gets the recorded result back without
// calling fn. So a handler that charges a card in a step, then fails on
// the next, does not charge again when it is retried.
//
// What is exactly-once is the record, not fn: a step whose fn failed, or
// whose execution ended before its result was recorded (a crash between
// fn's return and the record), runs again in the next execution — fn is
// at least once, and should be idempotent toward what it calls where that
// matters (see docs/durable.md).
//
// Names are unique within a task (1-MaxStepName bytes of UTF-8): a name
// used twice in one execution is ErrDuplicateStep; the order of calls is
// free. A result larger than MaxStepResult as JSON is a ValidationError
// (fn ran; nothing is recorded). Outside a handler Step is ErrNoTask. An
// execution that is no longer the task's gets ErrRunLost (its record is
// refused). The first Step of an execution reads the task's records, one
// round trip (none in the task's first execution, which nothing can
// precede); each record is one more.
func Step[T any](ctx context.Context, name string, fn func(context.Context) (T, error)) (T, error) {
	var zero T
	sc, rec, done, err := beginStep(ctx, name)
	if err != nil {
		return zero, err
	}
	if done {
		return decodeStep[T](name, rec.Result)
	}
	v, err := fn(ctx)
	if err != nil {
		return v, err
	}
	data, err := json.Marshal(v)
	if err != nil {
		return zero, fmt.Errorf("dtq: step %q: its result cannot be encoded as JSON: %w", name, err)
	}
	if err := checkStep(name, data); err != nil {
		return zero, err
	}
	stood, err := sc.record(ctx, name, data)
	if err != nil {
		return zero, err
	}
	if string(stood) == string(data) {
		return v, nil
	}
	return decodeStep[T](name, stood) // another execution recorded it first: its result stands
}

// stepCall is a step's execution: its records, and the fence they are
// written under.
type stepCall struct {
	tc *taskContext
	f  stepFence
	// fresh: the task's first execution (its first attempt, run from its
	// birth entry, never taken over), which reads no records: only a
	// signal can have written one before it (WaitFor reads that one).
	fresh bool
}

// beginStep checks name, reads the task's records at the execution's
// first step and claims name for it: the record, if an earlier run made
// one. Outside a handler it is ErrNoTask; after the execution suspended
// (Sleep, WaitFor), ErrSuspended.
func beginStep(ctx context.Context, name string) (stepCall, store.StepRecord, bool, error) {
	tc, ok := ctx.Value(ctxKey{}).(*taskContext)
	if !ok || tc.steps == nil {
		return stepCall{}, store.StepRecord{}, false, ErrNoTask
	}
	if err := checkStep(name, []byte("null")); err != nil {
		return stepCall{}, store.StepRecord{}, false, err
	}
	t := tc.task
	sc := stepCall{tc: tc, f: stepFence{queue: t.Queue, id: t.ID,
		fence: store.Fence{Run: t.run, Band: t.band, EntryID: t.entry, Worker: t.Worker, Started: t.started}}}
	sc.fresh = t.born != nil && t.Attempt == 1 && t.Crashes == 0
	if err := tc.steps.load(ctx, tc.client.engine, sc.f, sc.fresh); err != nil {
		return stepCall{}, store.StepRecord{}, false, fmt.Errorf("dtq: reading the task's steps: %w", err)
	}
	rec, done, err := tc.steps.begin(name)
	return sc, rec, done, err
}

// record records result as the step name of this execution (runSteps.record).
func (sc stepCall) record(ctx context.Context, name string, result []byte) ([]byte, error) {
	return sc.tc.steps.record(ctx, sc.tc.client.engine, sc.f, name, result)
}

// readOne reads the record of step name from Redis.
func (sc stepCall) readOne(ctx context.Context, name string) (store.StepRecord, bool, error) {
	_, ulid, err := taskid.Parse(sc.f.id)
	if err != nil {
		return store.StepRecord{}, false, err
	}
	e := sc.tc.client.engine
	rec, ok, err := e.queue(sc.f.queue).store.StepOf(ctx, ulid, name)
	if err != nil {
		e.redisError("step", err)
	}
	return rec, ok, err
}

// decodeStep decodes step name's recorded result into a T.
func decodeStep[T any](name string, data []byte) (T, error) {
	var v T
	if err := json.Unmarshal(data, &v); err != nil {
		return v, fmt.Errorf("dtq: step %q: its recorded result does not decode into %T: %w", name, v, err)
	}
	return v, nil
}
