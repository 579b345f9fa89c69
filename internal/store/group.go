package store

import (
	"context"
	"sort"
	"strconv"
	"strings"

	"github.com/redis/rueidis"
)

// promoteWaiters moves the GroupWait members ms into their bands
// (gpromote.lua): each whose group has room there, if it still waits.
func (q *Queue) promoteWaiters(ctx context.Context, ms []string) (int, error) {
	if len(ms) == 0 {
		return 0, nil
	}
	ks := make([]string, 0, 12+len(ms))
	ks = append(ks, q.k.GroupWait(), q.k.GroupCount())
	ks = q.k.bands(ks)
	args := make([]string, 0, 2+len(ms))
	args = append(args, q.name, strconv.Itoa(len(ms)))
	for _, m := range ms {
		_, ulid, ok := GroupMemberTask(m)
		if !ok {
			ulid = invalidULID // gpromote.lua drops it
		}
		ks = append(ks, q.k.Task(ulid))
		args = append(args, m)
	}
	n, err := gpromoteScript.Exec(ctx, q.s.r, ks, args).AsInt64()
	return int(n), err
}

// SweepGroups is the repair pass of fair scheduling: up to visits groups
// from after ("" = the first) that have tasks waiting for their turn and
// room in the bands get their best waiters moved in (gsweep.lua, then
// gpromote.lua). A worker lost between a start and the move it owed leaves
// its group short until this pass. It returns the group to go on after
// ("" = every group was visited) and how many tasks it moved.
func (q *Queue) SweepGroups(ctx context.Context, after string, visits int) (next string, moved int, err error) {
	ks := make([]string, 0, 13)
	ks = append(ks, q.k.GroupWait(), q.k.GroupCount(), q.k.Info())
	ks = q.k.bands(ks)
	res, err := gsweepScript.Exec(ctx, q.s.r, ks, []string{Group, after, strconv.Itoa(visits)}).AsStrSlice()
	if err != nil {
		return "", 0, err
	}
	if len(res) == 0 {
		return "", 0, unexpected("gsweep", res)
	}
	moved, err = q.promoteWaiters(ctx, res[1:])
	return res[0], moved, err
}

// GroupWeight is a group's weight and the tasks waiting for its turn.
type GroupWeight struct {
	Group   string
	Weight  int
	Waiting int64
}

// SetGroupWeight sets group's weight (1 removes it: the default). A
// heavier group keeps more entries in the bands, so they serve it more.
func (q *Queue) SetGroupWeight(ctx context.Context, group string, weight int) error {
	c := q.s.r
	if weight <= 1 {
		return c.Do(ctx, c.B().Hdel().Key(q.k.GroupCount()).Field(GroupWeightField+group).Build()).Error()
	}
	return c.Do(ctx, c.B().Hset().Key(q.k.GroupCount()).FieldValue().FieldValue(GroupWeightField+group, strconv.Itoa(weight)).Build()).Error()
}

// GroupWeights returns the groups that have a weight, by name, with the
// tasks waiting for their turn: two round trips.
func (q *Queue) GroupWeights(ctx context.Context) ([]GroupWeight, error) {
	c := q.s.r
	m, err := c.Do(ctx, c.B().Hgetall().Key(q.k.GroupCount()).Build()).AsStrMap()
	if err != nil {
		return nil, err
	}
	var out []GroupWeight
	for f, v := range m {
		if g, ok := strings.CutPrefix(f, GroupWeightField); ok {
			out = append(out, GroupWeight{Group: g, Weight: atoi(v)})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Group < out[j].Group })
	if len(out) == 0 {
		return out, nil
	}
	cmds := make([]rueidis.Completed, len(out))
	for i, g := range out {
		cmds[i] = c.B().Zlexcount().Key(q.k.GroupWait()).Min("[" + g.Group + "|").Max("[" + g.Group + "|\xff").Build()
	}
	for i, r := range c.DoMulti(ctx, cmds...) {
		if out[i].Waiting, err = r.AsInt64(); err != nil {
			return nil, err
		}
	}
	return out, nil
}
