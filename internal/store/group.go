package store

import (
	"context"
	"strconv"
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
