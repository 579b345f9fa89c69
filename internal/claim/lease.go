package claim

import (
	"context"
	"crypto/rand"
	"errors"
	"strconv"
	"time"

	"github.com/dtq-dev/dtq/internal/store"
)

// Leases: the lease server's calls on its claimers. A holder — a worker
// over HTTP, in any language — polls; each call claims and starts what it
// leases under the queue's limits as a Go worker's reader would, with the
// same scripted read, start and settling (claimer.go), the same type rule
// (types.go), and, within what a stateless holder allows, the same
// recovery of lost answers:
//   - a start whose answer is lost is asked again as resumed within the
//     call, for up to half the lease's timeout while the caller waits;
//   - after a claim of a holder fails, its next call in this process
//     starts the entries pending for it in their first delivery that no
//     lease of it holds (not started): a claim's lost answer. Entries it
//     reclaimed are left to the next takeover: a running lease of its own
//     looks the same.

// Poll is one holder's call.
type Poll struct {
	Consumer string        // the holder's consumer name
	Max      int           // how many tasks to lease at most
	Types    Types         // the types it runs (nil: every type)
	TTL      time.Duration // a lease's timeout, and the reclaim idle time
	Wait     time.Duration // how long to wait for a first task
}

// LimitsEvery is how often leasing reads a queue's limits again.
const LimitsEvery = 2 * time.Second

// maxTypedReads bounds the reads of one leaseTypes call: a queue holding
// that many batches of other types' entries ahead of this holder's is
// read on at the call's next turn.
const maxTypedReads = 32

// maxRecovered bounds the lost claims one call finds again.
const maxRecovered = 100

// Lease leases up to p.Max tasks for a holder from the queues of cs, the
// first with tasks first, waiting up to p.Wait for a first one; none is no
// error.
func Lease(ctx context.Context, cs []*Claimer, p Poll) ([]Claim, error) {
	deadline := time.Now().Add(p.Wait)
	var marks []string // the first queue's, for a holder of some types (Watch)
	for {
		var out []Claim
		for _, c := range cs {
			ls, err := c.leaseTypes(ctx, p, p.Max-len(out))
			if err != nil {
				return out, err
			}
			out = append(out, ls...)
			if len(out) >= p.Max {
				break
			}
		}
		left := time.Until(deadline)
		if len(out) > 0 || left <= 0 {
			return out, nil
		}
		c := cs[0]
		if p.Types != nil && marks == nil {
			// Nothing of its types ready: mark the bands' ends, then read
			// once more — what came before the marks is read, what comes
			// after them is watched. (Taken only now: a call that finds
			// work never pays for them.)
			var err error
			if marks, err = c.q.Tails(ctx); err != nil {
				return nil, err
			}
			continue
		}
		if p.Types != nil {
			// Still nothing of its types: wait as on an empty queue until
			// one arrives (entries of other types, given back by this
			// holder or others, do not wake it), then read them all again.
			if _, err := Watch(ctx, c.q, marks, p.Types, min(left, time.Second)); err != nil {
				if ctx.Err() != nil {
					return nil, nil //nolint:nilerr // the caller went away: nothing leased
				}
				return nil, err
			}
			continue
		}
		// Nothing ready: wait for a first entry of the first queue, a
		// blocking read woken as a task arrives, then read them all again.
		ls, err := c.waitLease(ctx, p, min(left, time.Second))
		if err != nil && ctx.Err() != nil {
			return nil, nil //nolint:nilerr // the caller went away: nothing leased
		}
		if err != nil || len(ls) > 0 {
			return ls, err
		}
	}
}

