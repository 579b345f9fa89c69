package dtq

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"go.opentelemetry.io/otel/attribute"
	"strconv"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/dtq-dev/dtq/internal/keys"
	"github.com/dtq-dev/dtq/internal/store"
)

// Defaults and limits of EnqueueOpts.
const (
	DefaultQueue       = "default"
	DefaultPriority    = 5
	DefaultMaxAttempts = 10
	DefaultTimeout     = 30 * time.Minute
	MaxMaxAttempts     = 1000
	MaxTimeout         = 7 * 24 * time.Hour
	MaxDelay           = 365 * 24 * time.Hour
	MaxTypeLen         = 128
	MaxIdempotencyKey  = 256
)

// EnqueueOpts are the options of Client.Enqueue. A nil *EnqueueOpts means
// all defaults.
type EnqueueOpts struct {
	// Queue names the queue (1-64 of A-Z a-z 0-9 _ . -). Defaults to
	// "default".
	Queue string

	// Priority is 0-9; among ready tasks of a queue, a higher priority runs
	// first. Defaults to 5 (use Ptr(0) for priority 0).
	Priority *int

	// Delay makes the task due after this long (on the Redis clock);
	// RunAt makes it due at that time. At most one may be set. Defaults to
	// due now.
	Delay time.Duration
	RunAt time.Time

	// MaxAttempts bounds the executions that end in a retryable error (1 to
	// 1000). Defaults to 10.
	MaxAttempts int

	// Timeout bounds one execution: the handler's context is cancelled
	// after it and the execution counts as a retryable failure. Defaults
	// to 30 minutes.
	Timeout time.Duration

	// IdempotencyKey makes the submission idempotent: while the key is
	// remembered (Config.IdempotencyWindow), an Enqueue with the same key
	// and the same request returns the original task (Duplicate set) and
	// creates nothing; with a different request it returns an
	// IdempotencyConflictError. Defaults to none.
	IdempotencyKey string

	// Unique makes the task unique among the tasks of its queue and type
	// (see UniqueOpts): while another such task is in the chosen states,
	// Enqueue creates nothing and returns that task (Duplicate set).
	// Exclusive with IdempotencyKey.
	Unique *UniqueOpts

	// Debounce makes the submission debounced (see DebounceOpts): it
	// joins the pending task of its queue, type and key, if there is one
	// (EnqueueResult.Debounced), and makes it due later. Exclusive with
	// IdempotencyKey, Unique, OrderKey, Delay and RunAt. Defaults to none.
	Debounce *DebounceOpts

	// parent is "<task id> <step>" of the task awaiting this one (Child):
	// it is woken when this one ends.
	parent string

	// Group names the group (a tenant, a customer) the task is served
	// fairly among (the rule of queue names): the queue's workers serve
	// the groups with work in turn, in priority order within each, so a
	// group with 10 tasks is served while another has a million queued
	// (docs/flow-control.md). Tasks without a group are not held back.
	// Defaults to none.
	Group string

	// LimitKey puts the task under the limits of that key (the rule of
	// queue names; a customer's id, say): Admin.SetKeyLimits caps how
	// many tasks of one key run at once, or start per period, across every
	// worker. A task with a limit key has a record from its submission.
	// Defaults to none.
	LimitKey string

	// OrderKey makes the task one of an ordered key (the rule of queue
	// names; an account's or a document's id, say): the tasks of one key
	// start one at a time, in submission order, across every worker of
	// both kinds. A task that fails and will retry holds its key until it
	// ends; one that succeeds, goes DEAD or is cancelled lets the next
	// start; its delay delays the whole key (docs/flow-control.md, "Ordered
	// keys"). Keys are independent. Exclusive with Unique. Defaults to
	// none.
	OrderKey string
}

