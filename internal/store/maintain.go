package store

import (
	"context"
	"strconv"
	"strings"
	"time"

	"github.com/redis/rueidis"
)

// PromoteDue moves up to batch of the queue's due SCHEDULED tasks into
// their bands (promote.lua over the earliest of the schedule). It returns
// how many were promoted, how long until the earliest remaining due time
// (negative: nothing scheduled) and whether there may be more due.
func (q *Queue) PromoteDue(ctx context.Context, batch int) (int, time.Duration, bool, error) {
	c := q.s.r
	ids, err := c.Do(ctx, c.B().Zrange().Key(q.k.Schedule()).Min("0").Max(strconv.Itoa(batch-1)).Build()).AsStrSlice()
	if err != nil {
		return 0, 0, false, err
	}
	if len(ids) == 0 {
		return 0, -1, false, nil
	}
	n, next, err := q.promoteIDs(ctx, ids)
	if err != nil {
		return 0, 0, false, err
	}
	return n, next, n == len(ids) && n == batch, nil
}

// promoteInput is the KEYS and ARGV promote.lua takes
// for ids: the schedule, the bands, gwait, gcount and each id's task hash
// (with room for more keys); the events channel, N and the ids.
func (q *Queue) promoteInput(ids []string, more int) (ks, args []string) {
	ks = make([]string, 0, 13+len(ids)+more)
	ks = append(ks, q.k.Schedule())
	ks = q.k.bands(ks)
	ks = append(ks, q.k.GroupWait(), q.k.GroupCount())
	args = append(make([]string, 0, 3+len(ids)), q.k.Events(), itoa(len(ids)))
	for _, id := range ids {
		ks = append(ks, q.k.Task(ulidOf(id)))
		args = append(args, id)
	}
	return ks, args
}

// promoteIDs runs promote.lua for ids, tasks of the schedule: those due
// move into their bands. It returns how many moved and the time until the
// earliest due time left (-1: none).
func (q *Queue) promoteIDs(ctx context.Context, ids []string) (int, time.Duration, error) {
	c := q.s.r
	ks, args := q.promoteInput(ids, len(ids)+1)
	for _, id := range ids {
		ks = append(ks, q.k.Steps(ulidOf(id)))
	}
	ks = append(ks, q.k.Suspended())
	args = append(args, ms(StepKeep))
	v, err := promoteScript.Exec(ctx, c, ks, args).AsIntSlice()
	if err != nil {
		return 0, 0, err
	}
	if len(v) != 2 {
		return 0, 0, unexpected("promote", v)
	}
	next := time.Duration(v[1]) * time.Millisecond
	if v[1] < 0 {
		next = -1
	}
	return int(v[0]), next, nil
}

// LastWakeup returns the id of the queue's latest wakeup entry ("0-0" for
// none), read before promoting so that a task scheduled meanwhile still
// wakes a wait that started after.
func (q *Queue) LastWakeup(ctx context.Context) (string, error) {
	c := q.s.r
	e, err := c.Do(ctx, c.B().Xrevrange().Key(q.k.Wakeup()).End("+").Start("-").Count(1).Build()).AsXRange()
	if err != nil {
		return "", err
	}
	if len(e) == 0 {
		return "0-0", nil
	}
	return e[0].ID, nil
}

// Lock is a lock one owner holds for a time to live: a scheduler's leader
// lock, an IdempotentOperation's hold.
type Lock struct {
	s   *Store
	key string
}

// SchedulerLock returns the queue's scheduler leader lock.
func (q *Queue) SchedulerLock() Lock { return Lock{s: q.s, key: q.k.SchedulerLock()} }

// Acquire takes the lock for owner for ttl if it is free; false if another
// holds it.
func (l Lock) Acquire(ctx context.Context, owner string, ttl time.Duration) (bool, error) {
	c := l.s.r
	err := c.Do(ctx, c.B().Set().Key(l.key).Value(owner).Nx().Px(ttl).Build()).Error()
	if rueidis.IsRedisNil(err) {
		return false, nil
	}
	return err == nil, err
}

// Renew extends the lock to ttl if owner holds it; false if not.
func (l Lock) Renew(ctx context.Context, owner string, ttl time.Duration) (bool, error) {
	n, err := lockScript.Exec(ctx, l.s.r, []string{l.key}, []string{"renew", owner, ms(ttl)}).AsInt64()
	return n == 1, err
}

// Release frees the lock if owner holds it.
func (l Lock) Release(ctx context.Context, owner string) error {
	return lockScript.Exec(ctx, l.s.r, []string{l.key}, []string{"release", owner}).Error()
}

