package queuestore

import (
	"context"
	"time"

	"github.com/dtq-dev/dtq/internal/delivery"
	"github.com/redis/rueidis"
)

// The queue primitive's plain commands: what it does without a script,
// each one typed call (the package queue builds no Redis command).

// Entry is one stream entry as read: its id and fields.
type Entry struct {
	ID     string
	Fields map[string]string
}

func entries(xs []rueidis.XRangeEntry) []Entry {
	out := make([]Entry, len(xs))
	for i, x := range xs {
		out[i] = Entry{ID: x.ID, Fields: x.FieldValues}
	}
	return out
}

// TopicCounts reads, in one round trip but not atomically, the length of
// stream, how many of its entries group holds pending (0 when the group is
// missing) and how many messages wait in the delayed sorted set.
func TopicCounts(ctx context.Context, c rueidis.Client, stream, group, delayed string) (length, pending, parked int64, err error) {
	res := c.DoMulti(ctx,
		c.B().Xlen().Key(stream).Build(),
		c.B().Xpending().Key(stream).Group(group).Build(),
		c.B().Zcard().Key(delayed).Build(),
	)
	if length, err = res[0].AsInt64(); err != nil {
		return 0, 0, 0, err
	}
	if summary, err := res[1].ToArray(); err == nil && len(summary) > 0 {
		pending, _ = summary[0].AsInt64()
	} else if err != nil && !delivery.IsNoGroup(err) {
		return 0, 0, 0, err
	}
	if parked, err = res[2].AsInt64(); err != nil {
		return 0, 0, 0, err
	}
	return length, pending, parked, nil
}

// Newest returns up to count entries of stream, newest first.
func Newest(ctx context.Context, c rueidis.Client, stream string, count int64) ([]Entry, error) {
	xs, err := c.Do(ctx, c.B().Xrevrange().Key(stream).End("+").Start("-").Count(count).Build()).AsXRange()
	if err != nil {
		return nil, err
	}
	return entries(xs), nil
}

// Counter reads integer field of hash key (0 when either is missing).
func Counter(ctx context.Context, c rueidis.Client, key, field string) (int64, error) {
	n, err := c.Do(ctx, c.B().Hget().Key(key).Field(field).Build()).AsInt64()
	if rueidis.IsRedisNil(err) {
		return 0, nil
	}
	return n, err
}

// Append adds an entry with fields r = key and d = data to stream (one
// XADD, auto-pipelined with concurrent ones) and returns its id: a put with
// no key to deduplicate, no bound and no delay.
func Append(ctx context.Context, c rueidis.Client, stream, key string, data []byte) (string, error) {
	cmd := c.B().Xadd().Key(stream).Id("*").FieldValue().
		FieldValue("r", key).FieldValue("d", rueidis.BinaryString(data)).Build()
	return c.Do(ctx, cmd).ToString()
}

// WaitList blocks until list key has an element to pop (it pops it) or
// timeout seconds pass; a timeout is no error.
func WaitList(ctx context.Context, c rueidis.Client, key string, timeout float64) error {
	err := c.Do(ctx, c.B().Blpop().Key(key).Timeout(timeout).Build()).Error()
	if rueidis.IsRedisNil(err) {
		return nil
	}
	return err
}

// ReadNew claims up to count new entries of stream for consumer of group
// (XREADGROUP >). missingGroup reports a stream without the group (the
// script path recreates it); no entries is no error.
func ReadNew(ctx context.Context, c rueidis.Client, group, consumer, stream string, count int) (es []Entry, missingGroup bool, err error) {
	cmd := c.B().Xreadgroup().Group(group, consumer).Count(int64(count)).Streams().Key(stream).Id(">").Build()
	res, err := c.Do(ctx, cmd).AsXRead()
	if err != nil && !rueidis.IsRedisNil(err) {
		if delivery.IsNoGroup(err) {
			return nil, true, nil
		}
		return nil, false, err
	}
	return entries(res[stream]), false, nil
}

// WaitNew blocks up to timeout in XREAD until one of streams gets an entry
// after its id in ids, and returns the streams that did (none: timed out).
func WaitNew(ctx context.Context, c rueidis.Client, streams, ids []string, timeout time.Duration) (map[string]bool, error) {
	// (at least 1 ms, rounded up: BLOCK 0 would wait forever)
	cmd := c.B().Xread().Count(1).Block(int64(max((timeout+time.Millisecond-1)/time.Millisecond, 1))).Streams().Key(streams...).Id(ids...).Build()
	res, err := c.Do(ctx, cmd).AsXRead()
	if rueidis.IsRedisNil(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	moved := make(map[string]bool, len(res))
	for k := range res {
		moved[k] = true
	}
	return moved, nil
}