// UniqueOpts says what makes a task unique. A unique task holds its lock
// while its status is one of States; it releases it by leaving them —
// succeeding, failing for good, being cancelled, discarded or expiring —
// and never holds it once it no longer exists.
type UniqueOpts struct {
	// Key identifies the task among those of its queue and type (1-256
	// bytes of UTF-8); "" means its payload does (unique by arguments).
	Key string
	// States are the statuses in which a task holds its lock; empty means
	// QUEUED, SCHEDULED and RUNNING.
	States []Status
	// Period, when set (at least 1s), makes the lock one per period of the
	// Redis clock (the task's submission time floored to a multiple of
	// Period since the Unix epoch): at most one such task per period
	// among those in States (River's ByPeriod). It does not change
	// States: with the default ones the lock ends as its task succeeds,
	// goes DEAD or is cancelled, and the next such task in the period is
	// created. For one task per period whatever became of the first, list
	// all six statuses in States (a finished task holds the lock while it
	// is kept: Config.Retention).
	Period time.Duration
}

// Ptr returns a pointer to v, for optional fields such as
// EnqueueOpts.Priority.
func Ptr[T any](v T) *T { return &v }

// EnqueueResult is the outcome of an Enqueue.
type EnqueueResult struct {
	Task *Task
	// Duplicate is set when IdempotencyKey matched an earlier submission,
	// or another task holds the lock of a unique one: Task is that
	// original task, as it is now.
	Duplicate bool
	// Debounced is set when the submission joined the pending task of its
	// debounce key instead of creating one: Task is that task as it is
	// now, with the payload it will run with.
	Debounced bool
}

// Enqueue submits a task of taskType with payload (marshalled to JSON; a
// json.RawMessage or []byte must already be JSON). It returns once the task
// is in Redis. Concurrent calls share one round trip.
//
// Errors: a *ValidationError for bad input, a *TooLargeError, a
// *QueueFullError, an *IdempotencyConflictError, or a Redis error — after
// which the outcome is unknown: submit again with an IdempotencyKey to make
// a retry safe.
func (c *Client) Enqueue(ctx context.Context, taskType string, payload any, opts *EnqueueOpts) (*EnqueueResult, error) {
	q, item, err := c.prepare(taskType, payload, opts)
	if err != nil {
		return nil, err
	}
	ctx, span := c.startEnqueueSpan(ctx, taskType, q.name)
	item.Trace = traceparentOf(ctx)
	res, err := c.enqueueOne(ctx, q, item, opts)
	if err != nil {
		endSpan(span, err)
		return nil, err
	}
	endSpan(span, nil, attribute.String("dtq.task.id", res.Task.ID))
	return res, nil
}

// enqueueOne is Enqueue of a prepared item.
func (c *engine) enqueueOne(ctx context.Context, q *queueState, item store.EnqueueItem, opts *EnqueueOpts) (*EnqueueResult, error) {
	if err := c.register(ctx, q); err != nil {
		return nil, err
	}
	if opts != nil && opts.Unique != nil {
		states, _ := checkUnique(opts.Unique, opts.IdempotencyKey) // checked by prepare
		return c.enqueueUnique(ctx, q, item, opts, states)
	}
	if opts != nil && opts.Debounce != nil {
		return c.enqueueDebounced(ctx, q, item, opts)
	}
	var res store.EnqueueResult
	var err error
	if c.maxDepth(q.name) == 0 && item.IdemHash == "" && item.Delay == 0 && item.RunAt == 0 {
		// One XADD: concurrent calls share a pipeline (q.plain).
		if res, err = q.plain.Do(ctx, item); err != nil {
			return nil, err
		}
	} else if res, err = q.scripted.Do(ctx, item); err != nil {
		return nil, err
	}
	return c.enqueueResult(ctx, q, item, res, opts)
}

// EnqueueRequest is one task of EnqueueMany.
type EnqueueRequest struct {
	Type    string
	Payload any
	Opts    *EnqueueOpts
}

// EnqueueManyResult is the outcome of one EnqueueRequest: a result, or the
// error for that task alone.
type EnqueueManyResult struct {
	*EnqueueResult
	Err error
}

