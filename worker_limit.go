package dtq

import (
	"context"
	"strconv"
	"sync"
	"time"

	"github.com/dtq-dev/dtq/internal/batch"
	"github.com/dtq-dev/dtq/internal/store"
)

// leases are the concurrency leases a worker holds for one queue with a
// queue-wide concurrency limit (Admin.SetLimits): one per task of the
// queue it runs, and the few a read is claiming for. They are renewed with
// the tasks and expire when they are not, so a lost worker's slots come
// back within the visibility timeout.
type leases struct {
	mu   sync.Mutex
	held []string
	seq  int
	// releases coalesces the releases of tasks finishing at once into one
	// script call.
	releases *batch.Batcher[string, struct{}]
}

// newLeaseReleases returns the batcher of wq's lease releases.
func newLeaseReleases(wq *workerQueue) *batch.Batcher[string, struct{}] {
	return batch.New(func(ctx context.Context, names []string) ([]struct{}, error) {
		return make([]struct{}, len(names)), wq.q.store.ReleaseLeases(ctx, names, 0)
	}, 256, 1, 10*time.Second)
}

// readLimit reads whether the queue has a queue-wide limit into
// wq.limited, and its scoped limits into wq.scopes.
func (wq *workerQueue) readLimit(ctx context.Context) error {
	limited, err := wq.q.store.Limited(ctx)
	if err != nil {
		return err
	}
	wq.limited.Store(limited)
	return wq.readScopes(ctx)
}

// acquireLeases asks the queue's limits for up to n claims and answers how
// many it got and the mode of the grant (store.Leased: as many leases are
// held). Granted none, it waits until one may be — a release of the full
// concurrency limit appends to the wakeup stream; the next rate token, a
// pause's end or a lost worker's lease expiry comes at a known time — and
// answers 0. With no limit (it was removed) it answers n and leaves the
// limited mode.
func (wq *workerQueue) acquireLeases(ctx context.Context, n int) (int, int, error) {
	got, mode, g, err := wq.grant(ctx, "acquire", n)
	if err != nil || got > 0 || mode == store.Unlimited {
		return got, mode, err
	}
	block := time.Second
	if !g.Retry.IsZero() {
		block = min(block, max(time.Until(g.Retry)+time.Millisecond, time.Millisecond))
	}
	return 0, mode, wq.q.store.WaitWakeup(ctx, g.Wakeup, block)
}

// leaseLate takes the claims of entries a read made before its worker knew
// of the queue's limit (of them granted are in hand): entries a script
// started already (pre) are held whatever the limit, the others get what it
// has room for, and those beyond go back to their band. It answers the
// grant's mode and the claims granted.
func (wq *workerQueue) leaseLate(ctx context.Context, entries []store.Entry, pre []store.Started, n int) (int, int) {
	op := "acquire"
	if pre != nil {
		op = "hold"
	}
	got, mode, _, err := wq.grant(ctx, op, n)
	if err != nil {
		// Unleased: they run as claimed; the limit holds from the next read.
		wq.w.c.redisError("lease", err)
		return store.Unlimited, n
	}
	for i := got; i < len(entries); i++ {
		entries[i].GiveBack = true
	}
	return mode, got
}

// grant runs op ("acquire": what the limits have room for, or "hold": all)
// for n claims, keeping the leases granted.
func (wq *workerQueue) grant(ctx context.Context, op string, n int) (int, int, store.Grant, error) {
	l := &wq.leases
	l.mu.Lock()
	names := make([]string, n)
	for i := range names {
		l.seq++
		names[i] = wq.w.cfg.ID + "|" + strconv.Itoa(l.seq)
	}
	l.mu.Unlock()
	g, err := wq.q.store.AcquireLeases(ctx, op, wq.w.cfg.VisibilityTimeout, names)
	if err != nil {
		return 0, 0, g, err
	}
	if g.Mode == store.Unlimited {
		wq.limited.Store(false)
		return n, g.Mode, g, nil
	}
	wq.w.c.obs.throttled(wq.q.name, n-g.Granted)
	if g.Granted > 0 && g.Mode == store.Leased {
		l.mu.Lock()
		l.held = append(l.held, names[:g.Granted]...)
		l.mu.Unlock()
	}
	return g.Granted, g.Mode, g, nil
}

// giveBack returns unused of the claims a grant of mode gave (their leases
// too, in mode store.Leased): a task ended, or a read claimed fewer.
func (wq *workerQueue) giveBack(ctx context.Context, mode, unused int) {
	if unused <= 0 || mode == store.Unlimited {
		return
	}
	var names []string
	if mode == store.Leased {
		names = wq.popLeases(unused)
	}
	wq.release(ctx, names, unused)
}

// releaseLeases gives back n of the leases held, for tasks that ended.
func (wq *workerQueue) releaseLeases(ctx context.Context, n int) {
	if names := wq.popLeases(n); len(names) > 0 {
		wq.release(ctx, names, 0)
	}
}

func (wq *workerQueue) popLeases(n int) []string {
	l := &wq.leases
	l.mu.Lock()
	defer l.mu.Unlock()
	n = min(n, len(l.held))
	names := append([]string(nil), l.held[len(l.held)-n:]...)
	l.held = l.held[:len(l.held)-n]
	return names
}

func (wq *workerQueue) release(ctx context.Context, names []string, unused int) {
	var err error
	if len(names) == 1 && unused == 0 {
		_, err = wq.leases.releases.Do(ctx, names[0])
	} else {
		err = wq.q.store.ReleaseLeases(ctx, names, unused)
	}
	if err != nil {
		// They expire after the visibility timeout instead.
		wq.w.c.redisError("lease", err)
		wq.w.log.Warn("releasing concurrency leases failed; they expire after the visibility timeout", logQueue, wq.q.name, "error", err)
	}
}

// pauseLimits pauses the queue's limits for d: a task of a limited queue
// said the remote wants it to slow down (RetryAfter).
func (wq *workerQueue) pauseLimits(ctx context.Context, d time.Duration) {
	if !wq.limited.Load() {
		return
	}
	if err := wq.q.store.PauseLimits(ctx, d); err != nil {
		wq.w.c.redisError("lease", err)
		wq.w.log.Warn("pausing the queue's limits failed", logQueue, wq.q.name, "error", err)
	}
}

// renewLeases moves the expiry of the leases held.
func (wq *workerQueue) renewLeases(ctx context.Context) {
	l := &wq.leases
	l.mu.Lock()
	names := append([]string(nil), l.held...)
	l.mu.Unlock()
	if len(names) == 0 {
		return
	}
	if err := wq.q.store.RenewLeases(ctx, wq.w.cfg.VisibilityTimeout, names); err != nil && ctx.Err() == nil {
		wq.w.c.redisError("lease", err)
		wq.w.log.Warn("renewing concurrency leases failed; retrying next tick", logQueue, wq.q.name, "error", err)
	}
}
