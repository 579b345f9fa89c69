// Package scheduler moves a task queue's due SCHEDULED tasks (delays, RunAt,
// retry backoff) into its band streams. Every worker runs one per queue;
// one of them at a time holds the queue's leader lock and does the work.
//
// The leader waits on a timer set to the earliest due time — taken from
// Redis's clock by promote.lua — or until the queue's wakeup stream moves
// (a task was scheduled), never on a fixed polling interval.
package scheduler

import (
	"context"
	"log/slog"
	"strconv"
	"time"

	"github.com/dtq-dev/dtq/internal/backoff"
	"github.com/dtq-dev/dtq/internal/keys"
	"github.com/dtq-dev/dtq/internal/taskscript"
	"github.com/redis/rueidis"
)

// Tuning of the leader lock and of each promotion pass.
const (
	LockTTL     = 6 * time.Second
	renewEvery  = LockTTL / 3
	batchSize   = 256
	maxIdleWait = renewEvery
)

// Scheduler is one queue's scheduler in one process.
type Scheduler struct {
	Redis     rueidis.Client
	Keys      keys.Tasks
	Owner     string        // this process's id, the lock's value
	Retention time.Duration // finished tasks expire after it (index cleanup)
	Log       *slog.Logger

	// wake receives the outcome of the outstanding XREAD on the wakeup
	// stream, if one is out.
	wake chan error
}

// Run competes for the queue's leader lock and, while it holds it, promotes
// due tasks, until ctx ends; then it releases the lock.
func (s *Scheduler) Run(ctx context.Context) {
	var retry backoff.Backoff
	for ctx.Err() == nil {
		got, err := s.acquire(ctx)
		if err != nil {
			if ctx.Err() == nil {
				s.Log.Warn("scheduler lock failed; retrying", "error", err)
			}
			if retry.Sleep(ctx) != nil {
				return
			}
			continue
		}
		retry.Reset()
		if !got {
			if sleep(ctx, renewEvery) != nil {
				return
			}
			continue
		}
		s.lead(ctx)
		s.release(context.WithoutCancel(ctx))
		if s.wake != nil { // let the outstanding wait finish before competing again
			<-s.wake
			s.wake = nil
		}
	}
}

func (s *Scheduler) acquire(ctx context.Context) (bool, error) {
	c := s.Redis
	err := c.Do(ctx, c.B().Set().Key(s.Keys.SchedulerLock()).Value(s.Owner).Nx().Px(LockTTL).Build()).Error()
	if rueidis.IsRedisNil(err) {
		return false, nil
	}
	return err == nil, err
}

var renewScript = rueidis.NewLuaScript(`
-- KEYS[1] lock; ARGV[1] owner, ARGV[2] ttl ms. Returns 1 if renewed, 0 if
-- the lock is not ours.
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return 1
end
return 0`)

var releaseScript = rueidis.NewLuaScript(`
-- KEYS[1] lock; ARGV[1] owner. Deletes the lock if it is ours.
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0`)

func (s *Scheduler) renew(ctx context.Context) (bool, error) {
	n, err := renewScript.Exec(ctx, s.Redis, []string{s.Keys.SchedulerLock()},
		[]string{s.Owner, strconv.FormatInt(LockTTL.Milliseconds(), 10)}).AsInt64()
	return n == 1, err
}

func (s *Scheduler) release(ctx context.Context) {
	ctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	releaseScript.Exec(ctx, s.Redis, []string{s.Keys.SchedulerLock()}, []string{s.Owner})
}

// lead promotes due tasks while the lock is held.
func (s *Scheduler) lead(ctx context.Context) {
	renewed := time.Now()
	var cleaner indexCleaner
	for ctx.Err() == nil {
		if time.Since(renewed) >= renewEvery {
			ok, err := s.renew(ctx)
			if err != nil || !ok {
				return
			}
			renewed = time.Now()
			cleaner.run(ctx, s)
		}
		wakeID, err := s.lastWakeup(ctx)
		if err != nil {
			return
		}
		next, more, err := s.promote(ctx)
		if err != nil {
			if ctx.Err() == nil {
				s.Log.Warn("promoting due tasks failed", "error", err)
			}
			if sleep(ctx, time.Second) != nil {
				return
			}
			continue
		}
		if more {
			continue
		}
		wait := maxIdleWait - time.Since(renewed)
		if next >= 0 && next < wait {
			wait = next
		}
		if wait < time.Millisecond {
			continue
		}
		if err := s.waitFor(ctx, wakeID, wait); err != nil && ctx.Err() == nil {
			s.Log.Warn("waiting for scheduled tasks failed", "error", err)
			if sleep(ctx, time.Second) != nil {
				return
			}
		}
	}
}

