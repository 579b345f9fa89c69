package dtq

import (
	"context"
	"fmt"
	"time"

	"github.com/dtq-dev/dtq/internal/store"
)

// Bounds of the limits.
const (
	MaxConcurrencyLimit = 1_000_000
	MaxRate             = 1_000_000
	MinRatePer          = time.Millisecond
	MaxRatePer          = 24 * time.Hour
)

// LimitSpec is what limits a queue's tasks (or those of one task type or
// limit key) across every worker process: SetLimits, SetTypeLimits and
// SetKeyLimits take one with MaxRunning, Rate or both.
type LimitSpec struct {
	// MaxRunning: at most this many of the queue's tasks RUNNING at once (1
	// to MaxConcurrencyLimit); 0: no concurrency limit.
	MaxRunning int64
	// Rate: at most Rate starts per Per, in bursts of at most Burst (1 to
	// Rate; 0 means 1); Rate 0: no rate limit.
	Rate  int64
	Per   time.Duration
	Burst int64
	// OnFull is what the start of a task does when the concurrency limit
	// is full — of a task type's or a limit key's limit (SetTypeLimits,
	// SetKeyLimits; a queue's own limits wait): WaitWhenFull (the default)
	// or CancelRunning, CancelNewest, ReplaceWaiting
	// (docs/flow-control.md, "When a limit is full"). Needs MaxRunning.
	OnFull OnFull
}

// OnFull is the rule of a full concurrency limit (LimitSpec.OnFull).
type OnFull string

// The rules of a full concurrency limit, Hatchet's set.
const (
	// WaitWhenFull: the task waits QUEUED until a task under the limit
	// ends (the default).
	WaitWhenFull OnFull = "queue"
	// CancelRunning ("cancel in progress"): the oldest run under the limit
	// is cancelled, and the task starts once it has ended.
	CancelRunning OnFull = "cancel_running"
	// CancelNewest ("refuse the newest"): the task is CANCELLED at its
	// start, with error "cancelled: limit <scope> full"; the runs go on.
	CancelNewest OnFull = "cancel_newest"
	// ReplaceWaiting ("keep the newest queued"): the task waits, and the
	// tasks that waited for the limit before it are CANCELLED.
	ReplaceWaiting OnFull = "replace_waiting"
)

// onFullLetters maps OnFull to the store's letters.
var onFullLetters = map[OnFull]string{"": store.OnFullWait, WaitWhenFull: store.OnFullWait,
	CancelRunning: store.OnFullCancelRunning, CancelNewest: store.OnFullCancelNewest, ReplaceWaiting: store.OnFullReplaceWaiting}

// onFullOf is the OnFull of a store letter.
func onFullOf(letter string) OnFull {
	for o, l := range onFullLetters {
		if l == letter && o != "" {
			return o
		}
	}
	return WaitWhenFull
}

// LimitInfo is a queue's limits and their use.
type LimitInfo struct {
	Queue string `json:"queue"`
	// MaxRunning is the concurrency limit: at most this many of the
	// queue's tasks RUNNING at once across every worker; 0: none.
	MaxRunning int64 `json:"max_running"`
	// InUse is how many leases are held now: one per task running, and
	// one per worker waiting for a task of the queue.
	InUse int64 `json:"in_use"`

	// Rate limits how often the queue's tasks start: at most Rate per Per,
	// at most Burst at once; 0: no rate limit.
	Rate  int64         `json:"rate,omitempty"`
	Per   time.Duration `json:"-"`
	Burst int64         `json:"burst,omitempty"`
	// PausedUntil is set while a RetryAfter of one of the queue's tasks
	// holds its limits: no task of it starts before then.
	PausedUntil *time.Time `json:"paused_until,omitempty"`

	// Scopes are the limits of its task types and limit keys
	// (SetTypeLimits, SetKeyLimits), by type then key.
	Scopes []ScopeLimitInfo `json:"scopes,omitempty"`
}

// SetLimits replaces queue's limits with spec's, across every worker
// process; a zero field of spec leaves no such limit (ClearLimits removes
// them all; a spec with neither MaxRunning nor Rate is ErrInvalid).
//
// MaxRunning caps the queue at that many tasks RUNNING at once. Workers
// hold a lease per task they run, renewed with the task: a lost worker's
// leases expire within its VisibilityTimeout, and a slot freed by a
// finishing task wakes a worker waiting for one. A task waiting for a slot
// stays QUEUED in its band (no attempt used).
//
// Rate caps how often the queue's tasks start: at most Rate per Per,
// smoothly (GCRA: one start every Per/Rate, with bursts of at most Burst
// after an idle spell; Burst 0 means 1). A task waiting for its turn stays
// QUEUED in its band (no attempt used). A handler of the queue returning
// RetryAfter(d, err) pauses the queue's limits for d: the remote asked
// everyone to slow down.
//
// Workers read the limits when they start, when they are set (told on the
// queue's cancels channel) and every 5 s, in case that message was missed.
// It is audited (limit-set).
func (a *Admin) SetLimits(ctx context.Context, queue string, spec LimitSpec) error {
	if err := checkLimits(spec); err != nil {
		return err
	}
	if spec.OnFull != "" && spec.OnFull != WaitWhenFull {
		return invalid("on_full", "is for a task type's or a limit key's limits: a queue's own wait when full")
	}
	return a.putLimits(ctx, queue, spec)
}

