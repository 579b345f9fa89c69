package claim

import (
	"context"
	"time"

	"github.com/dtq-dev/dtq/internal/store"
)

// A reader follows the type rule (types.go): it runs the types of its
// worker's handlers and gives back the others.

// passOthers follows the reads of the queue: after a read that brought
// back only tasks of other types, all seen before, it takes the bands'
// ends as marks (and reads once more); after a second such read, the next
// turn of the reader waits (waitForTypes). Any other read that brought
// something forgets the marks; an empty one says nothing new (the
// give-back of the tasks read before may be on its way) and keeps them.
func (r *Reader) passOthers(ctx context.Context, read []store.Entry) {
	if len(read) == 0 {
		return
	}
	if !GiveBackOthers(read, r.run.Types) || !r.others.OnlySeen(read) {
		r.marks = nil
		return
	}
	r.busy = true // read once more, or wait first
	if r.marks != nil {
		r.waitTypes = true
		return
	}
	marks, err := r.q.Tails(ctx)
	if err == nil {
		r.marks = marks
	}
}

// waitForTypes waits, when the reads came up with only other types' tasks
// twice, for a task of the worker's types after the marks, at most until
// the next reclaim pass or a second. It returns false when ctx ends.
func (r *Reader) waitForTypes(ctx context.Context) bool {
	if !r.waitTypes {
		return true
	}
	r.waitTypes = false
	block := min(time.Second, max(r.ReclaimWait(time.Now()), time.Millisecond))
	if _, err := Watch(ctx, r.q, r.marks, r.run.Types, block); err != nil {
		if ctx.Err() != nil {
			return false
		}
		r.hooks.RedisError("read", err)
	}
	return ctx.Err() == nil
}
