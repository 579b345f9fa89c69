package store

import (
	"context"
	"time"

	"github.com/redis/rueidis"
)

// Tails returns the id of the last entry of each band (index: priority),
// "0-0" for an empty or missing band: a mark after which Watch sees what
// arrives. One round trip (one XREVRANGE per band, pipelined).
func (q *Queue) Tails(ctx context.Context) ([]string, error) {
	c := q.s.r
	cmds := make(rueidis.Commands, Bands)
	for p := range Bands {
		cmds[p] = c.B().Xrevrange().Key(q.k.Band(p)).End("+").Start("-").Count(1).Build()
	}
	out := make([]string, Bands)
	for p, r := range c.DoMulti(ctx, cmds...) {
		xs, err := r.AsXRange()
		if err != nil && !rueidis.IsRedisNil(err) {
			return nil, err
		}
		out[p] = "0-0"
		if len(xs) > 0 {
			out[p] = xs[0].ID
		}
	}
	return out, nil
}

// Watch waits up to block for entries added to the bands after the marks
// in after (index: priority, as Tails returns them) and returns up to n of
// them, without claiming them (a plain XREAD, not a consumer group's
// read): what a reader that runs only some task types looks at to learn
// whether a claim could give it one. It advances after past what it
// returns. No entries after block is no error.
func (q *Queue) Watch(ctx context.Context, after []string, n int, block time.Duration) ([]Entry, error) {
	c := q.s.r
	keys := make([]string, Bands)
	for p := range Bands {
		keys[p] = q.k.Band(p)
	}
	cmd := c.B().Xread().Count(int64(n)).Block(blockMs(block)).Streams().Key(keys...).Id(after...).Build()
	streams, err := c.Do(ctx, cmd).AsXRead()
	if rueidis.IsRedisNil(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []Entry
	for p := range Bands {
		xs := streams[keys[p]]
		for _, x := range xs {
			out = append(out, entryOf(q.name, p, x.ID, x.FieldValues))
		}
		if len(xs) > 0 {
			after[p] = xs[len(xs)-1].ID
		}
	}
	return out, nil
}
