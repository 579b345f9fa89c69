package dtq

import (
	"context"
	"time"

	"github.com/dtq-dev/dtq/internal/claim"
	"github.com/dtq-dev/dtq/internal/store"
)

// claimHooks are the engine's side of a claimer of queue q
// (internal/claim.Hooks), the same for a Go worker and the lease server;
// served runs after the queue is registered (the lease server's scheduler).
type claimHooks struct {
	e      *engine
	q      *queueState
	served func()
}

// newClaimer returns a claimer of q for a runner whose reads take over
// tasks idle for visibility, and which sends a task DEAD after maxCrashes
// takeovers.
func (c *engine) newClaimer(q *queueState, visibility time.Duration, maxCrashes int, served func()) *claim.Claimer {
	return claim.New(claim.Config{Queue: q.name, Store: q.store, Hooks: claimHooks{e: c, q: q, served: served},
		Log: c.log, MaxCrashes: maxCrashes, Retention: c.keepOthers(), Visibility: visibility})
}

func (h claimHooks) Durability() store.Durability { return h.e.durability() }

func (h claimHooks) Register(ctx context.Context) error {
	if err := h.e.register(ctx, h.q); err != nil {
		return err
	}
	if h.served != nil {
		h.served()
	}
	return nil
}

// Publish publishes the RUNNING events of started.
func (h claimHooks) Publish(started []claim.Claim) {
	if len(started) == 0 {
		return
	}
	lines := make([]string, len(started))
	for i := range started {
		c := &started[i]
		t := Task{ID: c.Entry.TaskID, Type: c.Entry.Spec.Type, Attempt: c.Started.Attempt, Priority: c.Entry.Band}
		lines[i] = eventLine(&t, StatusRunning, "")
	}
	h.e.publish(h.q.store.Keys().Events(), lines)
}

func (h claimHooks) Throttled(n int) { h.e.obs.throttled(h.q.name, n) }

func (h claimHooks) Reclaimed(entries []store.Entry) {
	if !h.e.obs.on() {
		return
	}
	refs := make([]TaskRef, len(entries))
	for i := range entries {
		refs[i] = h.ref(&entries[i])
	}
	h.e.obs.reclaimed(h.q.name, refs)
}

func (h claimHooks) Ended(e *store.Entry, code store.StartCode) {
	outcome := OutcomeDead
	if code == store.Withdrawn {
		outcome = OutcomeCancelled
	}
	h.e.obs.ended(h.ref(e), outcome)
}

// OnFull reports what a full limit's rule did at a start: the waiters it
// replaced ended CANCELLED (as Client.Cancel reports them), and the count
// of its rule.
func (h claimHooks) OnFull(_ *store.Entry, s *store.Started) {
	n := 1
	if s.OnFull == store.OnFullReplaceWaiting {
		n = len(s.Replaced)
		for _, r := range s.Replaced {
			h.e.obs.ended(TaskRef{ID: r.ID, Queue: h.q.name, Type: r.Type}, OutcomeCancelled)
		}
	}
	h.e.obs.onFull(h.q.name, onFullOf(s.OnFull), n)
}

func (h claimHooks) RedisError(op string, err error) { h.e.redisError(op, err) }

func (h claimHooks) ref(e *store.Entry) TaskRef {
	ref := TaskRef{ID: e.TaskID, Queue: h.q.name}
	if e.Spec != nil {
		ref.Type = e.Spec.Type
	}
	return ref
}
