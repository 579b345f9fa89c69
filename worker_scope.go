package dtq

import (
	"context"
	"time"

	"github.com/dtq-dev/dtq/internal/batch"
	"github.com/dtq-dev/dtq/internal/claim"
	"github.com/dtq-dev/dtq/internal/store"
)

// newScopeReleases returns the batcher of wq's releases of scoped leases:
// the tasks ending at once release theirs in one script call.
func newScopeReleases(wq *workerQueue) *batch.Batcher[[]string, struct{}] {
	return batch.New(func(ctx context.Context, items [][]string) ([]struct{}, error) {
		var names []string
		for _, it := range items {
			names = append(names, it...)
		}
		return make([]struct{}, len(items)), wq.q.store.ReleaseScopeLeases(ctx, names)
	}, 256, 1, 10*time.Second)
}

// readScopes reads the names of the queue's scoped limits into wq.scopes
// (nil when it has none: the start path is the unscoped one).
func (wq *workerQueue) readScopes(ctx context.Context) error {
	defs, err := wq.q.store.ScopeDefs(ctx)
	if err != nil {
		return err
	}
	set := claim.ScopesOf(defs)
	if set == nil {
		wq.scopes.Store(nil)
		return nil
	}
	wq.scopes.Store(&set)
	return nil
}

// scopesFor returns the scoped limits the task of entry e is under: its
// type's and its limit key's (or the limit of each key), those the queue
// has; nil for none.
func (wq *workerQueue) scopesFor(e *store.Entry) []string {
	set := wq.scopes.Load()
	if set == nil {
		return nil
	}
	return set.Of(e)
}

// leasedScopes returns those of scopes that take leases (have a
// concurrency limit) as the worker knows them now: what a run's end
// releases and its renewals renew.
func (wq *workerQueue) leasedScopes(scopes []string) []string {
	set := wq.scopes.Load()
	if set == nil {
		return nil
	}
	return set.Leased(scopes)
}

// releaseScopes releases the scoped leases of t, which ended: the tasks
// they held back move into their bands.
func (wq *workerQueue) releaseScopes(ctx context.Context, t *Task) {
	if len(t.leased) == 0 {
		return
	}
	names := make([]string, len(t.leased))
	for i, s := range t.leased {
		names[i] = store.ScopeLease(s, ulidOf(t.ID), t.run)
	}
	if _, err := wq.scopeReleases.Do(ctx, names); err != nil {
		// They expire after the visibility timeout instead (the scheduler's
		// sweep moves the waiters in).
		wq.w.c.redisError("lease", err)
		wq.w.log.Warn("releasing scoped leases failed; they expire after the visibility timeout", logTaskID, t.ID,
			logQueue, wq.q.name, "error", err)
	}
}

// renewScopes moves the expiry of the scoped leases of the running tasks
// exs (of this queue).
func (wq *workerQueue) renewScopes(ctx context.Context, exs []*execution) {
	var names []string
	for _, ex := range exs {
		for _, s := range ex.task.leased {
			names = append(names, store.ScopeLease(s, ulidOf(ex.task.ID), ex.task.run))
		}
	}
	if len(names) == 0 {
		return
	}
	if err := wq.q.store.RenewScopeLeases(ctx, wq.w.cfg.VisibilityTimeout, names); err != nil && ctx.Err() == nil {
		wq.w.c.redisError("lease", err)
		wq.w.log.Warn("renewing scoped leases failed; retrying next tick", logQueue, wq.q.name, "error", err)
	}
}

// pauseScopes pauses the scoped limits of t for d: its handler said the
// remote wants it to slow down (RetryAfter).
func (wq *workerQueue) pauseScopes(ctx context.Context, d time.Duration, t *Task) {
	if len(t.scopes) == 0 {
		return
	}
	if err := wq.q.store.PauseScopes(ctx, d, t.scopes); err != nil {
		wq.w.c.redisError("lease", err)
		wq.w.log.Warn("pausing the task's scoped limits failed", logTaskID, t.ID, logQueue, wq.q.name, "error", err)
	}
}
