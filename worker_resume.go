package dtq

import (
	"context"
	"time"

	"github.com/dtq-dev/dtq/internal/store"
)

// resumeStarts asks start.lua again (askAgain) for entries whose start
// (after pre: the outcomes of the entries started already, nil for none)
// failed with err, until it answers or stop ends (then it returns err,
// pre as it was). After a failed claim call, recoverClaims finds the
// claims among the entries pending for the worker.
func (wq *workerQueue) resumeStarts(ctx, stop context.Context, entries []store.Entry, pre []store.Started, err error) ([]store.Started, error) {
	w := wq.w
	started, err := askAgain(stop, w.log, w.c.engine, wq.q.name, entries, min(time.Second, w.cfg.VisibilityTimeout/4), err,
		func() ([]store.Started, error) { return wq.startRest(ctx, entries, pre) })
	if started == nil {
		started = pre
	}
	return started, err
}

// recoverClaims starts the entries pending for this worker in the queue
// that none of its executions holds: claims whose answer was lost. The
// starts in flight end first (what they hold is theirs).
func (wq *workerQueue) recoverClaims(ctx context.Context) error {
	wq.starting.Wait()
	w := wq.w
	pending, err := wq.q.store.Claimed(ctx, w.cfg.ID, 2*(wq.slots.size+wq.slots.extra)+maxFetch)
	if err != nil {
		return err
	}
	var lost []store.Entry
	w.mu.Lock()
	for _, e := range pending {
		if _, held := w.running[e.TaskID]; !held {
			lost = append(lost, e)
		}
	}
	w.mu.Unlock()
	if len(lost) == 0 {
		return nil
	}
	n := wq.slots.grab(len(lost))
	for i := n; i < len(lost); i++ {
		lost[i].GiveBack = true // no slot for it: back to its band
	}
	mode, granted := store.Unlimited, n
	if wq.limited.Load() && n > 0 {
		// Claimed under the limit already: held whatever its room.
		got, m, _, err := wq.grant(ctx, "hold", n)
		if err != nil {
			wq.slots.release(n)
			return err
		}
		mode, granted = m, got
	}
	w.log.Info("claims whose answer was lost found again; starting them", logQueue, wq.q.name, "tasks", len(lost))
	// When they were claimed is unknown (before the failed call): taken as
	// a visibility timeout ago, so that each is renewed, fenced, before its
	// handler runs (confirmClaim) — and not run if another worker took it
	// over meanwhile.
	claimed := time.Now().Add(-w.cfg.VisibilityTimeout)
	wq.starting.Add(1)
	w.readers.Go(func() {
		defer wq.starting.Done()
		wq.start(context.WithoutCancel(ctx), ctx, lost, nil, claimed, n, mode, granted)
	})
	return nil
}
