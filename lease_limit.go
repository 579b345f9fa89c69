package dtq

import (
	"context"
	"time"

	"github.com/dtq-dev/dtq/internal/claim"
)

// Leases under a queue's limits, as a Go worker holds them
// (internal/claim): a queue-wide limit grants claims before the read, and
// with a concurrency limit each started lease holds one of the limit's
// leases, named in its token, renewed by its extensions and released with
// its outcome (or expiring after its timeout); a scoped limit is taken by
// start.lua, its leases named by the execution.

// renewLeaseLimits renews the limits' leases lease l holds for its time.
func (s *LeaseServer) renewLeaseLimits(ctx context.Context, l leaseToken) error {
	q := s.queue(l.queue)
	if l.limit != "" {
		if err := q.store.RenewLeases(ctx, l.timeout, []string{l.limit}); err != nil {
			return err
		}
	}
	if names := l.scopeLeases(); len(names) > 0 {
		return q.store.RenewScopeLeases(ctx, l.timeout, names)
	}
	return nil
}

// releaseLeaseLimits releases the limits' leases of lease l, whose outcome
// was recorded, and with pause > 0 (a RetryAfter) pauses its limits for
// that long. A failure leaves the leases to expire.
func (s *LeaseServer) releaseLeaseLimits(ctx context.Context, l leaseToken, pause time.Duration) {
	q := s.queue(l.queue)
	ctx = context.WithoutCancel(ctx)
	var errs []error
	if l.limit != "" {
		errs = append(errs, q.store.ReleaseLeases(ctx, []string{l.limit}, 0))
		if pause > 0 {
			errs = append(errs, q.store.PauseLimits(ctx, pause))
		}
	}
	if names := l.scopeLeases(); len(names) > 0 {
		errs = append(errs, q.store.ReleaseScopeLeases(ctx, names))
	}
	if pause > 0 && len(l.scopes) > 0 {
		errs = append(errs, q.store.PauseScopes(ctx, pause, l.scopes))
	}
	for _, err := range errs {
		if err != nil {
			s.redisError("lease", err)
			s.log.Warn("releasing a lease's limits failed; they expire after the lease time", logTaskID, l.id, logQueue, l.queue, "error", err)
			return
		}
	}
}

// scopeLeases names the scoped leases of l's execution.
func (l leaseToken) scopeLeases() []string {
	return claim.ScopeLeases(l.id, l.run, l.leased)
}