// EnqueueMany submits tasks in one round trip to Redis (one script call per
// queue involved, pipelined). Each request succeeds or fails on its own;
// the returned slice is in request order. The error is for failures of the
// whole batch (Redis unreachable).
func (c *Client) EnqueueMany(ctx context.Context, reqs []EnqueueRequest) ([]EnqueueManyResult, error) {
	ctx, span := c.startEnqueueSpan(ctx, "(many)", "")
	defer span.End()
	trace := traceparentOf(ctx)
	out := make([]EnqueueManyResult, len(reqs))
	type group struct {
		q     *queueState
		items []store.EnqueueItem
		index []int
	}
	groups := map[string]*group{}
	var order []*group
	var unique []int
	for i, r := range reqs {
		q, item, err := c.prepare(r.Type, r.Payload, r.Opts)
		if err != nil {
			out[i].Err = err
			continue
		}
		item.Trace = trace
		if r.Opts != nil && (r.Opts.Unique != nil || r.Opts.Debounce != nil) {
			unique = append(unique, i) // one call each, below
			continue
		}
		g := groups[q.name]
		if g == nil {
			g = &group{q: q}
			groups[q.name] = g
			order = append(order, g)
		}
		g.items = append(g.items, item)
		g.index = append(g.index, i)
	}
	var wg sync.WaitGroup
	errs := make([]error, len(order))
	for gi, g := range order {
		wg.Go(func() {
			if err := c.register(ctx, g.q); err != nil {
				errs[gi] = err
				return
			}
			res, err := c.enqueueBatch(ctx, g.q, g.items)
			if err != nil {
				errs[gi] = err
				return
			}
			for k, i := range g.index {
				r, err := c.enqueueResult(ctx, g.q, g.items[k], res[k], reqs[i].Opts)
				out[i] = EnqueueManyResult{EnqueueResult: r, Err: err}
			}
		})
	}
	for _, i := range unique {
		wg.Go(func() {
			r, err := c.Enqueue(ctx, reqs[i].Type, reqs[i].Payload, reqs[i].Opts)
			out[i] = EnqueueManyResult{EnqueueResult: r, Err: err}
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return out, nil
}

// prepare validates one submission and builds its script item.
// CheckSubmission checks a submission by the rules of Enqueue that do not
// depend on a Client's Config (the payload's size does) and returns its
// payload as JSON: what a program that stores submissions to make later
// (package outbox) checks before it stores one. The errors are Enqueue's.
func CheckSubmission(taskType string, payload any, opts *EnqueueOpts) (json.RawMessage, error) {
	_, _, data, err := checkSubmission(taskType, payload, opts)
	return data, err
}

// checkSubmission checks a submission (CheckSubmission) and returns its
// options with the defaults filled in, its priority and its payload.
func checkSubmission(taskType string, payload any, opts *EnqueueOpts) (o EnqueueOpts, prio int, data []byte, err error) {
	if opts != nil {
		o = *opts
	}
	if o.Queue == "" {
		o.Queue = DefaultQueue
	}
	if err := checkQueue("queue", o.Queue); err != nil {
		return o, 0, nil, err
	}
	if err := checkType(taskType); err != nil {
		return o, 0, nil, err
	}
	prio = DefaultPriority
	if o.Priority != nil {
		prio = *o.Priority
	}
	if prio < 0 || prio > 9 {
		return o, 0, nil, invalid("priority", "must be an integer from 0 to 9 (got %d)", prio)
	}
	switch {
	case o.MaxAttempts < 0 || o.MaxAttempts > MaxMaxAttempts:
		return o, 0, nil, invalid("max_attempts", "must be an integer from 1 to %d (got %d)", MaxMaxAttempts, o.MaxAttempts)
	case o.MaxAttempts == 0:
		o.MaxAttempts = DefaultMaxAttempts
	}
	switch {
	case o.Timeout < 0 || o.Timeout > MaxTimeout:
		return o, 0, nil, invalid("timeout", "must be positive and at most %v (got %v)", MaxTimeout, o.Timeout)
	case o.Timeout == 0:
		o.Timeout = DefaultTimeout
	case o.Timeout < time.Millisecond:
		return o, 0, nil, invalid("timeout", "must be at least 1ms (got %v)", o.Timeout)
	}
	if o.Delay < 0 {
		return o, 0, nil, invalid("delay", "must not be negative (got %v)", o.Delay)
	}
	if o.Delay > MaxDelay {
		return o, 0, nil, invalid("delay", "must be at most %v (got %v)", MaxDelay, o.Delay)
	}
	if o.Delay > 0 && !o.RunAt.IsZero() {
		return o, 0, nil, invalid("delay", "and run_at are exclusive")
	}
	if len(o.IdempotencyKey) > MaxIdempotencyKey || !utf8.ValidString(o.IdempotencyKey) {
		return o, 0, nil, invalid("idempotency_key", "must be valid UTF-8 of at most %d bytes", MaxIdempotencyKey)
	}
	if _, err := checkUnique(o.Unique, o.IdempotencyKey); err != nil {
		return o, 0, nil, err
	}
	if err := checkDebounce(&o); err != nil {
		return o, 0, nil, err
	}
	if o.Group != "" && !keys.ValidName(o.Group) {
		return o, 0, nil, invalid("group", "must be %s (got %q)", keys.NameRule, o.Group)
	}
	if o.LimitKey != "" && !keys.ValidName(o.LimitKey) {
		return o, 0, nil, invalid("limit_key", "must be %s (got %q)", keys.NameRule, o.LimitKey)
	}
	if o.OrderKey != "" && !keys.ValidName(o.OrderKey) {
		return o, 0, nil, invalid("order_key", "must be %s (got %q)", keys.NameRule, o.OrderKey)
	}
	if o.OrderKey != "" && o.Unique != nil {
		return o, 0, nil, invalid("order_key", "and unique are exclusive")
	}
	data, err = marshalPayload(payload)
	return o, prio, data, err
}

func (c *engine) prepare(taskType string, payload any, opts *EnqueueOpts) (*queueState, store.EnqueueItem, error) {
	var item store.EnqueueItem
	o, prio, data, err := checkSubmission(taskType, payload, opts)
	if err != nil {
		return nil, item, err
	}
	if len(data) > c.cfg.MaxPayloadBytes {
		return nil, item, &TooLargeError{Size: len(data), Limit: c.cfg.MaxPayloadBytes}
	}
	q := c.queue(o.Queue)
	item = store.EnqueueItem{
		Type: taskType, Payload: data, Priority: prio,
		MaxAttempts: o.MaxAttempts, Timeout: o.Timeout, Delay: roundUpMs(o.Delay), Group: o.Group,
		LimitKey: o.LimitKey, Parent: o.parent, OrderKey: o.OrderKey,
	}
	if !o.RunAt.IsZero() {
		item.RunAt = o.RunAt.UnixMilli()
	}
	if o.IdempotencyKey != "" {
		sum := sha256.Sum256([]byte(o.IdempotencyKey))
		item.IdemHash = hex.EncodeToString(sum[:])
		item.Fingerprint = fingerprint(o.Queue, taskType, data, prio, o.MaxAttempts, o.Timeout, o.Delay, item.RunAt, fingerprintExtra(&o))
	}
	return q, item, nil
}

// fingerprintExtra is the part of a request's fingerprint newer options
// make: "" without them, so that the fingerprints of before stand.
func fingerprintExtra(o *EnqueueOpts) string {
	x := o.Group
	if o.LimitKey != "" {
		x += "\x00" + o.LimitKey
	}
	if o.OrderKey != "" {
		x += "\x00o:" + o.OrderKey
	}
	return x
}

// fingerprint identifies a request for idempotent replay.
func fingerprint(queue, taskType string, payload []byte, prio, maxAtt int, timeout, delay time.Duration, runAt int64, group string) string {
	h := sha256.New()
	parts := []string{queue, taskType, string(payload), strconv.Itoa(prio), strconv.Itoa(maxAtt),
		timeout.String(), delay.String(), strconv.FormatInt(runAt, 10)}
	if group != "" { // those of before groups keep their fingerprints
		parts = append(parts, group)
	}
	for _, s := range parts {
		h.Write([]byte(strconv.Itoa(len(s))))
		h.Write([]byte{':'})
		h.Write([]byte(s))
	}
	return hex.EncodeToString(h.Sum(nil))[:32]
}

func (c *engine) enqueueResult(ctx context.Context, q *queueState, item store.EnqueueItem, res store.EnqueueResult, opts *EnqueueOpts) (*EnqueueResult, error) {
	key := ""
	if opts != nil {
		key = opts.IdempotencyKey
	}
	switch res.Code {
	case store.Created:
		c.obs.submitted(TaskRef{ID: res.ID, Queue: q.name, Type: item.Type})
		return &EnqueueResult{Task: taskOf(&store.Record{
			ID: res.ID, Queue: q.name, Type: item.Type, Payload: item.Payload, Priority: item.Priority,
			Status: res.Status, MaxAttempts: item.MaxAttempts, Timeout: item.Timeout, Created: res.Created, Due: res.Due,
			Group: item.Group, GroupWaiting: res.GroupWaiting, LimitKey: item.LimitKey,
			OrderKey: item.OrderKey, OrderWaiting: res.OrderWaiting, Trace: item.Trace,
		})}, nil
	case store.Replay:
		t, err := c.get(ctx, res.ID)
		if errors.Is(err, ErrNotFound) { // the original expired; its key is still remembered
			t := taskOf(&store.Record{ID: res.ID, Queue: q.name})
			t.Duplicate = true
			return &EnqueueResult{Task: t, Duplicate: true}, nil
		}
		if err != nil {
			return nil, err
		}
		t.Duplicate = true
		return &EnqueueResult{Task: t, Duplicate: true}, nil
	case store.Conflict:
		return nil, &IdempotencyConflictError{Key: key, TaskID: res.ID}
	case store.Full:
		return nil, &QueueFullError{Queue: q.name, MaxDepth: c.maxDepth(q.name), RetryAfter: time.Second}
	}
	return nil, errors.New("dtq: unexpected enqueue result")
}

func checkType(t string) error {
	if t == "" || len(t) > MaxTypeLen || !utf8.ValidString(t) {
		return invalid("task_type", "must be 1-%d bytes of UTF-8 (got %d bytes)", MaxTypeLen, len(t))
	}
	for _, r := range t {
		if r < 0x20 || r == 0x7f {
			return invalid("task_type", "must not contain control characters")
		}
	}
	return nil
}

func marshalPayload(payload any) ([]byte, error) {
	var data []byte
	switch p := payload.(type) {
	case json.RawMessage:
		data = p
	case []byte:
		data = p
	default:
		b, err := json.Marshal(payload)
		if err != nil {
			return nil, invalid("payload", "cannot be encoded as JSON: %v", err)
		}
		return b, nil
	}
	if len(data) == 0 {
		return []byte("null"), nil
	}
	if !json.Valid(data) {
		return nil, invalid("payload", "is not valid JSON")
	}
	return data, nil
}

func roundUpMs(d time.Duration) time.Duration {
	if d <= 0 {
		return 0
	}
	return (d + time.Millisecond - 1).Truncate(time.Millisecond)
}

// publishEnqueued publishes the QUEUED or SCHEDULED events of the created
// items of one batch.
func (c *engine) publishEnqueued(q *queueState, items []store.EnqueueItem, res []store.EnqueueResult) {
	var lines []string
	for i, r := range res {
		if r.Code != store.Created {
			continue
		}
		it := items[i]
		lines = append(lines, eventLine(&Task{ID: r.ID, Type: it.Type, Priority: it.Priority}, Status(r.Status), ""))
	}
	c.publish(q.store.Keys().Events(), lines)
}
