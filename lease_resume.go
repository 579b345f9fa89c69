package dtq

import (
	"context"
	"time"

	"github.com/dtq-dev/dtq/internal/claim"
	"github.com/dtq-dev/dtq/internal/store"
)

// Leases find their lost answers again (resume.go, CONTRACT 3.3.1b),
// within what a stateless holder allows:
//   - a start whose answer is lost is asked again as resumed within the
//     call, for up to half the lease's timeout while the caller waits;
//   - after a claim of a holder fails, its next Lease call in this process
//     starts the entries pending for it in their first delivery that no
//     lease of it holds (not started): a claim's lost answer. Entries it
//     reclaimed are left to the next takeover: a running lease of its own
//     looks the same.

// resumeLeaseStarts asks start.lua again (askAgain) for entries whose
// start failed with err, until it answers, ctx ends or half of timeout
// passes (then it returns err).
func (s *LeaseServer) resumeLeaseStarts(ctx context.Context, q *queueState, cfg store.StartConfig, entries []store.Entry,
	timeout time.Duration, err error) ([]store.Started, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout/2)
	defer cancel()
	return askAgain(ctx, s.log, s.engine, q.name, entries, min(time.Second, timeout/4), err,
		func() ([]store.Started, error) { return q.store.Start(ctx, cfg, entries) })
}

// lostClaim notes that a claim of consumer on q failed with its call in
// flight: its next Lease call in this process looks for what it claimed.
func (st *leaseState) lostClaim(consumer string) {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.lost == nil {
		st.lost = map[string]bool{}
	}
	st.lost[consumer] = true
}

// recoverLeases leases, under grant g, the entries of q pending for
// consumer in their first delivery and not started, after a claim of
// consumer failed in this process. done reports that it used g (it found
// some); otherwise g is the caller's still.
func (s *LeaseServer) recoverLeases(ctx context.Context, q *queueState, st *leaseState, consumer string, types claim.Types,
	timeout time.Duration, g leaseGrant) (ls []*Lease, done bool, err error) {
	st.mu.Lock()
	lost := st.lost[consumer]
	st.mu.Unlock()
	if !lost {
		return nil, false, nil
	}
	pending, err := q.store.Claimed(ctx, consumer, MaxLeaseBatch)
	if err != nil {
		return nil, false, err
	}
	st.mu.Lock()
	delete(st.lost, consumer)
	st.mu.Unlock()
	var fresh []store.Entry
	for _, e := range pending {
		if !e.Reclaimed {
			fresh = append(fresh, e) // start.lua skips one that runs already (a lease's)
		}
	}
	if len(fresh) == 0 {
		return nil, false, nil
	}
	s.log.Info("claims whose answer was lost found again; leasing them", logQueue, q.name, "worker", consumer, "tasks", len(fresh))
	ls, err = s.startLeases(ctx, q, st, consumer, fresh, types, timeout, g, true)
	return ls, true, err
}

// renewStale renews the executions of leases ls of q, started from claims
// made a while ago, and returns those still the holder's (a claim another
// reader took over meanwhile is no lease; its task runs there). Renewal
// failing, they are handed out as they are.
func (s *LeaseServer) renewStale(ctx context.Context, q *queueState, consumer string, ls []*Lease) []*Lease {
	items := make([]store.RenewItem, len(ls))
	for i, l := range ls {
		t := l.Task
		items[i] = store.RenewItem{TaskID: t.ID, Band: t.band, EntryID: t.entry, Run: t.run, Started: t.started}
	}
	res, err := q.store.Renew(ctx, consumer, items)
	if err != nil {
		s.redisError("renew", err)
		return ls
	}
	out := ls[:0]
	for i, l := range ls {
		if res[i] != store.Lost {
			out = append(out, l)
		}
	}
	return out
}
