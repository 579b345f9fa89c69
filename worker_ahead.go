package dtq

import (
	"context"
	"time"
)

// Claiming ahead. A worker whose handlers are quick spends most of a
// slot's cycle on the round trip that claims its next task: the slot frees,
// the read goes out, the task comes back. So while a queue's handlers take
// under aheadBelow on average (and the queue has no limit to ask first),
// its reader claims up to aheadOf(share) tasks beyond its share of
// Concurrency; they wait on this worker for a handler slot, at most about
// one quick handler's time. Handlers still run at most share at once. With
// slow handlers nothing is claimed ahead: a claimed task then waits for no
// handler, so an idle worker elsewhere is never kept from it.
const aheadBelow = time.Millisecond

// aheadOf is how many tasks a queue with share slots may claim ahead: as
// many again, and at least aheadMin (at most twice the share), and none for
// a share of one, whose tasks run one after the other in the order they were
// claimed (tasks claimed ahead start in no set order: each waits for a
// handler slot on its own goroutine). What is claimed ahead covers the read
// round trip of a slot's next claim; a small share covers little of it (a
// drain with 10 slots made ~30% more tasks/s with 20 ahead than with 10),
// and twice a large share costs Redis more per task than it gains
// (docs/performance.md, 2026-12-05).
func aheadOf(share int) int {
	if share < 2 {
		return 0
	}
	return max(share, min(2*share, aheadMin))
}

// aheadMin is the fewest tasks a share of two or more may claim ahead
// (aheadOf: never more than twice the share).
const aheadMin = 20

// aheadAllowed reports whether the reader may claim ahead now.
func (wq *workerQueue) aheadAllowed() bool {
	return wq.busy && wq.implicitStarts() && time.Duration(wq.handlerAvg.Load()) < wq.w.aheadBelow
}

// takeHandler waits for a handler slot; false when ctx ended first (the
// handler is then not called: execute sees ctx ended).
func (wq *workerQueue) takeHandler(ctx context.Context) bool {
	select {
	case wq.handlers <- struct{}{}:
		return true
	case <-ctx.Done():
		return false
	}
}

// handlerDone frees a handler slot and folds the handler's duration into
// the queue's moving average (weight 1/8).
func (wq *workerQueue) handlerDone(d time.Duration) {
	<-wq.handlers
	avg := wq.handlerAvg.Load()
	wq.handlerAvg.Store(avg + (int64(d)-avg)/8)
}
