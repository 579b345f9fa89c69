package dtq

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/dtq-dev/dtq/internal/backoff"
	"github.com/dtq-dev/dtq/internal/store"
	"github.com/dtq-dev/dtq/internal/taskid"
)

// runSteps is what one execution knows of its task's durable steps: the
// records read at its first step (loaded once), and the names it used
// (a name twice in one run is an error).
type runSteps struct {
	mu      sync.Mutex
	loaded  bool
	records map[string]store.StepRecord
	used    map[string]bool
	touched bool // the task has step records: its end sets how long they stay
	// suspend is what the execution suspended for (Sleep, WaitFor): it
	// ends so, whatever its handler returns; nil while it does not.
	suspend *suspension
}

// stepFence is the execution a step record is fenced by.
type stepFence struct {
	queue, id string
	fence     store.Fence
}

// load reads the task's step records once per execution; for the task's
// first execution (fresh: its first attempt, run from its birth entry,
// never taken over), which none can precede, it reads nothing.
func (rs *runSteps) load(ctx context.Context, c *engine, f stepFence, fresh bool) error {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	if rs.loaded {
		return nil
	}
	if fresh {
		rs.records, rs.used, rs.loaded = map[string]store.StepRecord{}, map[string]bool{}, true
		return nil
	}
	_, ulid, err := taskid.Parse(f.id)
	if err != nil {
		return err
	}
	recs, err := c.queue(f.queue).store.Steps(ctx, ulid)
	if err != nil {
		c.redisError("step", err)
		return err
	}
	rs.records, rs.used, rs.loaded = recs, map[string]bool{}, true
	rs.touched = len(recs) > 0
	return nil
}

// begin claims name for this execution and returns its record, if the
// task recorded it in an earlier run. A name used twice in one execution
// is ErrDuplicateStep.
func (rs *runSteps) begin(name string) (store.StepRecord, bool, error) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	if rs.suspend != nil {
		return store.StepRecord{}, false, ErrSuspended
	}
	if rs.used[name] {
		return store.StepRecord{}, false, ErrDuplicateStep
	}
	rs.used[name] = true
	r, ok := rs.records[name]
	return r, ok, nil
}

// record writes result as step name of execution f, retrying a failed
// call until ctx ends (a step whose record failed may run again). It
// returns the record that stands: this one, or one another execution
// wrote first. A run that is no longer the task's is ErrRunLost.
func (rs *runSteps) record(ctx context.Context, c *engine, f stepFence, name string, result []byte) ([]byte, error) {
	_, ulid, err := taskid.Parse(f.id)
	if err != nil {
		return nil, err
	}
	q := c.queue(f.queue)
	retry := backoff.Backoff{Max: time.Second}
	for {
		code, had, err := q.store.RecordStep(ctx, c.durability(), ulid, f.fence, name, result)
		var nre *store.NotReplicatedError
		if errors.As(err, &nre) {
			// Recorded on the master, not (yet) on enough replicas: asked
			// again, which answers StepHad once it is there.
			c.log.Warn("step record not acknowledged by enough replicas; recording it again", logTaskID, f.id, "step", name, "error", err)
			c.redisError("step", err)
		} else if err != nil {
			c.redisError("step", err)
		}
		if err == nil {
			rs.mu.Lock()
			rs.touched = true
			rs.mu.Unlock()
			switch code {
			case store.StepRecorded:
				return result, nil
			case store.StepHad:
				return had.Result, nil
			default:
				return nil, ErrRunLost
			}
		}
		if retry.Sleep(ctx) != nil {
			return nil, err
		}
	}
}

// keepAfter sets how long the step records of task t stay once its
// execution ended with status (after a retry: its delay, then
// store.StepKeep; after an end: the retention). A failure leaves them to
// the expiry their last write set.
func (rs *runSteps) keepAfter(ctx context.Context, c *engine, t *Task, status string, retryDelay time.Duration) {
	if rs == nil || !rs.touched || status == "" || rs.suspend != nil { // (suspend.lua sets it)
		return
	}
	_, ulid, err := taskid.Parse(t.ID)
	if err != nil {
		return
	}
	keep := retryDelay + store.StepKeep
	if Status(status).Finished() {
		succeeded, others := c.cfg.retentions()
		keep = others
		if Status(status) == StatusSucceeded {
			keep = succeeded
		}
	}
	if err := c.queue(t.Queue).store.KeepSteps(ctx, ulid, keep); err != nil {
		c.redisError("step", err)
		c.log.Warn("setting how long a task's step records stay failed; they expire a week after their last write",
			logTaskID, t.ID, "error", err)
	}
}
