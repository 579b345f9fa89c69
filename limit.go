package dtq

import (
	"context"
	"strconv"
	"time"
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

	// Rate limits how often the queue's tasks start: at most Rate per Per,
	// at most Burst at once; 0: no rate limit.
	Rate  int64         `json:"rate,omitempty"`
	Per   time.Duration `json:"-"`
	Burst int64         `json:"burst,omitempty"`
	// PausedUntil is set while a RetryAfter of one of the queue's tasks
	// holds its limits: no task of it starts before then.
	PausedUntil *time.Time `json:"paused_until,omitempty"`
}

// SetConcurrencyLimit limits queue to at most max tasks RUNNING at once
// across every worker process (1 to MaxConcurrencyLimit; 0 removes the
// limit). Workers hold a lease per task they run, renewed with the task:
// a lost worker's leases expire within its VisibilityTimeout, and a slot
// freed by a finishing task wakes a worker waiting for one. A task waiting
// for a slot stays QUEUED in its band (no attempt used). Workers read the
// limit when they start, when it is set (told on the queue's cancels
// channel) and every 5 s, in case that message was missed. It is audited (limit-set).
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
	d, inUse, err := c.queue(queue).store.Limits(ctx)
	if err != nil {
		return nil, err
	}
	info := &LimitInfo{Queue: queue, MaxRunning: d.MaxRunning, InUse: inUse, Rate: d.Rate, Per: d.Per, Burst: d.Burst}
	if !d.PausedTo.IsZero() {
		info.PausedUntil = &d.PausedTo
	}
	return info, nil
}

// Bounds of a rate limit.
const (
	MaxRate    = 1_000_000
	MinRatePer = time.Millisecond
	MaxRatePer = 24 * time.Hour
)

// SetRateLimit limits how often queue's tasks start, across every worker
// process: at most rate per per, smoothly (GCRA: one start every per/rate,
// with bursts of at most burst after an idle spell; burst 0 means 1). rate
// 0 removes the limit. A task waiting for its turn stays QUEUED in its band
// (no attempt used). A handler of the queue returning RetryAfter(d, err)
// pauses the queue's limits for d: the remote asked everyone to slow down.
// Workers read it as SetConcurrencyLimit's. It is audited
// (limit-set).
func (c *Client) SetRateLimit(ctx context.Context, queue string, rate int64, per time.Duration, burst int64) error {
	if err := checkQueue("queue", queue); err != nil {
		return err
	}
	if err := c.CheckRateLimit(rate, per, burst); err != nil {
		return err
	}
	burst = max(burst, 1)
	q := c.queue(queue)
	if err := c.register(ctx, q); err != nil {
		return err
	}
	if err := q.store.SetRateLimit(ctx, rate, per, burst); err != nil {
		return err
	}
	detail := "rate=0"
	if rate > 0 {
		detail = "rate=" + strconv.FormatInt(rate, 10) + "/" + per.String() + " burst=" + strconv.FormatInt(burst, 10)
	}
	c.audit(ctx, "limit-set", queue, "", detail)
	return nil
}

// CheckRateLimit validates a rate limit as SetRateLimit would, writing
// nothing.
func (c *Client) CheckRateLimit(rate int64, per time.Duration, burst int64) error {
	switch {
	case rate < 0 || rate > MaxRate:
		return invalid("rate", "must be from 0 (no limit) to %d (got %d)", MaxRate, rate)
	case rate > 0 && (per < MinRatePer || per > MaxRatePer || per%time.Millisecond != 0):
		return invalid("per", "must be whole milliseconds from %v to %v (got %v)", MinRatePer, MaxRatePer, per)
	case burst < 0 || burst > max(rate, 1):
		return invalid("burst", "must be from 1 to the rate, %d (got %d)", rate, burst)
	}
	return nil
}

// ConcurrencyLimits returns the limits of the namespace's queues that have
// one, by queue name.
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
		if info.MaxRunning > 0 || info.Rate > 0 {
			out = append(out, info)
		}
	}
	return out, nil
}
