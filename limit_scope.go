package dtq

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/dtq-dev/dtq/internal/keys"
	"github.com/dtq-dev/dtq/internal/store"
)

// EachKey is the limit key of SetKeyLimits's limit of each key: it applies
// to every limit key of the queue that has no limit of its own, each key
// counted apart.
const EachKey = store.EachKey

// ScopeLimitInfo is the limits of one task type or limit key of a queue
// (SetTypeLimits, SetKeyLimits) and their use.
type ScopeLimitInfo struct {
	// TaskType or LimitKey names what it limits (EachKey: each limit key
	// without a limit of its own).
	TaskType string `json:"task_type,omitempty"`
	LimitKey string `json:"limit_key,omitempty"`
	// MaxRunning: at most this many such tasks RUNNING at once across
	// every worker (for EachKey: of each key); 0: none.
	MaxRunning int64 `json:"max_running"`
	// InUse is how many such tasks run now under it (for EachKey: under
	// every key's own count, summed).
	InUse int64 `json:"in_use"`
	// Waiting counts the QUEUED tasks its full concurrency limit holds
	// back.
	Waiting int64         `json:"waiting"`
	Rate    int64         `json:"rate,omitempty"`
	Per     time.Duration `json:"-"`
	Burst   int64         `json:"burst,omitempty"`
	// PausedUntil is set while a RetryAfter of one of its tasks holds it.
	PausedUntil *time.Time `json:"paused_until,omitempty"`
	// OnFull is what a start does when its concurrency limit is full.
	OnFull OnFull `json:"on_full"`
}

// SetTypeLimits replaces the limits of queue's tasks of taskType with
// spec's, across every worker process (ClearTypeLimits removes them):
// at most spec.MaxRunning such tasks RUNNING at once, at most spec.Rate
// starts per spec.Per (GCRA, bursts of spec.Burst). They hold as well as
// the queue's own limits and the task's limit key's. A start a full
// concurrency limit holds back leaves the task QUEUED (no attempt used)
// until one of those tasks ends — woken, not polled — or a lost worker's
// lease expires (within its VisibilityTimeout, then the scheduler's sweep
// every 2 s); a start the rate holds back makes the task SCHEDULED at the
// start the rate reserves for it. RetryAfter from such a task's handler
// pauses them for its delay. It is audited (limit-set).
func (a *Admin) SetTypeLimits(ctx context.Context, queue, taskType string, spec LimitSpec) error {
	if err := checkType(taskType); err != nil {
		return err
	}
	if err := checkLimits(spec); err != nil {
		return err
	}
	return a.setScopeLimits(ctx, queue, store.ScopeType+taskType, "type "+taskType, spec)
}

// ClearTypeLimits removes the limits of queue's tasks of taskType (the
// queue's own and its limit keys' stay); a type without limits is left as
// it is. It is audited (limit-set).
func (a *Admin) ClearTypeLimits(ctx context.Context, queue, taskType string) error {
	if err := checkType(taskType); err != nil {
		return err
	}
	return a.setScopeLimits(ctx, queue, store.ScopeType+taskType, "type "+taskType, LimitSpec{})
}

// SetKeyLimits replaces the limits of queue's tasks submitted with
// EnqueueOpts.LimitKey limitKey (EachKey: of each key that has no limits
// of its own, counted per key) with spec's, as SetTypeLimits does for a
// task type (ClearKeyLimits removes them). A customer's tasks, say:
// SetKeyLimits(ctx, q, dtq.EachKey, LimitSpec{MaxRunning: 2}) runs at most
// two of any one customer's tasks at once. It is audited (limit-set).
func (a *Admin) SetKeyLimits(ctx context.Context, queue, limitKey string, spec LimitSpec) error {
	if err := checkLimitKey(limitKey); err != nil {
		return err
	}
	if err := checkLimits(spec); err != nil {
		return err
	}
	return a.setScopeLimits(ctx, queue, store.ScopeKey+limitKey, "limit_key "+limitKey, spec)
}

// ClearKeyLimits removes the limits of queue's tasks of limitKey (EachKey:
// the limits of each key without limits of its own; a key's own limits
// stay); a key without limits is left as it is. It is audited (limit-set).
func (a *Admin) ClearKeyLimits(ctx context.Context, queue, limitKey string) error {
	if err := checkLimitKey(limitKey); err != nil {
		return err
	}
	return a.setScopeLimits(ctx, queue, store.ScopeKey+limitKey, "limit_key "+limitKey, LimitSpec{})
}

func checkLimitKey(limitKey string) error {
	if limitKey != EachKey && !keys.ValidName(limitKey) {
		return invalid("limit_key", "must be %s, or %q for each key (got %q)", keys.NameRule, EachKey, limitKey)
	}
	return nil
}

// setScopeLimits replaces the limits of scope with spec's, checked already
// (the zero LimitSpec removes them).
func (c *engine) setScopeLimits(ctx context.Context, queue, scope, what string, spec LimitSpec) error {
	per := spec.Per
	if spec.Rate == 0 {
		per = 0
	}
	detail := fmt.Sprintf("%s max_running=%d %s", what, spec.MaxRunning, rateDetail(spec))
	if spec.OnFull != "" && spec.OnFull != WaitWhenFull {
		detail += " on_full=" + string(spec.OnFull)
	}
	return c.setLimits(ctx, queue, detail, func(q *store.Queue) error {
		return q.SetScopeLimit(ctx, store.ScopeDef{Scope: scope, MaxRunning: spec.MaxRunning, Rate: spec.Rate, Per: per,
			Burst: max(spec.Burst, 1), OnFull: onFullLetters[spec.OnFull]})
	})
}

// scopeInfos reads the scoped limits of queue.
func (c *engine) scopeInfos(ctx context.Context, queue string) ([]ScopeLimitInfo, error) {
	ss, err := c.queue(queue).store.ScopeLimits(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]ScopeLimitInfo, len(ss))
	for i, s := range ss {
		info := ScopeLimitInfo{MaxRunning: s.MaxRunning, InUse: s.InUse, Waiting: s.Waiting, Rate: s.Rate, Per: s.Per,
			OnFull: onFullOf(s.OnFull)}
		if s.Rate > 0 {
			info.Burst = s.Burst
		}
		if t, ok := strings.CutPrefix(s.Scope, store.ScopeType); ok {
			info.TaskType = t
		} else {
			info.LimitKey = strings.TrimPrefix(s.Scope, store.ScopeKey)
		}
		if !s.PausedTo.IsZero() {
			p := s.PausedTo
			info.PausedUntil = &p
		}
		out[i] = info
	}
	return out, nil
}
