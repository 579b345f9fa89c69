package claim

import (
	"strconv"

	"github.com/dtq-dev/dtq/internal/store"
)

// Claim is a claimed entry whose start began a run: what a runner hands to
// a handler (a Go worker) or to a holder (a lease).
type Claim struct {
	Queue   string
	Entry   store.Entry // its Scopes are the scoped limits the run is under
	Started store.Started
	// Leased are those of Entry.Scopes whose leases the run holds.
	Leased []string
	// Limit is set when the run holds a lease of the queue-wide
	// concurrency limit ("": none): its name for a lease server's run (the
	// token carries it); for a Go worker's, whose reader holds its leases
	// as a count and releases any one at the run's end, the worker's id.
	Limit string
}

// Record is the task record of c as it runs for worker: what its handler
// or holder is told (the started-entry → record mapping, one for both
// runners).
func (c *Claim) Record(worker string) *store.Record {
	e, s := &c.Entry, c.Started
	sp := e.Spec
	startedMs, _ := strconv.ParseInt(s.Started, 10, 64)
	return &store.Record{
		ID: e.TaskID, Queue: c.Queue, Type: sp.Type, Payload: sp.Payload, Priority: e.Band,
		Status: store.StatusRunning, Attempt: s.Attempt, MaxAttempts: sp.MaxAttempts, Crashes: s.Crashes,
		Timeout: sp.Timeout, Created: sp.Created, Started: startedMs, Worker: worker, Run: s.Run, Idem: sp.IdemHash,
		Schedule: sp.Schedule, Tick: sp.Tick, Group: e.Group, LimitKey: sp.LimitKey,
		Workflow: sp.Workflow, Step: sp.Step, Prev: sp.Prev, Trace: sp.Trace, Parent: sp.Parent,
	}
}

// ScopeLeases names the scoped leases that run run of task id holds, of
// the scopes leased.
func ScopeLeases(id string, run int, leased []string) []string {
	if len(leased) == 0 {
		return nil
	}
	u := id
	if len(u) >= 26 {
		u = u[len(u)-26:] // the ULID of "<queue>-<ULID>"
	}
	names := make([]string, len(leased))
	for i, s := range leased {
		names[i] = store.ScopeLease(s, u, run)
	}
	return names
}
