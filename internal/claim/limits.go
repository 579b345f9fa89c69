package claim

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dtq-dev/dtq/internal/store"
)

// Limits is what a claimer knows of its queue's limits (Admin.SetLimits
// and the scoped ones): whether a queue-wide limit grants claims before a
// read, and which scoped limits (a type's, a limit key's) a start takes.
// A runner reads them again now and then (Read, ReadEvery), and at once
// when a grant finds the queue-wide limit gone. It is safe for concurrent
// use.
type Limits struct {
	q       *store.Queue
	hooks   Hooks
	log     *slog.Logger
	queue   string
	limited atomic.Bool
	scopes  atomic.Pointer[Scopes]
	mu      sync.Mutex
	read    time.Time // when ReadEvery last read them (zero: read again)
}

// Read reads whether the queue has a queue-wide limit and its scoped
// limits.
func (l *Limits) Read(ctx context.Context) error {
	limited, err := l.q.Limited(ctx)
	if err != nil {
		return err
	}
	defs, err := l.q.ScopeDefs(ctx)
	if err != nil {
		return err
	}
	l.limited.Store(limited)
	if set := ScopesOf(defs); set != nil {
		l.scopes.Store(&set)
	} else {
		l.scopes.Store(nil)
	}
	return nil
}

// ReadEvery reads the limits when every has passed since it last did (or
// a grant found the limit gone), and answers whether the queue has a
// queue-wide limit.
func (l *Limits) ReadEvery(ctx context.Context, every time.Duration) (bool, error) {
	l.mu.Lock()
	due := time.Since(l.read) > every
	l.mu.Unlock()
	if !due {
		return l.Limited(), nil
	}
	if err := l.Read(ctx); err != nil {
		return false, err
	}
	l.mu.Lock()
	l.read = time.Now()
	l.mu.Unlock()
	return l.Limited(), nil
}

// Limited reports whether the queue has a queue-wide limit: claims are
// granted before a read.
func (l *Limits) Limited() bool { return l.limited.Load() }

// Scoped reports whether the queue has scoped limits: starts ask them.
func (l *Limits) Scoped() bool { return l.scopes.Load() != nil }

// ScopesOf returns the scoped limits the task of entry e is under: its
// type's and its limit key's (or the limit of each key), those the queue
// has; nil for none.
func (l *Limits) ScopesOf(e *store.Entry) []string {
	if set := l.scopes.Load(); set != nil {
		return set.Of(e)
	}
	return nil
}

// LeasedOf returns those of scopes that take leases (have a concurrency
// limit) as the claimer knows them now: what a run's end releases and its
// renewals renew.
func (l *Limits) LeasedOf(scopes []string) []string {
	if set := l.scopes.Load(); set != nil && len(scopes) > 0 {
		return set.Leased(scopes)
	}
	return nil
}

// Grant is what a queue's limits granted: Granted claims, which in mode
// store.Leased hold the leases Names[:Granted].
type Grant struct {
	Names   []string
	Granted int
	Mode    int
	Retry   time.Time // with nothing granted: when something may be
	Wakeup  string    // with nothing granted: the wakeup stream's id to wait after
}

// Name returns the concurrency lease of the i-th claim granted ("" when
// the grant holds none).
func (g Grant) Name(i int) string {
	if g.Mode != store.Leased || i >= g.Granted {
		return ""
	}
	return g.Names[i]
}

// Ask runs op ("acquire": what the limits have room for, or "hold": all)
// for a claim per lease of names, leases lasting ttl. A queue-wide limit
// found removed grants all, and the limits are read again.
func (l *Limits) Ask(ctx context.Context, op string, ttl time.Duration, names []string) (Grant, error) {
	g, err := l.q.AcquireLeases(ctx, op, ttl, names)
	if err != nil {
		return Grant{}, err
	}
	if g.Mode == store.Unlimited {
		l.limited.Store(false)
		l.mu.Lock()
		l.read = time.Time{}
		l.mu.Unlock()
		return Grant{Names: names, Granted: len(names), Mode: g.Mode}, nil
	}
	l.hooks.Throttled(len(names) - g.Granted)
	return Grant{Names: names, Granted: g.Granted, Mode: g.Mode, Retry: g.Retry, Wakeup: g.Wakeup}, nil
}

// Wait waits, after a grant of nothing, until a claim may be granted — a
// release of the full concurrency limit appends to the wakeup stream; the
// next rate token, a pause's end or a lost worker's lease expiry comes at
// a known time — or block passes.
func (l *Limits) Wait(ctx context.Context, g Grant, block time.Duration) error {
	if !g.Retry.IsZero() {
		block = min(block, max(time.Until(g.Retry)+time.Millisecond, time.Millisecond))
	}
	return l.q.WaitWakeup(ctx, g.Wakeup, block)
}

// GiveBack returns to the limits the claims of g from the used-th on
// (their leases too): what a read did not claim or a start did not begin.
// A failure leaves them to expire.
func (l *Limits) GiveBack(ctx context.Context, g Grant, used int) {
	unused := g.Granted - used
	if g.Mode == store.Unlimited || unused <= 0 {
		return
	}
	var names []string
	if g.Mode == store.Leased {
		names = g.Names[used:g.Granted]
	}
	if err := l.q.ReleaseLeases(context.WithoutCancel(ctx), names, unused); err != nil {
		l.hooks.RedisError("lease", err)
		l.log.Warn("giving back concurrency leases failed; they expire after the lease time", "queue", l.queue, "error", err)
	}
}
