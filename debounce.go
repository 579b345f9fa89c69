package dtq

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/dtq-dev/dtq/internal/store"
)

// MaxDebounceKey bounds DebounceOpts.Key, in bytes.
const MaxDebounceKey = 256

// DebounceOpts makes a submission debounced: the submissions of one queue,
// task type and Key that come while their task is pending become that one
// task. It runs once the key has been quiet for Period since its latest
// submission, or MaxWait after its first, whichever comes first, with the
// latest submission's payload (the first's with KeepFirst). Once the task
// has come due (or was cancelled), the next submission of the key starts a
// new one.
type DebounceOpts struct {
	// Key identifies the debounced task among those of its queue and type:
	// 1-256 bytes of UTF-8 (free-form: it is hashed, never part of a key).
	Key string
	// Period is how long the key must be quiet before the task is due:
	// each submission makes it due Period after it (1ms to 365 days,
	// rounded up to the millisecond, on the Redis clock).
	Period time.Duration
	// MaxWait, when set, bounds the wait: the task is due at most MaxWait
	// after the submission that created it, however often the key is
	// submitted again (Period to 365 days). Defaults to no bound.
	MaxWait time.Duration
	// KeepFirst keeps the payload the pending task has (its first
	// submission's) instead of this submission's. Defaults to false: the
	// latest submission's payload wins.
	KeepFirst bool
}

// checkDebounce validates o.Debounce (nil: not debounced).
func checkDebounce(o *EnqueueOpts) error {
	d := o.Debounce
	switch {
	case d == nil:
		return nil
	case o.parent != "":
		return invalid("debounce", "is not taken by a child task")
	case o.IdempotencyKey != "":
		return invalid("debounce", "and idempotency_key are exclusive")
	case o.Unique != nil:
		return invalid("debounce", "and unique are exclusive")
	case o.OrderKey != "":
		return invalid("debounce", "and order_key are exclusive")
	case o.Delay != 0 || !o.RunAt.IsZero():
		return invalid("debounce", "and delay/run_at are exclusive: the debounce decides when the task is due")
	case d.Key == "" || len(d.Key) > MaxDebounceKey || !utf8.ValidString(d.Key):
		return invalid("debounce.key", "must be 1-%d bytes of UTF-8 (got %d bytes)", MaxDebounceKey, len(d.Key))
	case d.Period < time.Millisecond || d.Period > MaxDelay:
		return invalid("debounce.period", "must be from 1ms to %v (got %v)", MaxDelay, d.Period)
	case d.MaxWait != 0 && (d.MaxWait < d.Period || d.MaxWait > MaxDelay):
		return invalid("debounce.max_wait", "must be 0 (no bound) or from the period (%v) to %v (got %v)", d.Period, MaxDelay, d.MaxWait)
	}
	return nil
}

// debounceIdentity names the pending task of a debounced submission of
// type typ with key among its queue's: a hash of both.
func debounceIdentity(typ, key string) string {
	h := sha256.New()
	for _, s := range []string{typ, key} {
		h.Write([]byte(strconv.Itoa(len(s))))
		h.Write([]byte{':'})
		h.Write([]byte(s))
	}
	return hex.EncodeToString(h.Sum(nil))
}

// enqueueDebounced joins the pending task of a debounced submission, or
// creates it.
func (c *engine) enqueueDebounced(ctx context.Context, q *queueState, item store.EnqueueItem, opts *EnqueueOpts) (*EnqueueResult, error) {
	d := opts.Debounce
	res, rec, err := q.store.EnqueueDebounced(ctx, c.enqueueConfig(q.name), store.DebounceItem{
		Item: item, Identity: debounceIdentity(item.Type, d.Key), Period: roundUpMs(d.Period), MaxWait: roundUpMs(d.MaxWait),
		KeepFirst: d.KeepFirst})
	if err != nil {
		c.redisError("enqueue", err)
		var nre *store.NotReplicatedError
		if errors.As(err, &nre) {
			return nil, fmt.Errorf("%w: %d of %d replicas within %v", ErrNotReplicated, nre.Got, nre.Want, nre.Timeout)
		}
		return nil, err
	}
	switch res.Code {
	case store.Joined:
		if rec == nil {
			return nil, errors.New("dtq: a debounced submission joined a task without a record")
		}
		t := taskOf(rec)
		t.Debounced = true
		c.obs.debounceJoined(TaskRef{ID: t.ID, Queue: q.name, Type: item.Type})
		return &EnqueueResult{Task: t, Debounced: true}, nil
	case store.Created:
		c.publishEnqueued(q, []store.EnqueueItem{item}, []store.EnqueueResult{res})
	}
	return c.enqueueResult(ctx, q, item, res, opts)
}