// ClearLimits removes queue's own limits (not those of its task types and
// limit keys: ClearTypeLimits, ClearKeyLimits); a queue without limits is
// left as it is. It is audited (limit-set).
func (a *Admin) ClearLimits(ctx context.Context, queue string) error {
	return a.putLimits(ctx, queue, LimitSpec{})
}

// putLimits replaces queue's limits with spec's, checked already (the
// zero LimitSpec removes them).
func (c *engine) putLimits(ctx context.Context, queue string, spec LimitSpec) error {
	detail := fmt.Sprintf("max_running=%d %s", spec.MaxRunning, rateDetail(spec))
	return c.setLimits(ctx, queue, detail, func(q *store.Queue) error {
		return q.SetLimits(ctx, store.LimitDef{MaxRunning: spec.MaxRunning, Rate: spec.Rate, Per: spec.Per, Burst: max(spec.Burst, 1)})
	})
}

// setLimits registers queue, runs set on its store and audits detail.
func (c *engine) setLimits(ctx context.Context, queue, detail string, set func(*store.Queue) error) error {
	if err := checkQueue("queue", queue); err != nil {
		return err
	}
	q := c.queue(queue)
	if err := c.register(ctx, q); err != nil {
		return err
	}
	if err := set(q.store); err != nil {
		return err
	}
	c.audit(ctx, auditLimitSet, queue, "", detail)
	return nil
}

func rateDetail(s LimitSpec) string {
	if s.Rate == 0 {
		return "rate=0"
	}
	return fmt.Sprintf("rate=%d/%v burst=%d", s.Rate, s.Per, max(s.Burst, 1))
}

// CheckLimits validates spec as SetLimits, SetTypeLimits and SetKeyLimits
// would, writing nothing.
func (a *Admin) CheckLimits(spec LimitSpec) error { return checkLimits(spec) }

func checkLimits(spec LimitSpec) error {
	switch {
	case spec.MaxRunning == 0 && spec.Rate == 0:
		return invalid("max_running", "or rate is required (ClearLimits, ClearTypeLimits and ClearKeyLimits remove limits)")
	case spec.MaxRunning < 0 || spec.MaxRunning > MaxConcurrencyLimit:
		return invalid("max_running", "must be from 0 (no limit) to %d (got %d)", MaxConcurrencyLimit, spec.MaxRunning)
	case spec.Rate < 0 || spec.Rate > MaxRate:
		return invalid("rate", "must be from 0 (no limit) to %d (got %d)", MaxRate, spec.Rate)
	case spec.Rate > 0 && (spec.Per < MinRatePer || spec.Per > MaxRatePer || spec.Per%time.Millisecond != 0):
		return invalid("per", "must be whole milliseconds from %v to %v (got %v)", MinRatePer, MaxRatePer, spec.Per)
	case spec.Burst < 0 || spec.Burst > max(spec.Rate, 1):
		return invalid("burst", "must be from 1 to the rate, %d (got %d)", spec.Rate, spec.Burst)
	}
	if _, ok := onFullLetters[spec.OnFull]; !ok {
		return invalid("on_full", "must be %q, %q, %q or %q (got %q)", WaitWhenFull, CancelRunning, CancelNewest, ReplaceWaiting, spec.OnFull)
	}
	if spec.OnFull != "" && spec.OnFull != WaitWhenFull && spec.MaxRunning == 0 {
		return invalid("on_full", "needs max_running: it is what a start does when the concurrency limit is full")
	}
	return nil
}

// Limit returns queue's limits and how many of its leases are held now.
func (a *Admin) Limit(ctx context.Context, queue string) (*LimitInfo, error) {
	if err := checkQueue("queue", queue); err != nil {
		return nil, err
	}
	all, err := a.limitsOf(ctx, []string{queue})
	if err != nil {
		return nil, err
	}
	return all[0], nil
}

// Limits returns the limits of the namespace's queues that have any, by
// queue name.
func (a *Admin) Limits(ctx context.Context) ([]*LimitInfo, error) {
	names, err := a.store.QueueNames(ctx)
	if err != nil {
		return nil, err
	}
	sortStrings(names)
	all, err := a.limitsOf(ctx, names)
	if err != nil {
		return nil, err
	}
	out := []*LimitInfo{}
	for _, info := range all {
		if info.MaxRunning > 0 || info.Rate > 0 || len(info.Scopes) > 0 {
			out = append(out, info)
		}
	}
	return out, nil
}

// limitsOf reads the limits of queues names in two round trips, and two
// more per queue with limits of task types or limit keys.
func (c *engine) limitsOf(ctx context.Context, names []string) ([]*LimitInfo, error) {
	defs, inUse, err := c.store.Limits(ctx, names)
	if err != nil {
		return nil, err
	}
	out := make([]*LimitInfo, len(names))
	for i, d := range defs {
		out[i] = &LimitInfo{Queue: names[i], MaxRunning: d.MaxRunning, InUse: inUse[i], Rate: d.Rate, Per: d.Per, Burst: d.Burst}
		if !d.PausedTo.IsZero() {
			out[i].PausedUntil = &d.PausedTo
		}
		if !d.Scoped {
			continue
		}
		if out[i].Scopes, err = c.scopeInfos(ctx, names[i]); err != nil {
			return nil, err
		}
	}
	return out, nil
}
