package dtq

import (
	"strconv"

	"github.com/dtq-dev/dtq/internal/store"
)

// startedTask is the public Task of entry e of queue just started as s by
// worker: what a handler gets.
func (c *engine) startedTask(queue string, e *store.Entry, s store.Started, worker string) *Task {
	sp := e.Spec
	startedMs, _ := strconv.ParseInt(s.Started, 10, 64)
	t := taskOf(&store.Record{
		ID: e.TaskID, Queue: queue, Type: sp.Type, Payload: sp.Payload, Priority: e.Band,
		Status: store.StatusRunning, Attempt: s.Attempt, MaxAttempts: sp.MaxAttempts, Crashes: s.Crashes,
		Timeout: sp.Timeout, Created: sp.Created, Started: startedMs, Worker: worker, Run: s.Run, Idem: sp.IdemHash,
		Schedule: sp.Schedule, Tick: sp.Tick, Group: e.Group, LimitKey: sp.LimitKey,
		Workflow: sp.Workflow, Step: sp.Step, Prev: sp.Prev, Trace: sp.Trace,
	})
	t.band, t.entry, t.started = e.Band, e.EntryID, s.Started
	return t
}
