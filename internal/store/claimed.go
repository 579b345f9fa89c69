package store

import (
	"context"

	"github.com/redis/rueidis"
)

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
