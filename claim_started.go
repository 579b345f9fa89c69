package dtq

import "github.com/dtq-dev/dtq/internal/claim"

// startedTask is the public Task of claim c just started for worker: what
// a handler or a holder gets.
func startedTask(c *claim.Claim, worker string) *Task {
	t := taskOf(c.Record(worker))
	t.band, t.entry, t.started = c.Entry.Band, c.Entry.EntryID, c.Started.Started
	return t
}