// Get returns the lock's value ("" when free).
func (l Lock) Get(ctx context.Context) (string, error) {
	c := l.s.r
	v, err := c.Do(ctx, c.B().Get().Key(l.key).Build()).ToString()
	if rueidis.IsRedisNil(err) {
		return "", nil
	}
	return v, err
}

// Mark sets the lock's value to v for ttl, whoever holds it (an
// IdempotentOperation recording its success).
func (l Lock) Mark(ctx context.Context, v string, ttl time.Duration) error {
	c := l.s.r
	return c.Do(ctx, c.B().Set().Key(l.key).Value(v).Px(ttl).Build()).Error()
}

// OnceLock returns the record of IdempotentOperation key hash (SHA-256
// hex) of the queue.
func (q *Queue) OnceLock(sha256hex string) Lock { return Lock{s: q.s, key: q.k.Once(sha256hex)} }

// trimBatch is the most records one trim call deletes.
const trimBatch = 500

// Trim keeps the queue's finished tasks within their bounds: it sweeps the
// bands' acknowledged entries, removes the done stream's tasks past the
// retention (by age) and beyond maxFinished (by count, oldest first), and
// the oldest dead letters beyond maxDead — their records with them
// (trim.lua) —, then sweeps a slice of the workflow index
// (SweepWorkflows). It returns how many items it removed; it stops after
// about limit.
func (q *Queue) Trim(ctx context.Context, retention time.Duration, maxFinished, maxDead int64, limit int) (int, error) {
	c := q.s.r
	// Acknowledged band entries first: a finished task's entry must not
	// outlast its record for long.
	if err := sweepScript.Exec(ctx, c, q.k.bands([]string{q.k.Info()}), []string{Group}).Error(); err != nil {
		return 0, err
	}
	removed := 0
	run := func(ks, args []string, items int) error {
		ks = append([]string{q.k.Done(), q.k.DLQ(), q.k.Finished(), q.k.Info()}, ks...)
		args = append([]string{itoa(items)}, args...)
		return trimScript.Exec(ctx, c, ks, args).Error()
	}
	// trimDone removes done entries es (oldest first) and their tasks.
	trimDone := func(es []rueidis.XRangeEntry) (int, error) {
		var ks, args []string
		tasks := 0
		for _, e := range es {
			ids := strings.Fields(e.FieldValues[DoneIDs])
			args = append(args, "d", e.ID, itoa(len(ids)))
			for _, id := range ids {
				ks = append(ks, q.k.Task(ulidOf(id)))
			}
			tasks += len(ids)
		}
		removed += len(es)
		return tasks, run(ks, args, len(es))
	}
	cutoff := strconv.FormatInt(max(0, time.Now().Add(-retention).UnixMilli()), 10)
	for removed < limit {
		es, err := c.Do(ctx, c.B().Xrange().Key(q.k.Done()).Start("-").End(cutoff).Count(trimEntries).Build()).AsXRange()
		if err != nil || len(es) == 0 {
			if err != nil {
				return removed, err
			}
			break
		}
		if _, err := trimDone(es); err != nil {
			return removed, err
		}
	}
	res := c.DoMulti(ctx, c.B().Hget().Key(q.k.Info()).Field(InfoDone).Build(), c.B().Xlen().Key(q.k.DLQ()).Build())
	doneN, _ := res[0].AsInt64()
	dead, err := res[1].AsInt64()
	if err != nil {
		return removed, err
	}
	for over := doneN - maxFinished; over > 0 && removed < limit; {
		es, err := c.Do(ctx, c.B().Xrange().Key(q.k.Done()).Start("-").End("+").Count(trimEntries).Build()).AsXRange()
		if err != nil || len(es) == 0 {
			return removed, err
		}
		// Whole entries: the cap holds to within one finish batch.
		for i := range es {
			if n := int64(len(strings.Fields(es[i].FieldValues[DoneIDs]))); n > over {
				es = es[:max(i, 1)]
				break
			} else {
				over -= n
			}
		}
		if _, err := trimDone(es); err != nil {
			return removed, err
		}
	}
	for over := dead - maxDead; over > 0 && removed < limit; {
		es, err := c.Do(ctx, c.B().Xrange().Key(q.k.DLQ()).Start("-").End("+").Count(min(over, trimBatch)).Build()).AsXRange()
		if err != nil || len(es) == 0 {
			return removed, err
		}
		var ks, args []string
		for _, e := range es {
			ks = append(ks, q.k.Task(ulidOf(e.FieldValues[DeadID])))
			args = append(args, "x", e.ID)
		}
		removed += len(es)
		if err := run(ks, args, len(es)); err != nil {
			return removed, err
		}
		over -= int64(len(es))
	}
	n, err := q.SweepWorkflows(ctx)
	return removed + n, err
}

// trimEntries is the most done entries (each a finish batch) one trim
// call takes.
const trimEntries = 16
