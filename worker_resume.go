package dtq

import (
	"context"
	"errors"
	"time"

	"github.com/dtq-dev/dtq/internal/backoff"
	"github.com/dtq-dev/dtq/internal/store"
)

// A claim or a start whose answer is lost — the connection failed with the
// call in flight, Redis killed after it wrote the call but before its
// reply — may have happened. Left alone, its tasks would stay claimed by
// this worker, unrenewed, and be taken over a visibility timeout later as
// from a lost worker: a crash recorded (counted toward MaxCrashes) for a
// run whose handler never started, and the task late by that timeout. So
// the worker finds them again (CONTRACT 3.3.1b):
//   - a start it made is asked again as resumed (store.Entry.Resumed):
//     a run of this worker's the task holds goes on, else the entry starts
//     as claimed (resumeStarts);
//   - after a claim call fails, the reader reads the entries pending for
//     this worker before its next claim and starts those no execution of
//     it holds (recoverClaims).
// No run is recorded as crashed unless a handler could have started.

// resumeStarts asks start.lua again, as resumed, for entries whose start
// (after pre: the outcomes of the entries started already, nil for none)
// failed with err, until it answers or stop ends (then it returns err,
// pre as it was).
func (wq *workerQueue) resumeStarts(ctx, stop context.Context, entries []store.Entry, pre []store.Started, err error) ([]store.Started, error) {
	w := wq.w
	for i := range entries {
		entries[i].Resumed = true
	}
	retry := backoff.Backoff{Max: min(time.Second, w.cfg.VisibilityTimeout/4)}
	for {
		w.c.redisError("start", err)
		w.log.Warn("starting tasks failed; asking again", "queue", wq.q.name, "tasks", len(entries), "error", err)
		if retry.Sleep(stop) != nil {
			return pre, err
		}
		started, serr := wq.startRest(ctx, entries, pre)
		var nre *store.NotReplicatedError
		if serr == nil || errors.As(serr, &nre) {
			return started, serr
		}
		err = serr
	}
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
