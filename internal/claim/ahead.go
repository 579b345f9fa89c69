package claim

import (
	"context"
	"time"
)

// Claiming ahead. A worker whose handlers are quick spends most of a
// slot's cycle on the round trip that claims its next task: the slot frees,
// the read goes out, the task comes back. So while a queue's handlers take
// under AheadBelow on average (and the queue has no limit to ask first),
// its reader claims up to AheadOf(share) tasks beyond its share of
// Concurrency; they wait on this worker for a handler slot, at most about
// one quick handler's time. Handlers still run at most share at once. With
// slow handlers nothing is claimed ahead: a claimed task then waits for no
// handler, so an idle worker elsewhere is never kept from it.
const AheadBelow = time.Millisecond

// AheadOf is how many tasks a queue with share slots may claim ahead: as
// many again, and at least aheadMin (at most twice the share), and none for
// a share of one, whose tasks run one after the other in the order they were
// claimed (tasks claimed ahead start in no set order: each waits for a
// handler slot on its own goroutine). What is claimed ahead covers the read
// round trip of a slot's next claim; a small share covers little of it (a
// drain with 10 slots made ~30% more tasks/s with 20 ahead than with 10),
// and twice a large share costs Redis more per task than it gains
// (docs/performance.md, 2026-12-05).
func AheadOf(share int) int {
	if share < 2 {
		return 0
	}
	return max(share, min(2*share, aheadMin))
}

// aheadMin is the fewest tasks a share of two or more may claim ahead
// (AheadOf: never more than twice the share).
const aheadMin = 20

// aheadAllowed reports whether the reader may claim ahead now.
func (r *Reader) aheadAllowed() bool {
	return r.busy && r.implicitStarts() && time.Duration(r.handlerAvg.Load()) < r.run.AheadBelow
}

// TakeHandler waits for a handler slot; false when ctx ended first (the
// handler is then not called).
func (r *Reader) TakeHandler(ctx context.Context) bool {
	select {
	case r.handlers <- struct{}{}:
		return true
	case <-ctx.Done():
		return false
	}
}

// HandlerDone frees a handler slot and folds the handler's duration into
// the queue's moving average (weight 1/8).
func (r *Reader) HandlerDone(d time.Duration) {
	<-r.handlers
	avg := r.handlerAvg.Load()
	r.handlerAvg.Store(avg + (int64(d)-avg)/8)
}
