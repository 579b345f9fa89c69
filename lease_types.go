package dtq

import (
	"context"
	"time"

	"github.com/dtq-dev/dtq/internal/claim"
)

// A holder that runs some task types only (LeaseRequest.Types) follows
// the type rule of internal/claim: leaseTypes reads on past its
// give-backs, Lease then waits with claim.Watch.

// maxTypedReads bounds the reads of one leaseTypes call: a queue holding
// that many batches of other types' entries ahead of this holder's is
// read on at the call's next turn.
const maxTypedReads = 32

// leaseTypes leases up to n tasks of q, of the types in types (nil: any).
func (s *LeaseServer) leaseTypes(ctx context.Context, q *queueState, consumer string, n int, types claim.Types,
	timeout time.Duration) ([]*Lease, error) {
	if types == nil {
		ls, _, err := s.leaseFrom(ctx, q, consumer, n, nil, timeout)
		return ls, err
	}
	var others claim.Others
	for range maxTypedReads {
		ls, read, err := s.leaseFrom(ctx, q, consumer, n, types, timeout)
		if err != nil || len(ls) > 0 || len(read) < n {
			return ls, err
		}
		// A full read of others' types: older entries may wait behind
		// them, unless this read brought back only what it gave back.
		if others.OnlySeen(read) {
			return nil, nil
		}
	}
	return nil, nil
}
