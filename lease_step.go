package dtq

import (
	"context"
	"encoding/json"
	"errors"
	"unicode/utf8"

	"github.com/dtq-dev/dtq/internal/store"
	"github.com/dtq-dev/dtq/internal/taskid"
)

// Durable steps of a leased task (CONTRACT §3.10): its holder reads the
// task's records once (LeaseSteps), skips the steps recorded, and records
// each step it completes (RecordLeaseStep), fenced by the lease as a Go
// handler's steps are by its run.

// LeaseSteps returns the recorded steps of lease token's task: each
// step's result (JSON) by name; none is an empty map. Reading needs no
// fence: a lease no longer held reads what its task recorded.
func (s *LeaseServer) LeaseSteps(ctx context.Context, token string) (map[string]json.RawMessage, error) {
	l, err := parseLeaseToken(token)
	if err != nil {
		return nil, err
	}
	_, ulid, err := taskid.Parse(l.id)
	if err != nil {
		return nil, err
	}
	recs, err := s.queue(l.queue).store.Steps(ctx, ulid)
	if err != nil {
		return nil, err
	}
	out := make(map[string]json.RawMessage, len(recs))
	for name, r := range recs {
		out[name] = json.RawMessage(r.Result)
	}
	return out, nil
}

// RecordLeaseStep records result (JSON) as step name of lease token's
// execution, unless the task recorded that step before: it returns the
// result that stands and whether this call recorded it. A lease no longer
// held is ErrLeaseLost (nothing recorded).
func (s *LeaseServer) RecordLeaseStep(ctx context.Context, token, name string, result json.RawMessage) (json.RawMessage, bool, error) {
	l, err := parseLeaseToken(token)
	if err != nil {
		return nil, false, err
	}
	if err := checkStep(name, result); err != nil {
		return nil, false, err
	}
	fence := store.Fence{Run: l.run, Band: l.band, EntryID: l.entry, Worker: l.consumer, Started: l.started}
	f := stepFence{queue: l.queue, id: l.id, fence: fence}
	var rs runSteps
	stood, err := rs.record(ctx, s.engine, f, name, result)
	if errors.Is(err, ErrRunLost) {
		return nil, false, ErrLeaseLost
	}
	if err != nil {
		return nil, false, err
	}
	return stood, string(stood) == string(result), nil
}

// checkStep validates a step's name and its result as JSON.
func checkStep(name string, result []byte) error {
	if name == "" || len(name) > MaxStepName || !utf8.ValidString(name) {
		return invalid("step", "name must be 1-%d bytes of UTF-8 (got %q)", MaxStepName, name)
	}
	if len(result) > MaxStepResult {
		return invalid("result", "of step %q is %d bytes as JSON, more than MaxStepResult (%d)", name, len(result), MaxStepResult)
	}
	if !json.Valid(result) {
		return invalid("result", "of step %q must be a JSON value", name)
	}
	return nil
}
