package claim

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/dtq-dev/dtq/internal/backoff"
	"github.com/dtq-dev/dtq/internal/delivery"
	"github.com/dtq-dev/dtq/internal/store"
)

// Config is what a Claimer is fixed with.
type Config struct {
	Queue string
	Store *store.Queue
	Hooks Hooks
	Log   *slog.Logger
	// MaxCrashes is how many takeovers from lost workers a task survives
	// before a start sends it DEAD.
	MaxCrashes int
	// Retention is how long a task that ends at its start (DEAD) is kept.
	Retention time.Duration
	// Visibility is the reclaim idle time of the runner's reads until a
	// call names its own (Read's idle).
	Visibility time.Duration
}

// Claimer claims and starts the tasks of one queue for one runner: a Go
// worker's reader (Reader) or the lease server's calls (Lease), one
// Claimer per queue of the runner. It keeps what the runner knows of the
// queue — its limits (Limits), the pacing and cursors of its reclaim
// passes — and does the steps both runners take the same way: the
// scripted read, the start (asked again when its answer is lost), and the
// settling of what the start answered. It is safe for concurrent use.
type Claimer struct {
	cfg    Config
	q      *store.Queue
	hooks  Hooks
	log    *slog.Logger
	Limits Limits

	mu      sync.Mutex
	reclaim *delivery.Reclaim
	ensured bool // a read ran the script: the consumer groups exist
	// lost holds the consumers whose claim failed with its call in
	// flight (Lease: RecoverLost)
	lost map[string]bool
}

// New returns the Claimer of cfg.Queue for a runner. It does no I/O.
func New(cfg Config) *Claimer {
	return &Claimer{cfg: cfg, q: cfg.Store, hooks: cfg.Hooks, log: cfg.Log,
		Limits:  Limits{q: cfg.Store, hooks: cfg.Hooks, log: cfg.Log, queue: cfg.Queue},
		reclaim: delivery.NewReclaim(cfg.Visibility, store.Bands)}
}

// Queue returns the name of the claimer's queue.
func (c *Claimer) Queue() string { return c.cfg.Queue }

// ReclaimDue reports whether the next read should take over the tasks of
// lost workers (a reclaim pass is due).
func (c *Claimer) ReclaimDue(now time.Time) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.reclaim.Due(now)
}

// ReclaimWait is how long a read may block at now before a reclaim pass
// is due (0: due).
func (c *Claimer) ReclaimWait(now time.Time) time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.reclaim.Wait(now)
}

// Read claims up to credit entries for consumer with the read script
// (read.lua): exactly, in priority order, creating the consumer groups
// with ensure or before the claimer's first read; with a reclaim pass
// when one is due, taking over entries idle for idle (0: the
// claimer's Visibility). It registers the queue first (Hooks.Register).
func (c *Claimer) Read(ctx context.Context, consumer string, credit int, idle time.Duration, ensure bool) (store.ReadResult, error) {
	if idle == 0 {
		idle = c.cfg.Visibility
	}
	c.mu.Lock()
	c.reclaim.Every = delivery.ReclaimEvery(idle)
	req := store.ReadRequest{Consumer: consumer, Credit: credit, EnsureGroups: ensure || !c.ensured}
	now := time.Now()
	due := c.reclaim.Due(now)
	if due {
		req.ReclaimIdle, req.Cursors = idle, append([]string(nil), c.reclaim.Cursors...)
		c.reclaim.Began(now) // (concurrent calls: one pass)
	}
	c.mu.Unlock()
	err := c.hooks.Register(ctx)
	var res store.ReadResult
	if err == nil {
		res, err = c.q.Read(ctx, req)
	}
	c.mu.Lock()
	if err != nil {
		if due {
			c.reclaim.Force() // the pass did not happen: still due
		}
		c.mu.Unlock()
		return res, err
	}
	c.ensured = true
	if due {
		c.reclaim.Cursors = res.Cursors
	}
	c.mu.Unlock()
	if due {
		c.reportReclaims(res.Entries) // (the runner's hook, outside the lock)
	}
	return res, nil
}

// reportReclaims reports the entries of a read that were taken over from
// lost workers.
func (c *Claimer) reportReclaims(entries []store.Entry) {
	var out []store.Entry
	for _, e := range entries {
		if e.Reclaimed {
			out = append(out, e)
		}
	}
	if len(out) > 0 {
		c.hooks.Reclaimed(out)
	}
}

// start starts entries with start.lua, those pre (the outcomes of a
// take.lua call; nil: none) did not start, and returns every entry's
// outcome. A start whose answer is lost is asked again as resumed
// (askAgain) until wait ends, every maxWait at most. On an error, pre
// comes back as it was (nil: none started).
func (c *Claimer) start(ctx, wait context.Context, cfg store.StartConfig, entries []store.Entry, pre []store.Started,
	maxWait time.Duration) ([]store.Started, error) {
	started, err := c.startRest(ctx, cfg, entries, pre)
	var nre *store.NotReplicatedError
	if err != nil && !errors.As(err, &nre) {
		started, err = c.askAgain(wait, entries, maxWait, err,
			func() ([]store.Started, error) { return c.startRest(ctx, cfg, entries, pre) })
		if started == nil {
			started = pre
		}
	}
	return started, err
}

