package store

import (
	"context"
	_ "embed"
	"strconv"

	"github.com/dtq-dev/dtq/internal/script"
	"github.com/redis/rueidis"
)

var (
	//go:embed drop.lua
	dropSource string
	//go:embed drop_sweep.lua
	dropSweepSource string

	dropScript      = script.New("drop", dropSource)
	dropSweepScript = script.New("drop_sweep", dropSweepSource)
)

// Held is what a queue held when DeleteQueue looked.
type Held struct {
	Queued, Scheduled, Running, Dead int64
}

// Work reports whether h holds any task that is not finished.
func (h Held) Work() bool { return h.Queued+h.Scheduled+h.Running+h.Dead > 0 }

// dropSweepBatch is how many keys one drop_sweep.lua call examines.
const dropSweepBatch = 500

// Drop deletes the queue: its keys of one per queue in one atomic step —
// unless it holds work (QUEUED, SCHEDULED, RUNNING or DEAD tasks) and
// force is false: then it changes nothing and answers deleted false — and
// then the keys of its single tasks, found by a SCAN of every node. A
// submission to the queue meanwhile makes it again, and keeps what it made.
// It does not touch the namespace's queue set (see UnregisterQueue).
func (q *Queue) Drop(ctx context.Context, force bool) (held Held, deleted bool, err error) {
	c := q.s.r
	k := q.k
	ks := append([]string{k.Info(), k.Schedule(), k.Run(), k.DLQ()}, k.bands(nil)...)
	ks = append(ks, k.GroupWait(), k.ScopeWait(), k.GroupCount(), k.ScopeLimits(), k.ScopeUse(), k.ScopeLeases(), k.Done(), k.Finished(), k.Wakeup(), k.Periodic(), k.PeriodicDue(), k.PeriodicFired(), k.Unique(), k.SchedulerLock(), k.Limits(), k.Leases(), k.Progress(), k.Suspended(), k.OrderHold(), k.OrderLine(), k.OrderIndex(), k.Debounce(), k.Workflows())
	f := "0"
	if force {
		f = "1"
	}
	v, err := dropScript.Exec(ctx, c, ks, []string{Group, f}).AsIntSlice()
	if err != nil {
		return held, false, err
	}
	if len(v) != 6 {
		return held, false, unexpected("drop", v)
	}
	held = Held{Queued: v[1], Scheduled: v[2], Running: v[3], Dead: v[4]}
	if v[0] != 1 {
		return held, false, nil
	}
	return held, true, q.sweepDropped(ctx, v[5])
}

// sweepDropped deletes the task, idempotency, operation, workflow and step records of the
// queue made at or before dropped (Unix ms, Redis clock): a SCAN of every
// node for the queue's prefix, drop_sweep.lua on what it finds.
func (q *Queue) sweepDropped(ctx context.Context, dropped int64) error {
	c := q.s.r
	prefix := q.k.prefix
	args := []string{strconv.FormatInt(dropped, 10), q.name + "-"}
	batch := make([]string, 0, dropSweepBatch)
	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		ks := append([]string{q.k.Schedule(), q.k.Run()}, batch...)
		batch = batch[:0]
		return dropSweepScript.Exec(ctx, c, ks, args).Error()
	}
	for _, node := range c.Nodes() {
		for _, pattern := range []string{prefix + "task:*", prefix + "idem:*", prefix + "once:*", prefix + "wf:*", prefix + "steps:*"} {
			var cursor uint64
			for {
				e, err := node.Do(ctx, node.B().Scan().Cursor(cursor).Match(pattern).Count(1000).Build()).AsScanEntry()
				if err != nil {
					return err
				}
				for _, key := range e.Elements {
					batch = append(batch, key)
					if len(batch) == dropSweepBatch {
						if err := flush(); err != nil {
							return err
						}
					}
				}
				if e.Cursor == 0 {
					break
				}
				cursor = e.Cursor
			}
		}
	}
	if err := flush(); err != nil {
		return err
	}
	return q.dropHistory(ctx)
}

// dropHistory deletes the queue's history buckets (HistoryMinute,
// HistoryHour), found by a SCAN of every node.
func (q *Queue) dropHistory(ctx context.Context) error {
	c := q.s.r
	for _, node := range c.Nodes() {
		var cursor uint64
		for {
			e, err := node.Do(ctx, node.B().Scan().Cursor(cursor).Match(q.k.prefix+"hist:*").Count(1000).Build()).AsScanEntry()
			if err != nil {
				return err
			}
			if len(e.Elements) > 0 {
				cmds := make(rueidis.Commands, len(e.Elements))
				for i, key := range e.Elements {
					cmds[i] = c.B().Del().Key(key).Build()
				}
				for _, r := range c.DoMulti(ctx, cmds...) {
					if err := r.Error(); err != nil {
						return err
					}
				}
			}
			if e.Cursor == 0 {
				break
			}
			cursor = e.Cursor
		}
	}
	return nil
}

// UnregisterQueue takes name out of the namespace's queue set.
func (s *Store) UnregisterQueue(ctx context.Context, name string) error {
	c := s.r
	return c.Do(ctx, c.B().Srem().Key(QueuesKey(s.ns)).Member(name).Build()).Error()
}