// leaseTypes leases up to n tasks of the queue, of the types of p (nil:
// any): it reads on past its give-backs while older entries may wait
// behind them.
func (c *Claimer) leaseTypes(ctx context.Context, p Poll, n int) ([]Claim, error) {
	if p.Types == nil {
		ls, _, err := c.leaseFrom(ctx, p, n)
		return ls, err
	}
	var others Others
	for range maxTypedReads {
		ls, read, err := c.leaseFrom(ctx, p, n)
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

// leaseFrom leases up to n tasks: under the queue's limits, as many as
// they grant. It returns the entries read too.
func (c *Claimer) leaseFrom(ctx context.Context, p Poll, n int) ([]Claim, []store.Entry, error) {
	g, err := c.grantLeases(ctx, p, n)
	if err != nil || g.Granted == 0 {
		return nil, nil, err
	}
	if ls, done, err := c.recoverLost(ctx, p, g); err != nil || done {
		if err != nil && !done {
			c.Limits.GiveBack(ctx, g, 0)
		}
		return ls, nil, err
	}
	res, err := c.Read(ctx, p.Consumer, g.Granted, p.TTL, false)
	if err != nil {
		c.lostClaim(p.Consumer)
		c.Limits.GiveBack(ctx, g, 0)
		return nil, nil, err
	}
	if res.Paused || len(res.Entries) == 0 {
		c.Limits.GiveBack(ctx, g, 0)
		return nil, nil, nil
	}
	ls, err := c.startLeases(ctx, p, res.Entries, g, false)
	return ls, res.Entries, err
}

// grantLeases asks the queue's limits, when it has a queue-wide one, for
// n claims lasting p.TTL, each a lease of its own.
func (c *Claimer) grantLeases(ctx context.Context, p Poll, n int) (Grant, error) {
	limited, err := c.Limits.ReadEvery(ctx, LimitsEvery)
	if err != nil || !limited {
		return Grant{Granted: n, Mode: store.Unlimited}, err
	}
	prefix := "http-" + rand.Text()[:12] + "-"
	names := make([]string, n)
	for i := range names {
		names[i] = prefix + strconv.Itoa(i)
	}
	return c.Limits.Ask(ctx, "acquire", p.TTL, names)
}

// startLeases starts claimed entries for the holder, giving back those of
// types it does not run and those past what g granted, and returns the
// leases, each holding a lease of g.
//
// With stale (claims made a while ago: found again after their answer was
// lost) the leases are renewed before they are handed out, as is any
// start asked again: a lease's timeout runs from its handing out.
func (c *Claimer) startLeases(ctx context.Context, p Poll, entries []store.Entry, g Grant, stale bool) ([]Claim, error) {
	GiveBackOthers(entries, p.Types)
	for i := range entries {
		if i >= g.Granted {
			entries[i].GiveBack = true // past what the limits granted
		}
		entries[i].Scopes = c.Limits.ScopesOf(&entries[i])
	}
	cfg := store.StartConfig{Worker: p.Consumer, MaxCrashes: c.cfg.MaxCrashes, Retention: c.cfg.Retention, LeaseTTL: p.TTL,
		Durability: c.hooks.Durability()}
	started, err := c.q.Start(ctx, cfg, entries)
	var nre *store.NotReplicatedError
	if err != nil && !errors.As(err, &nre) {
		// Asked again for up to half the lease's timeout.
		wait, cancel := context.WithTimeout(ctx, p.TTL/2)
		started, err = c.askAgain(wait, entries, min(time.Second, p.TTL/4), err,
			func() ([]store.Started, error) { return c.q.Start(wait, cfg, entries) })
		cancel()
		stale = true
	}
	if errors.As(err, &nre) {
		c.notReplicated(len(entries), err)
		err = nil
	}
	if err != nil {
		// The entries stay claimed: taken over after the timeout.
		c.hooks.RedisError("start", err)
		c.Limits.GiveBack(ctx, g, 0)
		return nil, err
	}
	out := c.settle(entries, started)
	for i := range out {
		out[i].Limit = g.Name(i)
	}
	used := len(out)
	if stale && len(out) > 0 {
		out = c.renewStale(ctx, p.Consumer, out)
	}
	c.Limits.GiveBack(ctx, g, used)
	return out, nil
}

// waitLease waits up to block for a first task and leases it (with what
// else came, up to p.Max). Under a queue-wide limit the claims are granted
// first; granted none, it waits for a release or the next grant instead.
func (c *Claimer) waitLease(ctx context.Context, p Poll, block time.Duration) ([]Claim, error) {
	g, err := c.grantLeases(ctx, p, p.Max)
	if err != nil {
		return nil, err
	}
	if g.Granted == 0 {
		return nil, c.Limits.Wait(ctx, g, block)
	}
	entries, _, err := c.q.ReadBands(ctx, p.Consumer, g.Granted, block, 0)
	if err != nil {
		c.lostClaim(p.Consumer) // (a read cut short may have claimed)
	}
	if err != nil || len(entries) == 0 {
		c.Limits.GiveBack(ctx, g, 0)
		return nil, err
	}
	return c.startLeases(ctx, p, entries, g, false)
}

// lostClaim notes that a claim of consumer failed with its call in
// flight: its next call in this process looks for what it claimed.
func (c *Claimer) lostClaim(consumer string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.lost == nil {
		c.lost = map[string]bool{}
	}
	c.lost[consumer] = true
}

// recoverLost leases, under grant g, the entries pending for the holder
// in their first delivery and not started, after a claim of it failed in
// this process. done reports that it used g (it found some); otherwise g
// is the caller's still.
func (c *Claimer) recoverLost(ctx context.Context, p Poll, g Grant) (ls []Claim, done bool, err error) {
	c.mu.Lock()
	lost := c.lost[p.Consumer]
	c.mu.Unlock()
	if !lost {
		return nil, false, nil
	}
	pending, err := c.q.Claimed(ctx, p.Consumer, maxRecovered)
	if err != nil {
		return nil, false, err
	}
	c.mu.Lock()
	delete(c.lost, p.Consumer)
	c.mu.Unlock()
	var fresh []store.Entry
	for _, e := range pending {
		if !e.Reclaimed {
			fresh = append(fresh, e) // start.lua skips one that runs already (a lease's)
		}
	}
	if len(fresh) == 0 {
		return nil, false, nil
	}
	c.log.Info("claims whose answer was lost found again; leasing them", "queue", c.cfg.Queue, "worker", p.Consumer, "tasks", len(fresh))
	ls, err = c.startLeases(ctx, p, fresh, g, true)
	return ls, true, err
}

// renewStale renews the runs of claims ls, started from claims made a
// while ago, and returns those still the holder's (a claim another reader
// took over meanwhile is no lease; its task runs there). Renewal failing,
// they are handed out as they are.
func (c *Claimer) renewStale(ctx context.Context, consumer string, ls []Claim) []Claim {
	items := make([]store.RenewItem, len(ls))
	for i, l := range ls {
		items[i] = store.RenewItem{TaskID: l.Entry.TaskID, Band: l.Entry.Band, EntryID: l.Entry.EntryID, Run: l.Started.Run,
			Started: l.Started.Started}
	}
	res, err := c.q.Renew(ctx, consumer, items)
	if err != nil {
		c.hooks.RedisError("renew", err)
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
