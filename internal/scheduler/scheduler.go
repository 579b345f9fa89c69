// Package scheduler runs a task queue's upkeep: it moves due SCHEDULED
// tasks (delays, RunAt, retry backoff) into their band streams and keeps
// the queue's finished tasks within their caps. Every worker runs one per
// queue; one of them at a time holds the queue's leader lock and does the
// work.
//
// The leader waits on a timer set to the earliest due time — taken from
// Redis's clock by the promotion script — or until the queue's wakeup
// stream moves (a task was scheduled), never on a fixed polling interval.
package scheduler

import (
	"context"
	"log/slog"
	"time"

	"github.com/dtq-dev/dtq/internal/backoff"
	"github.com/dtq-dev/dtq/internal/periodic"
	"github.com/dtq-dev/dtq/internal/store"
)

// Tuning of the leader lock and of each pass.
const (
	LockTTL     = 6 * time.Second
	renewEvery  = LockTTL / 3
	batchSize   = 256
	maxIdleWait = renewEvery
	// trimLimit bounds the records one upkeep pass deletes; a pass that
	// hit it runs again at once.
	trimLimit = 5000
)

// Scheduler is one queue's scheduler in one process.
type Scheduler struct {
	Queue       *store.Queue
	Owner       string        // this process's id, the lock's value
	Retention   time.Duration // of finished tasks
	MaxFinished int64         // finished tasks kept at most
	MaxDead     int64         // dead letters kept at most
	Log         *slog.Logger
	// TraceTick, when set, starts the trace of the task a schedule's tick
	// creates: it answers the W3C traceparent to store with the task ("":
	// none) and ends its span once the tick was fired.
	TraceTick func(ctx context.Context, schedule, taskType string, tick time.Time) (traceparent string, end func())

	// wake receives the outcome of the outstanding wait on the wakeup
	// stream, if one is out.
	wake chan error
	// uniqCursor is where the sweep of unique locks goes on.
	uniqCursor string
	// debounceCursor is where the sweep of debounced tasks goes on.
	debounceCursor string
	// groupCursor is where the sweep of groups goes on (the last group
	// visited; "" from the first).
	groupCursor string
	// scopeCursor is where the sweep of scoped limits goes on, pruneCursor
	// the pruning of their past rate states.
	scopeCursor, pruneCursor string
	// progressCursor is where the sweep of progress reports goes on.
	progressCursor string
}

// Run competes for the queue's leader lock and, while it holds it, promotes
// due tasks and trims finished ones, until ctx ends; then it releases the
// lock.
func (s *Scheduler) Run(ctx context.Context) {
	var retry backoff.Backoff
	lock := s.Queue.SchedulerLock()
	for ctx.Err() == nil {
		got, err := lock.Acquire(ctx, s.Owner, LockTTL)
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
		s.lead(ctx, lock)
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Second)
		_ = lock.Release(rctx, s.Owner) // a release that fails ends with the lock's TTL
		cancel()
		if s.wake != nil { // let the outstanding wait finish before competing again
			<-s.wake //nolint:errcheck // its outcome no longer matters
			s.wake = nil
		}
	}
}

