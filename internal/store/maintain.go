package store

import (
	"context"
	"strconv"
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
	ks := make([]string, 0, 11+len(ids))
	ks = append(ks, q.k.Schedule())
	ks = q.k.bands(ks)
	args := append(make([]string, 0, 2+len(ids)), q.k.Events(), itoa(len(ids)))
	for _, id := range ids {
		ks = append(ks, q.k.Task(ulidOf(id)))
		args = append(args, id)
	}
	v, err := promoteScript.Exec(ctx, c, ks, args).AsIntSlice()
	if err != nil {
		return 0, 0, false, err
	}
	if len(v) != 2 {
		return 0, 0, false, unexpected("promote", v)
	}
	next := time.Duration(v[1]) * time.Millisecond
	if v[1] < 0 {
		next = -1
	}
	n := int(v[0])
	return n, next, n == len(ids) && n == batch, nil
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

// Trim keeps the queue's finished tasks within their bounds: it removes
// the tasks of the done zset past the retention (by age) and beyond
// maxFinished (by count, oldest first), and the oldest dead letters beyond
// maxDead — their records with them (trim.lua). It returns how many it
// removed; it stops after about limit.
func (q *Queue) Trim(ctx context.Context, retention time.Duration, maxFinished, maxDead int64, limit int) (int, error) {
	c := q.s.r
	cutoff := strconv.FormatInt(max(0, time.Now().Add(-retention).UnixMilli()), 10)
	removed := 0
	run := func(kind string, refs, ids []string) error {
		ks := make([]string, 0, 3+len(refs))
		ks = append(ks, q.k.Done(), q.k.DLQ(), q.k.Finished())
		args := make([]string, 0, 1+2*len(refs))
		args = append(args, itoa(len(refs)))
		for i, ref := range refs {
			ks = append(ks, q.k.Task(ulidOf(ids[i])))
			args = append(args, kind, ref)
		}
		removed += len(refs)
		return trimScript.Exec(ctx, c, ks, args).Error()
	}
	// Acknowledged band entries first: a finished task's entry must not
	// outlast its record for long.
	if err := sweepScript.Exec(ctx, c, q.k.bands([]string{q.k.Info()}), []string{Group}).Error(); err != nil {
		return 0, err
	}
	// By age, then by count.
	for removed < limit {
		ids, err := c.Do(ctx, c.B().Zrangebyscore().Key(q.k.Done()).Min("-inf").Max(cutoff).Limit(0, trimBatch).Build()).AsStrSlice()
		if err != nil || len(ids) == 0 {
			if err != nil {
				return removed, err
			}
			break
		}
		if err := run("d", ids, ids); err != nil {
			return removed, err
		}
	}
	res := c.DoMulti(ctx, c.B().Zcard().Key(q.k.Done()).Build(), c.B().Xlen().Key(q.k.DLQ()).Build())
	done, err := res[0].AsInt64()
	if err != nil {
		return removed, err
	}
	dead, err := res[1].AsInt64()
	if err != nil {
		return removed, err
	}
	for over := done - maxFinished; over > 0 && removed < limit; {
		ids, err := c.Do(ctx, c.B().Zrange().Key(q.k.Done()).Min("0").Max(strconv.FormatInt(min(over, trimBatch)-1, 10)).Build()).AsStrSlice()
		if err != nil || len(ids) == 0 {
			return removed, err
		}
		if err := run("d", ids, ids); err != nil {
			return removed, err
		}
		over -= int64(len(ids))
	}
	for over := dead - maxDead; over > 0 && removed < limit; {
		es, err := c.Do(ctx, c.B().Xrange().Key(q.k.DLQ()).Start("-").End("+").Count(min(over, trimBatch)).Build()).AsXRange()
		if err != nil || len(es) == 0 {
			return removed, err
		}
		refs, ids := make([]string, len(es)), make([]string, len(es))
		for i, e := range es {
			refs[i], ids[i] = e.ID, e.FieldValues[DeadID]
		}
		if err := run("x", refs, ids); err != nil {
			return removed, err
		}
		over -= int64(len(es))
	}
	return removed, nil
}
