package claim

import (
	"context"

	"github.com/dtq-dev/dtq/internal/store"
)

// Hooks are what a Claimer asks of the runner it claims for. The root
// package implements them once per queue, for the Go worker and the lease
// server alike; they keep this package free of the root's types.
type Hooks interface {
	// Durability is the replication a start waits for.
	Durability() store.Durability
	// Register notes, before a read that may create the queue's consumer
	// groups, that the queue is served (the queue registry; the lease
	// server also runs its scheduler while holders poll).
	Register(ctx context.Context) error
	// Publish publishes the RUNNING events of claims just started.
	Publish(started []Claim)
	// Throttled counts n claims that limits held back.
	Throttled(n int)
	// Reclaimed reports entries a read took over from lost workers.
	Reclaimed(entries []store.Entry)
	// Ended reports a task its start ended instead: store.Died (past
	// MaxCrashes, or a malformed entry) or store.Withdrawn (cancelled
	// while its worker was lost).
	Ended(e *store.Entry, code store.StartCode)
	// OnFull reports what the rule of a full scoped limit did at the
	// start of e (s.OnFull is set): cancelled the task (it is also
	// reported Ended), requested the cancellation of the oldest run under
	// the limit, or cancelled s.Replaced.
	OnFull(e *store.Entry, s *store.Started)
	// RedisError reports a failed Redis call of operation op.
	RedisError(op string, err error)
}
