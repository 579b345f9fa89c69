package store

import (
	"context"
	"sort"

	"github.com/redis/rueidis"
)

// OrderLine is one order key's line in a queue: the task in flight and the
// tasks waiting behind it.
type OrderLine struct {
	// Holder is the id ("<queue>-<ULID>") of the key's task in flight, ""
	// when the key has none.
	Holder string
	// Next is the ids of the first waiters, in submission order.
	Next []string
	// Waiting counts every waiter of the key.
	Waiting int64
}

// OrderKeyState is an order key with a task in flight (OrderKeys).
type OrderKeyState struct {
	Key     string
	Holder  string // the id of its task in flight
	Waiting int64  // its waiters
}

// orderRange is the ZRANGEBYLEX/ZLEXCOUNT range of key's members of
// OrderWait: "<key>|…" (no key holds "|").
func orderRange(key string) (lo, hi string) {
	return "[" + key + "|", "[" + key + "|\xff"
}

// orderTask returns the task id of ULID ulid, or of the ULID that ends
// OrderWait member m.
func (q *Queue) orderTask(ulidOrMember string) string {
	if len(ulidOrMember) < 26 {
		return q.name + "-" + invalidULID
	}
	return q.name + "-" + ulidOrMember[len(ulidOrMember)-26:]
}

// OrderKey reads key's line: its holder, up to n of its waiters in order
// and how many wait. One round trip of three reads, not atomic: a key
// passed on between them may show the new holder among the waiters.
func (q *Queue) OrderKey(ctx context.Context, key string, n int) (OrderLine, error) {
	c := q.s.r
	lo, hi := orderRange(key)
	rs := c.DoMulti(ctx,
		c.B().Hget().Key(q.k.OrderHold()).Field(key).Build(),
		c.B().Zrangebylex().Key(q.k.OrderWait()).Min(lo).Max(hi).Limit(0, int64(n)).Build(),
		c.B().Zlexcount().Key(q.k.OrderWait()).Min(lo).Max(hi).Build())
	var line OrderLine
	holder, err := rs[0].ToString()
	switch {
	case rueidis.IsRedisNil(err):
	case err != nil:
		return line, err
	default:
		line.Holder = q.orderTask(holder)
	}
	ms, err := rs[1].AsStrSlice()
	if err != nil {
		return line, err
	}
	line.Next = make([]string, len(ms))
	for i, m := range ms {
		line.Next[i] = q.orderTask(m)
	}
	if line.Waiting, err = rs[2].AsInt64(); err != nil {
		return line, err
	}
	return line, nil
}

// OrderKeys reads one HSCAN step of OrderHold from cursor ("0" to start),
// count its hint: the keys with a task in flight it returned (by name),
// each with its holder and how many wait, and the next cursor ("0": the
// scan is done). A step may return more or fewer keys than count, none
// even before the scan is done. Two round trips.
func (q *Queue) OrderKeys(ctx context.Context, cursor uint64, count int) ([]OrderKeyState, uint64, error) {
	c := q.s.r
	e, err := c.Do(ctx, c.B().Hscan().Key(q.k.OrderHold()).Cursor(cursor).Count(int64(count)).Build()).AsScanEntry()
	if err != nil {
		return nil, 0, err
	}
	var out []OrderKeyState
	for i := 0; i+1 < len(e.Elements); i += 2 {
		if e.Elements[i] == OrderSeq {
			continue
		}
		out = append(out, OrderKeyState{Key: e.Elements[i], Holder: q.orderTask(e.Elements[i+1])})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	if len(out) == 0 {
		return out, e.Cursor, nil
	}
	cmds := make(rueidis.Commands, len(out))
	for i, k := range out {
		lo, hi := orderRange(k.Key)
		cmds[i] = c.B().Zlexcount().Key(q.k.OrderWait()).Min(lo).Max(hi).Build()
	}
	for i, r := range c.DoMulti(ctx, cmds...) {
		if out[i].Waiting, err = r.AsInt64(); err != nil {
			return nil, 0, err
		}
	}
	return out, e.Cursor, nil
}