// promote promotes the earliest scheduled tasks that are due. It returns the
// time until the next due one (negative: none) and whether a full batch was
// promoted (there may be more).
func (s *Scheduler) promote(ctx context.Context) (time.Duration, bool, error) {
	c := s.Redis
	ids, err := c.Do(ctx, c.B().Zrange().Key(s.Keys.Schedule()).Min("0").Max(strconv.Itoa(batchSize-1)).Build()).AsStrSlice()
	if err != nil {
		return 0, false, err
	}
	if len(ids) == 0 {
		return -1, false, nil
	}
	n, next, err := taskscript.Promote(ctx, c, s.Keys, ids)
	return next, err == nil && n == len(ids) && n == batchSize, err
}

// lastWakeup returns the id of the queue's latest wakeup entry, read before
// promoting so that a task scheduled meanwhile still wakes the wait.
func (s *Scheduler) lastWakeup(ctx context.Context) (string, error) {
	c := s.Redis
	e, err := c.Do(ctx, c.B().Xrevrange().Key(s.Keys.Wakeup()).End("+").Start("-").Count(1).Build()).AsXRange()
	if err != nil {
		return "", err
	}
	if len(e) == 0 {
		return "0-0", nil
	}
	return e[0].ID, nil
}

// waitFor returns after wait, or sooner when the wakeup stream moves past
// after. The due time is kept by a Go timer: an idle Redis serves a
// blocking command's timeout only on its next cron tick (every 100 ms at the
// default hz), which would make delayed tasks late. The XREAD is only the
// wake signal; it stays outstanding across calls until it returns.
func (s *Scheduler) waitFor(ctx context.Context, after string, wait time.Duration) error {
	if s.wake == nil {
		ch := make(chan error, 1)
		go func() { ch <- s.waitWakeup(ctx, after, maxIdleWait) }()
		s.wake = ch
	}
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case err := <-s.wake:
		s.wake = nil
		return err
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (s *Scheduler) waitWakeup(ctx context.Context, after string, wait time.Duration) error {
	c := s.Redis
	cmd := c.B().Xread().Count(1).Block(wait.Milliseconds()).Streams().Key(s.Keys.Wakeup()).Id(after).Build()
	err := c.Do(ctx, cmd).Error()
	if rueidis.IsRedisNil(err) {
		return nil
	}
	return err
}

// indexCleaner removes, a page at a time, the index entries of tasks that
// have expired.
type indexCleaner struct{ from string }

func (ic *indexCleaner) run(ctx context.Context, s *Scheduler) {
	c := s.Redis
	cutoff := strconv.FormatInt(time.Now().Add(-s.Retention).UnixMilli(), 10)
	from := ic.from
	if from == "" {
		from = "-inf"
	}
	page, err := c.Do(ctx, c.B().Zrangebyscore().Key(s.Keys.Index()).Min(from).Max(cutoff).Withscores().Limit(0, 500).Build()).AsZScores()
	if err != nil || len(page) == 0 {
		ic.from = ""
		return
	}
	cmds := make(rueidis.Commands, len(page))
	for i, z := range page {
		cmds[i] = c.B().Exists().Key(s.Keys.Task(ulid(z.Member))).Build()
	}
	var gone []string
	for i, r := range c.DoMulti(ctx, cmds...) {
		if n, err := r.AsInt64(); err == nil && n == 0 {
			gone = append(gone, page[i].Member)
		}
	}
	if len(gone) > 0 {
		c.Do(ctx, c.B().Zrem().Key(s.Keys.Index()).Member(gone...).Build())
	}
	ic.from = "(" + strconv.FormatFloat(page[len(page)-1].Score, 'f', -1, 64)
	if len(page) < 500 {
		ic.from = ""
	}
}

func ulid(id string) string {
	if len(id) < 27 {
		return id
	}
	return id[len(id)-26:]
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
