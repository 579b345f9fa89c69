package dtq

import (
	"context"
	"time"

	"github.com/dtq-dev/dtq/internal/store"
)

// A holder that runs some task types only (LeaseRequest.Types) claims
// entries of every type — a consumer group delivers in order, whatever
// the type — and gives back those of other types to the tail of their
// band. Two rules keep that from spinning on a queue where such entries
// wait for another holder:
//   - a call reads on past the entries it gives back while older ones may
//     wait behind them (leaseTypes), but stops once a read brings back
//     only entries it has seen: its own give-backs;
//   - it then waits as on an empty queue (watchTypes): it watches the
//     bands without claiming, woken by an entry of one of its types, not
//     by the give-backs of others.

// maxTypedReads bounds the reads of one leaseTypes call: a queue holding
// that many batches of other types' entries ahead of this holder's is
// read on at the call's next turn.
const maxTypedReads = 32

// watchBatch is how many new entries one watch looks at.
const watchBatch = 64

// leaseTypes leases up to n tasks of q, of the types in types (nil: any).
func (c *Client) leaseTypes(ctx context.Context, q *queueState, consumer string, n int, types map[string]bool,
	timeout time.Duration) ([]*Lease, error) {
	if types == nil {
		ls, _, err := c.leaseFrom(ctx, q, consumer, n, nil, timeout)
		return ls, err
	}
	seen := map[string]bool{}
	for range maxTypedReads {
		ls, read, err := c.leaseFrom(ctx, q, consumer, n, types, timeout)
		if err != nil || len(ls) > 0 || len(read) < n {
			return ls, err
		}
		// A full read of others' types: older entries may wait behind
		// them, unless this read brought back only what it gave back.
		fresh := false
		for _, e := range read {
			if !seen[e.TaskID] {
				seen[e.TaskID] = true
				fresh = true
			}
		}
		if !fresh {
			return nil, nil
		}
	}
	return nil, nil
}

// watchTypes waits up to block for an entry of q of one of types (or a
// malformed one, which a read dead-letters) added after marks, which it
// advances past the entries it passes over, and reports whether one came.
// It claims nothing: the caller's next read does.
func (c *Client) watchTypes(ctx context.Context, q *queueState, marks []string, types map[string]bool, block time.Duration) (bool, error) {
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