// lead promotes due tasks while the lock is held, and trims the queue's
// finished tasks at every renewal (at once again while over a cap).
func (s *Scheduler) lead(ctx context.Context, lock store.Lock) {
	renewed := time.Now()
	trimDue := true
	// The schedules are read again only when a tick may be due: at the
	// next tick the last read found, or once the wakeup stream moved (a
	// schedule changed). Unknown at first.
	var tickAt time.Time
	tickWake := ""
	for ctx.Err() == nil {
		if time.Since(renewed) >= renewEvery {
			ok, err := lock.Renew(ctx, s.Owner, LockTTL)
			if err != nil || !ok {
				return
			}
			renewed = time.Now()
			trimDue = true
		}
		if trimDue {
			n, err := s.Queue.Trim(ctx, s.Retention, s.MaxFinished, s.MaxDead, trimLimit)
			if err != nil && ctx.Err() == nil {
				s.Log.Warn("trimming finished tasks failed", "error", err)
			}
			trimDue = err == nil && n >= trimLimit
			s.sweepUnique(ctx)
			s.sweepDebounce(ctx)
			s.sweepGroups(ctx)
			s.sweepProgress(ctx)
			s.sweepScopes(ctx)
		}
		wakeID, err := s.Queue.LastWakeup(ctx)
		if err != nil {
			return
		}
		_, next, more, err := s.Queue.PromoteDue(ctx, batchSize)
		if err != nil {
			if ctx.Err() == nil {
				s.Log.Warn("promoting due tasks failed", "error", err)
			}
			if sleep(ctx, time.Second) != nil {
				return
			}
			continue
		}
		tick := time.Until(tickAt)
		if tickAt.IsZero() || tick <= 0 || wakeID != tickWake {
			var err error
			if tick, err = s.fireSchedules(ctx); err != nil {
				if ctx.Err() == nil {
					s.Log.Warn("firing schedules failed", "error", err)
				}
				tick = time.Second
			}
			switch {
			case tick < 0: // no active schedule: until a wakeup
				tickAt, tick = time.Now().Add(24*time.Hour), -1
			case tick > 0:
				tickAt = time.Now().Add(tick)
			default:
				tickAt = time.Time{}
			}
			tickWake = wakeID
		}
		if more || trimDue || tick == 0 {
			continue
		}
		wait := maxIdleWait - time.Since(renewed)
		if next >= 0 && next < wait {
			wait = next
		}
		if tick > 0 && tick < wait {
			wait = tick
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

// sweepUnique frees the unique locks of tasks that are gone: a whole scan
// of the queue's locks per pass, up to trimLimit of them (a pass that
// stops short goes on from its cursor at the next).
func (s *Scheduler) sweepUnique(ctx context.Context) {
	if s.uniqCursor == "" {
		s.uniqCursor = "0"
	}
	for range trimLimit / 500 {
		next, _, err := s.Queue.SweepUnique(ctx, s.uniqCursor, 500)
		if err != nil {
			if ctx.Err() == nil {
				s.Log.Warn("sweeping unique locks failed", "error", err)
			}
			return
		}
		s.uniqCursor = next
		if next == "0" {
			return
		}
	}
}

// sweepDebounce deletes the debounce fields of tasks no longer pending
// (come due, cancelled, gone): a whole scan of the queue's fields per pass,
// up to trimLimit of them (a pass that stops short goes on from its cursor
// at the next).
func (s *Scheduler) sweepDebounce(ctx context.Context) {
	if s.debounceCursor == "" {
		s.debounceCursor = "0"
	}
	for range trimLimit / 500 {
		next, _, err := s.Queue.SweepDebounce(ctx, s.debounceCursor, 500)
		if err != nil {
			if ctx.Err() == nil {
				s.Log.Warn("sweeping debounced tasks failed", "error", err)
			}
			return
		}
		s.debounceCursor = next
		if next == "0" {
			return
		}
	}
}

// sweepProgress deletes the progress reports of tasks no longer running
// (ended by a takeover or a cancellation): up to 1,000 per pass.
func (s *Scheduler) sweepProgress(ctx context.Context) {
	next, err := s.Queue.SweepProgress(ctx, s.progressCursor)
	if err != nil {
		if ctx.Err() == nil {
			s.Log.Warn("sweeping progress reports failed", "error", err)
		}
		return
	}
	s.progressCursor = next
}

// sweepGroups moves in the tasks waiting for their group's turn whose
// group has room in the bands and no start to move them (a worker lost
// between a start and the move it owed): up to 1,000 groups per pass, on
// from where the last pass stopped.
func (s *Scheduler) sweepGroups(ctx context.Context) {
	next, _, err := s.Queue.SweepGroups(ctx, s.groupCursor, 1000)
	if err != nil {
		if ctx.Err() == nil {
			s.Log.Warn("sweeping groups failed", "error", err)
		}
		return
	}
	s.groupCursor = next
}

// sweepScopes frees the scoped leases of lost workers and moves in the
// tasks scoped limits held back whose scope has room (their release was
// lost, or the limit removed): up to 1,000 scopes per pass.
func (s *Scheduler) sweepScopes(ctx context.Context) {
	next, _, err := s.Queue.SweepScopes(ctx, s.scopeCursor, 1000)
	if err != nil {
		if ctx.Err() == nil {
			s.Log.Warn("sweeping scoped limits failed", "error", err)
		}
		return
	}
	s.scopeCursor = next
	if s.pruneCursor == "" {
		s.pruneCursor = "0"
	}
	for range 5 { // up to 1,000 fields per pass
		next, _, err := s.Queue.PruneScopeStates(ctx, s.pruneCursor)
		if err != nil {
			if ctx.Err() == nil {
				s.Log.Warn("pruning scoped limits' states failed", "error", err)
			}
			return
		}
		s.pruneCursor = next
		if next == "0" {
			return
		}
	}
}

// fireSchedules fires the ticks of the queue's schedules that are due on
// the Redis clock — each tick creates its task at most once (store.Fire),
// so a scheduler that lost the lock meanwhile fires nothing twice — and
// returns the time until the next tick (-1: none; 0: more are due).
func (s *Scheduler) fireSchedules(ctx context.Context) (time.Duration, error) {
	return s.fireSchedulesAt(ctx, 0)
}

// fireSchedulesAt is fireSchedules with the clock at (Unix ms; 0: the
// Redis clock).
func (s *Scheduler) fireSchedulesAt(ctx context.Context, at int64) (time.Duration, error) {
	now, due, wait, err := s.Queue.DueSchedules(ctx, batchSize, at)
	if err != nil {
		return -1, err
	}
	nowT := time.UnixMilli(now)
	for _, st := range due {
		d := st.Def
		spec, err := periodic.Parse(d.Cron, d.TimeZone)
		if err != nil {
			// stored by an older or newer process that accepted it: leave it
			// for a day rather than fail every pass
			s.Log.Warn("schedule cannot be read; not firing it", "schedule", d.Name, "error", err)
			if _, _, err := s.Queue.Fire(ctx, st, nil, nil, now+24*time.Hour.Milliseconds(), now); err != nil {
				return -1, err
			}
			continue
		}
		ticks, next := spec.Due(time.UnixMilli(st.LastTick), nowT, periodic.Policy(d.Missed), d.CatchUpMax)
		ms := make([]int64, len(ticks))
		var traces []string
		var ends []func()
		for i, t := range ticks {
			ms[i] = t.UnixMilli()
			if s.TraceTick != nil {
				tp, end := s.TraceTick(ctx, d.Name, d.Type, t)
				traces, ends = append(traces, tp), append(ends, end)
			}
		}
		nextMs := next.UnixMilli()
		if next.IsZero() {
			nextMs = now + 365*24*time.Hour.Milliseconds() // no tick within five years
		}
		ids, changed, err := s.Queue.Fire(ctx, st, ms, traces, nextMs, now)
		for _, end := range ends {
			end()
		}
		if err != nil {
			return -1, err
		}
		if changed {
			wait = 0 // redefined meanwhile: read it again
		}
		if len(ids) > 0 {
			s.Log.Debug("schedule fired", "schedule", d.Name, "tasks", ids)
		}
		if w := time.Duration(nextMs-now) * time.Millisecond; wait < 0 || w < wait {
			wait = w
		}
	}
	return wait, nil
}

// waitFor returns after wait, or sooner when the wakeup stream moves past
// after. The due time is kept by a Go timer: an idle Redis serves a
// blocking command's timeout only on its next cron tick (every 100 ms at the
// default hz), which would make delayed tasks late. The wait on the stream
// is only the wake signal; it stays outstanding across calls until it
// returns.
func (s *Scheduler) waitFor(ctx context.Context, after string, wait time.Duration) error {
	if s.wake == nil {
		ch := make(chan error, 1)
		go func() { ch <- s.Queue.WaitWakeup(ctx, after, maxIdleWait) }()
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
