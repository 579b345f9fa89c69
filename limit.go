package dtq

import (
	"context"
	"strconv"
)

// MaxConcurrencyLimit bounds a concurrency limit.
const MaxConcurrencyLimit = 1_000_000

// LimitInfo is a queue's concurrency limit and its use.
type LimitInfo struct {
	Queue string `json:"queue"`
	// MaxRunning is the limit: at most this many of the queue's tasks
	// RUNNING at once across every worker; 0: none.
	MaxRunning int64 `json:"max_running"`
	// InUse is how many leases are held now: one per task running, and
	// one per worker waiting for a task of the queue.
	InUse int64 `json:"in_use"`
}

// SetConcurrencyLimit limits queue to at most max tasks RUNNING at once
// across every worker process (1 to MaxConcurrencyLimit; 0 removes the
// limit). Workers hold a lease per task they run, renewed with the task:
// a lost worker's leases expire within its VisibilityTimeout, and a slot
// freed by a finishing task wakes a worker waiting for one. A task waiting
// for a slot stays QUEUED in its band (no attempt used). Workers read the
// limit when they start and every 5 s: a new or changed limit holds within
// that. It is audited (limit-set).
func (c *Client) SetConcurrencyLimit(ctx context.Context, queue string, max int64) error {
	if err := checkQueue("queue", queue); err != nil {
		return err
	}
	if max < 0 || max > MaxConcurrencyLimit {
		return invalid("max", "must be from 0 (no limit) to %d (got %d)", MaxConcurrencyLimit, max)
	}
	q := c.queue(queue)
	if err := c.register(ctx, q); err != nil {
		return err
	}
	if err := q.store.SetConcurrencyLimit(ctx, max); err != nil {
		return err
	}
	c.audit(ctx, "limit-set", queue, "", "max_running="+strconv.FormatInt(max, 10))
	return nil
}

// ConcurrencyLimit returns queue's concurrency limit and how many of its
// leases are held now.
func (c *Client) ConcurrencyLimit(ctx context.Context, queue string) (*LimitInfo, error) {
	if err := checkQueue("queue", queue); err != nil {
		return nil, err
	}
	limit, inUse, err := c.queue(queue).store.ConcurrencyLimit(ctx)
	if err != nil {
		return nil, err
	}
	return &LimitInfo{Queue: queue, MaxRunning: limit, InUse: inUse}, nil
}

// ConcurrencyLimits returns the concurrency limits of the namespace's
// queues that have one, by queue name.
func (c *Client) ConcurrencyLimits(ctx context.Context) ([]*LimitInfo, error) {
	names, err := c.store.QueueNames(ctx)
	if err != nil {
		return nil, err
	}
	sortStrings(names)
	out := []*LimitInfo{}
	for _, n := range names {
		info, err := c.ConcurrencyLimit(ctx, n)
		if err != nil {
			return nil, err
		}
		if info.MaxRunning > 0 {
			out = append(out, info)
		}
	}
	return out, nil
}
