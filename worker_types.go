package dtq

import (
	"context"
	"time"

	"github.com/dtq-dev/dtq/internal/claim"
	"github.com/dtq-dev/dtq/internal/store"
)

// A Go worker follows the type rule (internal/claim, CONTRACT 3.3.1c): it
// runs the types it has handlers for and gives back the others.

// passOthers follows the reads of the worker's queue:
// after a read that brought back only tasks of other types, all seen
// before, it takes the bands' ends as marks (and reads once more); after a
// second such read, the next turn of the reader waits (waitForTypes).
// Any other read forgets the marks.
func (wq *workerQueue) passOthers(ctx context.Context, read []store.Entry) {
	if !claim.GiveBackOthers(read, wq.w.types) || !wq.others.OnlySeen(read) {
		wq.marks = nil
		return
	}
	wq.busy = true // read once more, or wait first
	if wq.marks != nil {
		wq.waitTypes = true
		return
	}
	marks, err := wq.q.store.Tails(ctx)
	if err == nil {
		wq.marks = marks
	}
}

// waitForTypes waits, when the reads came up with only other types' tasks
// twice, for a task of the worker's types after the marks, at most until
// the next reclaim pass or a second. It returns false when ctx ends.
func (wq *workerQueue) waitForTypes(ctx context.Context) bool {
	if !wq.waitTypes {
		return true
	}
	wq.waitTypes = false
	block := min(time.Second, max(wq.reclaim.Wait(time.Now()), time.Millisecond))
	if _, err := claim.Watch(ctx, wq.q.store, wq.marks, wq.w.types, block); err != nil {
		if ctx.Err() != nil {
			return false
		}
		wq.w.c.redisError("read", err)
	}
	return ctx.Err() == nil
}
