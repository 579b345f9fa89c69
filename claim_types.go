package dtq

import (
	"context"
	"time"

	"github.com/dtq-dev/dtq/internal/store"
)

// The type rule, one for Go workers and HTTP holders (CONTRACT 3.3.1c): a
// worker runs the task types it declares — a Go worker those it has
// handlers for, an HTTP holder its LeaseRequest.Types (none: every type).
// A consumer group delivers in order whatever the type, so a worker claims
// entries of every type and gives those of other types back, untouched, to
// the tail of their band, for a worker that runs them: Go and HTTP workers
// split a queue by type. Two rules keep that from spinning while such
// entries wait:
//   - a worker reads on past the entries it gives back while older ones
//     may wait behind them, but stops once a read brings back only
//     entries it has seen: its own give-backs (otherTypes);
//   - it then waits as on an empty queue (watchTypes): it watches the
//     bands without claiming, woken by an entry of one of its types, not
//     by the give-backs of others.

// watchBatch is how many new entries one watch looks at.
const watchBatch = 64

// otherTypes tracks the entries of other types a worker gave back, to
// tell a read that may have passed over older entries from one that
// brought back only its own give-backs.
type otherTypes struct {
	seen map[string]bool // task ids given back
}

// maxSeen bounds otherTypes.seen: past it, it starts over (a read or two
// more before the worker waits).
const maxSeen = 10_000

// onlySeen records the entries of a read that were all of other types and
// reports whether every one was seen before: nothing new was read.
func (o *otherTypes) onlySeen(read []store.Entry) bool {
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

// runsType reports whether a worker of types (nil: every type) runs
// entry e: its type is one of them, or it is malformed (a read
// dead-letters it).
func runsType(e *store.Entry, types map[string]bool) bool {
	return types == nil || e.Spec == nil || types[e.Spec.Type]
}

// giveBackOthers marks for give-back the entries of es of types the worker
// does not run, and reports whether all of es are such.
func giveBackOthers(es []store.Entry, types map[string]bool) (allOthers bool) {
	allOthers = len(es) > 0
	for i := range es {
		if runsType(&es[i], types) {
			allOthers = false
		} else {
			es[i].GiveBack = true
		}
	}
	return allOthers
}

// watchTypes waits up to block for an entry of q of one of types (or a
// malformed one, which a read dead-letters) added after marks, which it
// advances past the entries it passes over, and reports whether one came.
// It claims nothing: the caller's next read does.
func (c *engine) watchTypes(ctx context.Context, q *queueState, marks []string, types map[string]bool, block time.Duration) (bool, error) {
	end := time.Now().Add(block)
	for {
		left := time.Until(end)
		if left < time.Millisecond {
			return false, nil
		}
		es, err := q.store.Watch(ctx, marks, watchBatch, left)
		if err != nil || len(es) == 0 {
			return false, err
		}
		if takes(es, types) {
			return true, nil
		}
	}
}

// takes reports whether a holder of types has something to read among es.
func takes(es []store.Entry, types map[string]bool) bool {
	for _, e := range es {
		if e.Spec == nil || types[e.Spec.Type] {
			return true
		}
	}
	return false
}

// passOthers follows the reads of the worker's queue (claim_types.go):
// after a read that brought back only tasks of other types, all seen
// before, it takes the bands' ends as marks (and reads once more); after a
// second such read, the next turn of the reader waits (waitForTypes).
// Any other read forgets the marks.
func (wq *workerQueue) passOthers(ctx context.Context, read []store.Entry) {
	if !giveBackOthers(read, wq.w.types) || !wq.others.onlySeen(read) {
		wq.marks = nil
		return
	}
	wq.busy = true // read once more, or wait first
	if wq.marks != nil {
		wq.waitTypes = true
		return
	}
	marks, err := wq.q.store.Tails(ctx)
	if err == nil {
		wq.marks = marks
	}
}

// waitForTypes waits, when the reads came up with only other types' tasks
// twice, for a task of the worker's types after the marks, at most until
// the next reclaim pass or a second. It returns false when ctx ends.
func (wq *workerQueue) waitForTypes(ctx context.Context) bool {
	if !wq.waitTypes {
		return true
	}
	wq.waitTypes = false
	block := min(time.Second, max(wq.reclaim.Wait(time.Now()), time.Millisecond))
	if _, err := wq.w.c.watchTypes(ctx, wq.q, wq.marks, wq.w.types, block); err != nil {
		if ctx.Err() != nil {
			return false
		}
		wq.w.c.redisError("read", err)
	}
	return ctx.Err() == nil
}
