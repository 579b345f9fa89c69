package queue

import (
	"context"
	"time"
	"unicode/utf8"

	"github.com/dtq-dev/dtq/internal/backoff"
	"github.com/dtq-dev/dtq/internal/keys"
	"github.com/dtq-dev/dtq/internal/queuestore"
	"github.com/redis/rueidis"
)

// PutOpts are the options of Queue.Put. A nil *PutOpts means all defaults.
type PutOpts struct {
	// Key identifies the message across every topic of the queue: while a
	// message with this key is queued, delayed, in flight, or inside its
	// acknowledgement tombstone, Put with the same key returns false.
	// Defaults to a random key, which is unique and so is not entered in
	// the deduplication index (nor tombstoned): that saves Redis work.
	Key string

	// MaxSize bounds the messages of the topic (queued + in flight +
	// delayed). When the topic is full, Put waits for room until ctx ends.
	// Defaults to 0: unbounded.
	MaxSize int64

	// Delay makes the message deliverable only after this long, measured on
	// the Redis server's clock. Defaults to 0: deliverable now.
	Delay time.Duration

	// NoWait makes Put answer ErrFull at once, writing nothing, when the
	// topic is at MaxSize, instead of waiting for room. Defaults to false:
	// wait.
	NoWait bool
}

// Put publishes data to topic. It returns true when the message was
// accepted (written to Redis), and false when its key is already live or
// tombstoned in the queue, in which case nothing was written.
//
// With opts.MaxSize set and the topic full, Put blocks until a slot frees up
// or ctx ends (with opts.NoWait it returns ErrFull at once); it does not poll: it is woken by the acknowledgement that frees
// the slot, and re-checks at most about once a second.
//
// On connection errors (Redis down, restarting, unreachable) a Put with a
// Key retries with backoff and jitter until ctx ends; a retry recognises its
// own earlier success, so the answer stays exact. Without a Key, Put retries
// only while no connection can be made, and otherwise returns the error with
// the outcome unknown. An error reply from Redis (out of memory, for
// example) is returned at once, with nothing written. If ctx ends mid-call
// the outcome is unknown: calling Put again with the same Key is safe, but
// answers false if the first call did publish.
func (q *Queue) Put(ctx context.Context, topic string, data []byte, opts *PutOpts) (bool, error) {
	var o PutOpts
	if opts != nil {
		o = *opts
	}
	if err := keys.CheckName("topic", topic); err != nil {
		return false, invalid("topic", "%v", err)
	}
	if o.Key != "" {
		if err := checkKey("PutOpts.Key", o.Key); err != nil {
			return false, err
		}
	}
	if o.MaxSize < 0 {
		return false, invalid("PutOpts.MaxSize", "must not be negative (got %d)", o.MaxSize)
	}
	if o.Delay < 0 {
		return false, invalid("PutOpts.Delay", "must not be negative (got %v)", o.Delay)
	}
	if len(data) > q.cfg.MaxMessageBytes {
		return false, invalid("data", "is %d bytes, over Config.MaxMessageBytes (%d)", len(data), q.cfg.MaxMessageBytes)
	}
	q.register(ctx, topic)
	msg := queuestore.PutMessage{Topic: topic, Key: o.Key, Data: data, MaxSize: o.MaxSize, Delay: roundUpMs(o.Delay)}
	if o.Key == "" {
		msg.Key = randomKey() // unique: not entered in the dedup index
	} else {
		msg.Nonce = "p" + randomKey()[:12]
	}
	var retry backoff.Backoff
	for {
		res, err := q.putOnce(ctx, msg)
		if err != nil {
			// A Redis error reply is final. A connection problem is retried:
			// exactly, thanks to the call's nonce, for a keyed message; for a
			// random key only when the call surely never reached Redis.
			_, reply := rueidis.IsRedisErr(err)
			if reply || ctx.Err() != nil || (msg.Nonce == "" && !notSent(err)) {
				return false, err
			}
			q.log.Warn("Redis unreachable; retrying put", attrTopic, topic, attrError, err)
			if err := retry.Sleep(ctx); err != nil {
				return false, err
			}
			continue
		}
		switch res.Status {
		case queuestore.Published, queuestore.Delayed:
			return true, nil
		case queuestore.Duplicate:
			return false, nil
		}
		if o.NoWait {
			return false, ErrFull
		}
		// Full: wait for a wake-up from whoever frees a slot.
		if err := q.waitRoom(ctx, topic); err != nil {
			if ctx.Err() != nil {
				return false, ctx.Err()
			}
			q.log.Warn("waiting for room failed; retrying", attrTopic, topic, attrError, err)
			if err := retry.Sleep(ctx); err != nil {
				return false, err
			}
			continue
		}
		retry.Reset()
	}
}

// putOnce publishes msg once. A message with no key, bound or delay needs no
// script: it is one XADD (auto-pipelined with concurrent ones), which costs
// Redis a fraction of a script call. Everything else runs put.lua, batched.
func (q *Queue) putOnce(ctx context.Context, msg queuestore.PutMessage) (queuestore.PutResult, error) {
	if msg.Nonce != "" || msg.MaxSize > 0 || msg.Delay > 0 {
		return q.puts.Do(ctx, msg)
	}
	id, err := queuestore.Append(ctx, q.client, q.keys.Stream(msg.Topic), msg.Key, msg.Data)
	if err != nil {
		return queuestore.PutResult{}, err
	}
	return queuestore.PutResult{Status: queuestore.Published, ID: id}, nil
}

// waitRoom blocks until a slot of topic may have been freed, for at most
// about roomPoll seconds.
func (q *Queue) waitRoom(ctx context.Context, topic string) error {
	return queuestore.WaitList(ctx, q.client, q.keys.Room(topic), roomPoll)
}

func checkKey(field, key string) error {
	switch {
	case key == "":
		return invalid(field, "must not be empty")
	case len(key) > MaxKeyBytes:
		return invalid(field, "is %d bytes, over the limit of %d", len(key), MaxKeyBytes)
	case !utf8.ValidString(key):
		return invalid(field, "must be valid UTF-8")
	}
	return nil
}

// roundUpMs rounds a positive duration up to whole milliseconds, the
// resolution of Redis time.
func roundUpMs(d time.Duration) time.Duration {
	if d <= 0 {
		return 0
	}
	return (d + time.Millisecond - 1).Truncate(time.Millisecond)
}
