package claim

import (
	"context"
	"strconv"
	"sync"
	"time"

	"github.com/dtq-dev/dtq/internal/batch"
	"github.com/dtq-dev/dtq/internal/store"
)

// heldLeases are the concurrency leases a reader holds for a queue with a
// queue-wide concurrency limit: one per task of the queue its worker
// runs, and the few a read is claiming for. They are renewed with the
// tasks and expire when they are not, so a lost worker's slots come back
// within the visibility timeout.
type heldLeases struct {
	mu   sync.Mutex
	held []string
	seq  int
	// releases coalesces the releases of tasks finishing at once into one
	// script call.
	releases *batch.Batcher[string, struct{}]
}

// acquireLeases asks the queue's limits for up to n claims and answers how
// many it got and the mode of the grant (store.Leased: as many leases are
// held). Granted none, it waits until one may be (Limits.Wait) and
// answers 0. With no limit (it was removed) it answers n and leaves the
// limited mode.
func (r *Reader) acquireLeases(ctx context.Context, n int) (int, int, error) {
	got, mode, g, err := r.grant(ctx, "acquire", n)
	if err != nil || got > 0 || mode == store.Unlimited {
		return got, mode, err
	}
	return 0, mode, r.Limits.Wait(ctx, g, time.Second)
}

// leaseLate takes the claims of entries a read made before its worker knew
// of the queue's limit (of them n are in hand): entries a script started
// already (pre) are held whatever the limit, the others get what it has
// room for, and those beyond go back to their band. It answers the
// grant's mode and the claims granted.
func (r *Reader) leaseLate(ctx context.Context, entries []store.Entry, pre []store.Started, n int) (int, int) {
	op := "acquire"
	if pre != nil {
		op = "hold"
	}
	got, mode, _, err := r.grant(ctx, op, n)
	if err != nil {
		// Unleased: they run as claimed; the limit holds from the next read.
		r.hooks.RedisError("lease", err)
		return store.Unlimited, n
	}
	for i := got; i < len(entries); i++ {
		entries[i].GiveBack = true
	}
	return mode, got
}

// grant runs op ("acquire" or "hold", Limits.Ask) for n claims, keeping
// the leases granted.
func (r *Reader) grant(ctx context.Context, op string, n int) (int, int, Grant, error) {
	l := &r.leases
	l.mu.Lock()
	names := make([]string, n)
	for i := range names {
		l.seq++
		names[i] = r.rc.Consumer + "|" + strconv.Itoa(l.seq)
	}
	l.mu.Unlock()
	g, err := r.Limits.Ask(ctx, op, r.rc.Visibility, names)
	if err != nil {
		return 0, 0, g, err
	}
	if g.Granted > 0 && g.Mode == store.Leased {
		l.mu.Lock()
		l.held = append(l.held, names[:g.Granted]...)
		l.mu.Unlock()
	}
	return g.Granted, g.Mode, g, nil
}

// giveBack returns unused of the claims a grant of mode gave (their leases
// too, in mode store.Leased): a task ended, or a read claimed fewer.
func (r *Reader) giveBack(ctx context.Context, mode, unused int) {
	if unused <= 0 || mode == store.Unlimited {
		return
	}
	var names []string
	if mode == store.Leased {
		names = r.popLeases(unused)
	}
	r.release(ctx, names, unused)
}

// ReleaseLease gives back a lease held, for a task of a leased claim
// (Claim.Limit) that ended.
func (r *Reader) ReleaseLease(ctx context.Context) {
	if names := r.popLeases(1); len(names) > 0 {
		r.release(ctx, names, 0)
	}
}

func (r *Reader) popLeases(n int) []string {
	l := &r.leases
	l.mu.Lock()
	defer l.mu.Unlock()
	n = min(n, len(l.held))
	names := append([]string(nil), l.held[len(l.held)-n:]...)
	l.held = l.held[:len(l.held)-n]
	return names
}

func (r *Reader) release(ctx context.Context, names []string, unused int) {
	var err error
	if len(names) == 1 && unused == 0 {
		_, err = r.leases.releases.Do(ctx, names[0])
	} else {
		err = r.q.ReleaseLeases(ctx, names, unused)
	}
	if err != nil {
		// They expire after the visibility timeout instead.
		r.hooks.RedisError("lease", err)
		r.log.Warn("releasing concurrency leases failed; they expire after the visibility timeout", "queue", r.cfg.Queue, "error", err)
	}
}

// RenewLeases moves the expiry of the leases held.
func (r *Reader) RenewLeases(ctx context.Context) {
	l := &r.leases
	l.mu.Lock()
	names := append([]string(nil), l.held...)
	l.mu.Unlock()
	if len(names) == 0 {
		return
	}
	if err := r.q.RenewLeases(ctx, r.rc.Visibility, names); err != nil && ctx.Err() == nil {
		r.hooks.RedisError("lease", err)
		r.log.Warn("renewing concurrency leases failed; retrying next tick", "queue", r.cfg.Queue, "error", err)
	}
}

// PauseLimits pauses the queue's limits for d, and the scoped limits
// scopes: a task said the remote wants it to slow down (RetryAfter).
func (r *Reader) PauseLimits(ctx context.Context, d time.Duration, scopes []string) {
	if r.Limits.Limited() {
		if err := r.q.PauseLimits(ctx, d); err != nil {
			r.hooks.RedisError("lease", err)
			r.log.Warn("pausing the queue's limits failed", "queue", r.cfg.Queue, "error", err)
		}
	}
	if len(scopes) > 0 {
		if err := r.q.PauseScopes(ctx, d, scopes); err != nil {
			r.hooks.RedisError("lease", err)
			r.log.Warn("pausing the task's scoped limits failed", "queue", r.cfg.Queue, "scopes", scopes, "error", err)
		}
	}
}

// ReleaseScopes releases the scoped leases names of a run that ended:
// the tasks they held back move into their bands.
func (r *Reader) ReleaseScopes(ctx context.Context, names []string) {
	if len(names) == 0 {
		return
	}
	if _, err := r.scopeReleases.Do(ctx, names); err != nil {
		// They expire after the visibility timeout instead (the scheduler's
		// sweep moves the waiters in).
		r.hooks.RedisError("lease", err)
		r.log.Warn("releasing scoped leases failed; they expire after the visibility timeout", "queue", r.cfg.Queue, "error", err)
	}
}

// RenewScopes moves the expiry of the scoped leases names of running
// tasks.
func (r *Reader) RenewScopes(ctx context.Context, names []string) {
	if len(names) == 0 {
		return
	}
	if err := r.q.RenewScopeLeases(ctx, r.rc.Visibility, names); err != nil && ctx.Err() == nil {
		r.hooks.RedisError("lease", err)
		r.log.Warn("renewing scoped leases failed; retrying next tick", "queue", r.cfg.Queue, "error", err)
	}
}