// startRest starts with start.lua the entries that pre did not start.
func (c *Claimer) startRest(ctx context.Context, cfg store.StartConfig, entries []store.Entry, pre []store.Started) ([]store.Started, error) {
	if pre == nil {
		return c.q.Start(ctx, cfg, entries)
	}
	var rest []store.Entry
	var at []int
	for i, s := range pre {
		if s.Code == store.Unstarted {
			rest = append(rest, entries[i])
			at = append(at, i)
		}
	}
	if len(rest) == 0 {
		return pre, nil
	}
	started, err := c.q.Start(ctx, cfg, rest)
	var nre *store.NotReplicatedError
	if err != nil && !errors.As(err, &nre) {
		return pre, err
	}
	for j, i := range at {
		pre[i] = started[j]
	}
	return pre, err
}

// A claim or a start whose answer is lost — the connection failed with
// the call in flight, Redis killed after it wrote the call but before its
// reply — may have happened. Left alone, its tasks would stay claimed,
// unrenewed, and be taken over a visibility timeout later as from a lost
// worker: a crash recorded (counted toward MaxCrashes) for a run whose
// handler never started, and the task late by that timeout. So both
// runners find them again (CONTRACT 3.3.1b): a start is asked again as
// resumed (askAgain); a claim is found among the entries pending for its
// consumer (Reader.recoverClaims, Claimer.recoverLost). No run is
// recorded as crashed unless a handler could have started.

// askAgain sends again, through start, a start of entries that failed
// with err, the entries marked resumed (store.Entry.Resumed: a run of the
// caller's the task holds goes on, else the entry starts as claimed),
// waiting at most maxWait between tries, until Redis answers or wait
// ends; then it returns nil and the last error.
func (c *Claimer) askAgain(wait context.Context, entries []store.Entry, maxWait time.Duration, err error,
	start func() ([]store.Started, error)) ([]store.Started, error) {
	for i := range entries {
		entries[i].Resumed = true
	}
	retry := backoff.Backoff{Max: maxWait}
	for {
		c.hooks.RedisError("start", err)
		c.log.Warn("starting tasks failed; asking again", "queue", c.cfg.Queue, "tasks", len(entries), "error", err)
		if retry.Sleep(wait) != nil {
			return nil, err
		}
		started, serr := start()
		var nre *store.NotReplicatedError
		if serr == nil || errors.As(serr, &nre) {
			return started, serr
		}
		err = serr
	}
}

// settle reports what the start of entries answered (started) and returns
// the runs it began, their RUNNING events published: a task its start
// ended (DEAD, withdrawn, cancelled by a full limit's rule) is reported as
// ended, one a limit holds back as throttled, what a full limit's rule did
// as OnFull.
func (c *Claimer) settle(entries []store.Entry, started []store.Started) []Claim {
	var out []Claim
	for i, s := range started {
		e := &entries[i]
		switch s.Code {
		case store.Died:
			if e.Malformed {
				c.log.Warn("malformed band entry dead-lettered", "task_id", e.TaskID, "queue", c.cfg.Queue, "entry", e.EntryID)
			} else {
				c.log.Warn("task dead: its workers were lost more than MaxCrashes times",
					"task_id", e.TaskID, "queue", c.cfg.Queue, "task_type", typeOf(e))
			}
			c.hooks.Ended(e, s.Code)
		case store.Parked, store.Deferred:
			c.hooks.Throttled(1)
		case store.Withdrawn:
			if s.OnFull == "" {
				c.log.Info("task cancelled while its worker was lost; it is not started again",
					"task_id", e.TaskID, "queue", c.cfg.Queue, "task_type", typeOf(e))
			}
			c.hooks.Ended(e, s.Code)
		}
		if s.OnFull != "" {
			c.hooks.OnFull(e, &started[i])
		}
		if s.Code != store.Began || e.GiveBack || e.Spec == nil {
			continue
		}
		out = append(out, Claim{Queue: c.cfg.Queue, Entry: *e, Started: s, Leased: c.Limits.LeasedOf(e.Scopes)})
	}
	c.hooks.Publish(out)
	return out
}

func typeOf(e *store.Entry) string {
	if e.Spec == nil {
		return ""
	}
	return e.Spec.Type
}

// notReplicated reports starts the replicas did not acknowledge in time:
// started on the master, they run (a failover before replication would run
// these tasks again).
func (c *Claimer) notReplicated(tasks int, err error) {
	c.log.Warn("task starts not acknowledged by enough replicas", "queue", c.cfg.Queue, "tasks", tasks, "error", err)
	c.hooks.RedisError("start", err)
}
