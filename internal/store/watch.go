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
	cmd := c.B().Xread().Count(int64(n)).Block(max(block.Milliseconds(), 1)).Streams().Key(keys...).Id(after...).Build()
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

// Claimed returns up to max of the entries pending for consumer in the
// queue's bands — claimed by it and not yet acknowledged, band 9 first —
// with their fields; an entry claimed again (a reclaim, or a delivery
// count above 1) is Reclaimed. An entry deleted while pending is left
// out. Two round trips (XPENDING per band, then XRANGE per entry): what a
// worker reads after a claim's answer was lost, to start what it claimed.
func (q *Queue) Claimed(ctx context.Context, consumer string, max int) ([]Entry, error) {
	c := q.s.r
	cmds := make(rueidis.Commands, 0, Bands)
	for p := Bands - 1; p >= 0; p-- {
		cmds = append(cmds, c.B().Xpending().Key(q.k.Band(p)).Group(Group).Start("-").End("+").Count(int64(max)).
			Consumer(consumer).Build())
	}
	type claim struct {
		band int
		id   string
		n    int64
	}
	var claims []claim
	for i, r := range c.DoMulti(ctx, cmds...) {
		rows, err := r.ToArray()
		if err != nil {
			if isNoGroup(err) {
				continue
			}
			return nil, err
		}
		for _, row := range rows {
			f, err := row.ToArray()
			if err != nil || len(f) != 4 {
				return nil, unexpected("xpending", row)
			}
			id, _ := f[0].ToString()
			n, _ := f[3].AsInt64()
			claims = append(claims, claim{band: Bands - 1 - i, id: id, n: n})
		}
	}
	if len(claims) > max {
		claims = claims[:max]
	}
	if len(claims) == 0 {
		return nil, nil
	}
	reads := make(rueidis.Commands, len(claims))
	for i, cl := range claims {
		reads[i] = c.B().Xrange().Key(q.k.Band(cl.band)).Start(cl.id).End(cl.id).Build()
	}
	var out []Entry
	for i, r := range c.DoMulti(ctx, reads...) {
		xs, err := r.AsXRange()
		if err != nil {
			return nil, err
		}
		if len(xs) != 1 {
			continue
		}
		e := entryOf(q.name, claims[i].band, claims[i].id, xs[0].FieldValues)
		e.Reclaimed = claims[i].n > 1
		out = append(out, e)
	}
	return out, nil
}
