package dtq

import (
	"context"
	"strconv"
	"sync"
	"time"

	"github.com/dtq-dev/dtq/internal/batch"
)

// leases are the concurrency leases a worker holds for one queue with a
// queue-wide limit (Client.SetConcurrencyLimit): one per task of the
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
		return make([]struct{}, len(names)), wq.q.store.ReleaseLeases(ctx, names)
	}, 256, 1, 10*time.Second)
}

// readLimit reads the queue's limit into wq.limit.
func (wq *workerQueue) readLimit(ctx context.Context) error {
	limit, err := wq.q.store.Limit(ctx)
	if err != nil {
		return err
	}
	wq.limit.Store(limit)
	return nil
}

// acquireLeases takes up to n leases of the queue's limit; with none free it
// waits until one may be (a release of the full limit appends to the
// wakeup stream; a lost worker's lease expires) and answers 0. With no limit
// (it was removed) it answers n and leaves lease mode.
func (wq *workerQueue) acquireLeases(ctx context.Context, n int) (int, error) {
	l := &wq.leases
	l.mu.Lock()
	names := make([]string, n)
	for i := range names {
		l.seq++
		names[i] = wq.w.cfg.ID + "|" + strconv.Itoa(l.seq)
	}
	l.mu.Unlock()
	g, err := wq.q.store.AcquireLeases(ctx, wq.w.cfg.VisibilityTimeout, names)
	if err != nil {
		return 0, err
	}
	wq.limit.Store(g.Limit)
	if g.Limit == 0 {
		return n, nil
	}
	if g.Granted > 0 {
		l.mu.Lock()
		l.held = append(l.held, names[:g.Granted]...)
		l.mu.Unlock()
		return g.Granted, nil
	}
	block := time.Second
	if !g.Earliest.IsZero() {
		block = min(block, max(time.Until(g.Earliest)+time.Millisecond, time.Millisecond))
	}
	return 0, wq.q.store.WaitWakeup(ctx, g.Wakeup, block)
}

// releaseLeases gives back n of the leases held.
func (wq *workerQueue) releaseLeases(ctx context.Context, n int) {
	if n <= 0 {
		return
	}
	l := &wq.leases
	l.mu.Lock()
	n = min(n, len(l.held))
	names := append([]string(nil), l.held[len(l.held)-n:]...)
	l.held = l.held[:len(l.held)-n]
	l.mu.Unlock()
	var err error
	switch len(names) {
	case 0:
		return
	case 1:
		_, err = l.releases.Do(ctx, names[0])
	default:
		err = wq.q.store.ReleaseLeases(ctx, names)
	}
	if err != nil {
		// They expire after the visibility timeout instead.
		wq.w.c.redisError("lease", err)
		wq.w.log.Warn("releasing concurrency leases failed; they expire after the visibility timeout", logQueue, wq.q.name, "error", err)
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
