package dtq

import (
	"context"
	"crypto/rand"
	"strconv"
	"time"

	"github.com/dtq-dev/dtq/internal/claim"
	"github.com/dtq-dev/dtq/internal/store"
)

// Leases under a queue's limits, as a Go worker holds them
// (worker_limit.go, worker_scope.go): a queue-wide limit grants claims
// before the read, and with a concurrency limit each started lease holds
// one of the limit's leases, named in its token, renewed by its extensions
// and released with its outcome (or expiring after its timeout); a scoped
// limit is taken by start.lua, its leases named by the execution.

// leaseLimitsEvery is how often Lease reads a queue's limits again.
const leaseLimitsEvery = 2 * time.Second

// readLeaseLimits reads q's limits into st when they are due, and
// answers whether q has a queue-wide limit.
func (s *LeaseServer) readLeaseLimits(ctx context.Context, q *queueState, st *leaseState) (bool, error) {
	st.mu.Lock()
	due, limited := time.Since(st.limitsRead) > leaseLimitsEvery, st.limited
	st.mu.Unlock()
	if !due {
		return limited, nil
	}
	limited, err := q.store.Limited(ctx)
	if err != nil {
		return false, err
	}
	defs, err := q.store.ScopeDefs(ctx)
	if err != nil {
		return false, err
	}
	st.mu.Lock()
	st.limitsRead, st.limited, st.scopes = time.Now(), limited, claim.ScopesOf(defs)
	st.mu.Unlock()
	return limited, nil
}

// leaseGrant is what a queue's limits granted a Lease call: granted
// claims, which in mode store.Leased are the leases names[:granted].
type leaseGrant struct {
	names   []string
	granted int
	mode    int
	retry   time.Time // with nothing granted: when something may be
	wakeup  string    // with nothing granted: the wakeup stream's id to wait after
}

// name returns the concurrency lease of the i-th started lease ("" when
// the grant holds none).
func (g leaseGrant) name(i int) string {
	if g.mode != store.Leased || i >= g.granted {
		return ""
	}
	return g.names[i]
}

// grantLeases asks q's limits for n claims lasting timeout. A limit found
// removed grants all (and the limits are read again on the next call).
func (s *LeaseServer) grantLeases(ctx context.Context, q *queueState, st *leaseState, n int, timeout time.Duration) (leaseGrant, error) {
	prefix := "http-" + rand.Text()[:12] + "-"
	names := make([]string, n)
	for i := range names {
		names[i] = prefix + strconv.Itoa(i)
	}
	g, err := q.store.AcquireLeases(ctx, "acquire", timeout, names)
	if err != nil {
		return leaseGrant{}, err
	}
	if g.Mode == store.Unlimited {
		st.mu.Lock()
		st.limitsRead = time.Time{}
		st.mu.Unlock()
		return leaseGrant{granted: n}, nil
	}
	s.obs.throttled(q.name, n-g.Granted)
	return leaseGrant{names: names, granted: g.Granted, mode: g.Mode, retry: g.Retry, wakeup: g.Wakeup}, nil
}

// giveBack returns the claims of g beyond the first used (their leases
// too) to the limits. A failure leaves them to expire.
func (g leaseGrant) giveBack(ctx context.Context, c *engine, q *queueState, used int) {
	unused := g.granted - used
	if g.mode == store.Unlimited || unused <= 0 {
		return
	}
	var names []string
	if g.mode == store.Leased {
		names = g.names[used:g.granted]
	}
	if err := q.store.ReleaseLeases(context.WithoutCancel(ctx), names, unused); err != nil {
		c.redisError("lease", err)
		c.log.Warn("giving back concurrency leases failed; they expire after the lease time", logQueue, q.name, "error", err)
	}
}

// waitLease waits up to block for a first task of q and leases it (with
// what else came, up to n). Under a queue-wide limit the claims are granted
// first; granted none, it waits for a release or the next grant instead.
func (s *LeaseServer) waitLease(ctx context.Context, q *queueState, consumer string, n int, timeout, block time.Duration) ([]*Lease, error) {
	st := s.leaseStateOf(q.name)
	limited, err := s.readLeaseLimits(ctx, q, st)
	if err != nil {
		return nil, err
	}
	g := leaseGrant{granted: n}
	if limited {
		if g, err = s.grantLeases(ctx, q, st, n, timeout); err != nil {
			return nil, err
		}
		if g.granted == 0 {
			if !g.retry.IsZero() {
				block = min(block, max(time.Until(g.retry)+time.Millisecond, time.Millisecond))
			}
			return nil, q.store.WaitWakeup(ctx, g.wakeup, block)
		}
	}
	entries, _, err := q.store.ReadBands(ctx, consumer, g.granted, block, 0)
	if err != nil {
		st.lostClaim(consumer) // (a read cut short may have claimed)
	}
	if err != nil || len(entries) == 0 {
		g.giveBack(ctx, s.engine, q, 0)
		return nil, err
	}
	return s.startLeases(ctx, q, st, consumer, entries, nil, timeout, g, false)
}

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
	names := make([]string, len(l.leased))
	for i, s := range l.leased {
		names[i] = store.ScopeLease(s, ulidOf(l.id), l.run)
	}
	return names
}
