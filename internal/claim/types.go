package claim

import (
	"context"
	"time"

	"github.com/dtq-dev/dtq/internal/store"
)

// The type rule, one for Go workers and HTTP holders (CONTRACT 3.3.1c): a
// runner runs the task types it declares — a Go worker those it has
// handlers for, an HTTP holder its task_types (none: every type). A
// consumer group delivers in order whatever the type, so a runner claims
// entries of every type and gives those of other types back, untouched, to
// the tail of their band, for a runner that runs them: Go and HTTP workers
// split a queue by type. Two rules keep that from spinning while such
// entries wait:
//   - a runner reads on past the entries it gives back while older ones
//     may wait behind them, but stops once a read brings back only
//     entries it has seen: its own give-backs (Others);
//   - it then waits as on an empty queue (Watch): it watches the bands
//     without claiming, woken by an entry of one of its types, not by the
//     give-backs of others.

// Types are the task types a runner runs; nil: every type.
type Types map[string]bool

// Runs reports whether a runner of t runs entry e: its type is one of t,
// or it is malformed (a read dead-letters it).
func (t Types) Runs(e *store.Entry) bool {
	return t == nil || e.Spec == nil || t[e.Spec.Type]
}

// GiveBackOthers marks for give-back the entries of es of types outside t,
// and reports whether all of es are such.
func GiveBackOthers(es []store.Entry, t Types) (allOthers bool) {
	allOthers = len(es) > 0
	for i := range es {
		if t.Runs(&es[i]) {
			allOthers = false
		} else {
			es[i].GiveBack = true
		}
	}
	return allOthers
}

// Others tracks the entries of other types a runner gave back, to tell a
// read that may have passed over older entries from one that brought back
// only its own give-backs. The zero value is ready.
type Others struct {
	seen map[string]bool // task ids given back
}

// maxSeen bounds Others.seen: past it, it starts over (a read or two more
// before the runner waits).
const maxSeen = 10_000

// OnlySeen records the entries of a read that were all of other types and
// reports whether every one was seen before: nothing new was read.
func (o *Others) OnlySeen(read []store.Entry) bool {
	if o.seen == nil || len(o.seen) > maxSeen {
		o.seen = map[string]bool{}
	}
	fresh := false
	for _, e := range read {
		if !o.seen[e.TaskID] {
			o.seen[e.TaskID] = true
			fresh = true
		}
	}
	return !fresh
}

// watchBatch is how many new entries one watch looks at.
const watchBatch = 64

// Watch waits up to block for an entry of q of one of t (or a malformed
// one, which a read dead-letters) added after marks, which it advances
// past the entries it passes over, and reports whether one came. It
// claims nothing: the caller's next read does.
func Watch(ctx context.Context, q *store.Queue, marks []string, t Types, block time.Duration) (bool, error) {
	end := time.Now().Add(block)
	for {
		left := time.Until(end)
		if left < time.Millisecond {
			return false, nil
		}
		es, err := q.Watch(ctx, marks, watchBatch, left)
		if err != nil || len(es) == 0 {
			return false, err
		}
		for i := range es {
			if t.Runs(&es[i]) {
				return true, nil
			}
		}
	}
}
