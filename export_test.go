package dtq

import (
	"context"
	"time"

	"github.com/dtq-dev/dtq/internal/claim"
)

// StallClaims makes w call stall when a read returns claimed entries,
// before it looks at them: a worker frozen with the read's reply on its
// way (SIGSTOP, a long pause).
// Set it before w starts.
func StallClaims(w *Worker, stall func()) { w.stallClaims = stall }

// LoseReply makes w call lose when a read returns claimed entries: when
// it returns true the read's reply is dropped as lost, as a stop with the
// read in flight loses it (lose returns once the worker's run context
// ended).
func LoseReply(w *Worker, lose func(context.Context) bool) { w.loseReply = lose }

// SetEventLinger makes c's event lines wait d for a submission to take
// them before its timer publishes them (eventLinger otherwise).
func SetEventLinger(c *Client, d time.Duration) { c.pub.linger = d }

// SetAheadBelow makes w claim ahead while its handlers average under d
// (aheadBelow otherwise): a test of what claiming ahead does, on a host so
// loaded that quick handlers may average a millisecond.
// Set it before w starts.
func SetAheadBelow(w *Worker, d time.Duration) { w.aheadBelow = d }

// WatchTypes runs a long poll's wait for holders of types on queue from
// the bands' ends as they are now (marks taken first): after before
// returns, it waits up to block and reports whether an entry of one of
// types arrived after the marks.
func WatchTypes(ctx context.Context, c *LeaseServer, queue string, types []string, before func(), block time.Duration) (bool, error) {
	q := c.queue(queue)
	marks, err := q.store.Tails(ctx)
	if err != nil {
		return false, err
	}
	before()
	set := claim.Types{}
	for _, t := range types {
		set[t] = true
	}
	return claim.Watch(ctx, q.store, marks, set, block)
}

// FlushHistory adds c's history counts to Redis now (a Worker's stop does).
func FlushHistory(ctx context.Context, c *Client) { c.history.flush(ctx) }
