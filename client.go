package dtq

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/dtq-dev/dtq/conn"
	"github.com/dtq-dev/dtq/internal/batch"
	"github.com/dtq-dev/dtq/internal/keys"
	"github.com/dtq-dev/dtq/internal/redisconn"
	"github.com/dtq-dev/dtq/internal/store"
	"github.com/redis/rueidis"
)

// Config configures a Client and the Workers built from it. The zero value
// of every field means its default.
type Config struct {
	// Namespace prefixes every Redis key. Defaults to "dtq".
	Namespace string

	// MaxPayloadBytes is the largest task payload Enqueue accepts.
	// Defaults to 1 MiB.
	MaxPayloadBytes int

	// MaxDepth bounds each queue's tasks that are queued, scheduled or
	// running; Enqueue beyond it returns a QueueFullError. QueueMaxDepth
	// overrides it per queue. Defaults to 0: unbounded.
	MaxDepth      int64
	QueueMaxDepth map[string]int64

	// IdempotencyWindow is how long an idempotency key is remembered: from
	// the task's creation, and again from when it finishes. Defaults to 24h.
	IdempotencyWindow time.Duration

	// Retention is how long a finished task (SUCCEEDED, CANCELLED, or a
	// DEAD task discarded from the dead-letter stream) is kept before it
	// expires. DEAD tasks in the dead-letter stream do not expire. Set it to
	// RetainNone to delete a task as it succeeds (asynq's default; its
	// idempotency record still answers for its window). Defaults to 24h.
	Retention time.Duration

	// MaxFinished caps the finished tasks (SUCCEEDED, CANCELLED, discarded
	// DEAD) each queue keeps: beyond it the oldest are deleted before their
	// retention ends, so that their memory is bounded whatever the rate.
	// Defaults to 100,000.
	MaxFinished int64

	// DeadLetterMaxLen caps each queue's dead-letter stream: beyond it the
	// oldest dead letters are deleted, their tasks with them. Defaults to
	// 10,000.
	DeadLetterMaxLen int64

	// AuditMaxLen caps the audit stream of admin actions (approximately).
	// Defaults to 10,000.
	AuditMaxLen int64

	// DurableReplicas makes a submit and a task's outcome count as done
	// only once this many replicas have them (Redis WAIT, up to
	// DurableTimeout); a submit they did not reach in time fails with
	// ErrNotReplicated (submit it again with the same idempotency key). The
	// task is not undone: it survives unless the master fails before
	// replicating it. Defaults to 0: done once the master has it.
	DurableReplicas int
	// DurableTimeout bounds the wait for replicas. Defaults to 1s.
	DurableTimeout time.Duration

	// Logger receives the library's logs. Defaults to discarding them.
	Logger *slog.Logger

	// TracerProvider receives the spans of submissions and executions (see
	// tracing.go). Defaults to OpenTelemetry's global provider, a no-op
	// unless the program sets one.
	TracerProvider trace.TracerProvider

	// Observer receives the task events of the Client and of the Workers
	// built from it, for metrics. Defaults to none.
	Observer Observer

	// DisableHistory stops this process from adding its task events to the
	// stored history (Admin.History): counts per queue, task type and
	// minute, added to Redis every few seconds. Defaults to false.
	DisableHistory bool
}

func (c *Config) withDefaults() (Config, error) {
	var cfg Config
	if c != nil {
		cfg = *c
	}
	if cfg.Namespace == "" {
		cfg.Namespace = "dtq"
	}
	if err := keys.CheckNamespace(cfg.Namespace); err != nil {
		return cfg, invalid("Config.Namespace", "%v", err)
	}
	type dflt struct {
		field string
		v     *time.Duration
		def   time.Duration
	}
	for _, d := range []dflt{
		{"Config.IdempotencyWindow", &cfg.IdempotencyWindow, 24 * time.Hour},
		{"Config.Retention", &cfg.Retention, 24 * time.Hour},
	} {
		switch {
		case d.v == &cfg.Retention && *d.v == RetainNone:
		case *d.v < 0:
			return cfg, invalid(d.field, "must not be negative (got %v)", *d.v)
		case *d.v == 0:
			*d.v = d.def
		case *d.v < time.Millisecond:
			return cfg, invalid(d.field, "must be at least 1ms (got %v)", *d.v)
		}
	}
	switch {
	case cfg.MaxPayloadBytes < 0:
		return cfg, invalid("Config.MaxPayloadBytes", "must not be negative (got %d)", cfg.MaxPayloadBytes)
	case cfg.MaxPayloadBytes == 0:
		cfg.MaxPayloadBytes = 1 << 20
	}
	if cfg.MaxDepth < 0 {
		return cfg, invalid("Config.MaxDepth", "must not be negative (got %d)", cfg.MaxDepth)
	}
	for q, d := range cfg.QueueMaxDepth {
		if err := checkQueue("Config.QueueMaxDepth", q); err != nil {
			return cfg, err
		}
		if d < 0 {
			return cfg, invalid("Config.QueueMaxDepth", "of %q must not be negative (got %d)", q, d)
		}
	}
	for _, f := range []struct {
		name string
		v    *int64
		def  int64
	}{{"Config.DeadLetterMaxLen", &cfg.DeadLetterMaxLen, 10_000}, {"Config.AuditMaxLen", &cfg.AuditMaxLen, 10_000},
		{"Config.MaxFinished", &cfg.MaxFinished, 100_000}} {
		switch {
		case *f.v < 0:
			return cfg, invalid(f.name, "must not be negative (got %d)", *f.v)
		case *f.v == 0:
			*f.v = f.def
		}
	}
	switch {
	case cfg.DurableReplicas < 0:
		return cfg, invalid("Config.DurableReplicas", "must not be negative (got %d)", cfg.DurableReplicas)
	case cfg.DurableTimeout < 0:
		return cfg, invalid("Config.DurableTimeout", "must not be negative (got %v)", cfg.DurableTimeout)
	case cfg.DurableTimeout == 0:
		cfg.DurableTimeout = time.Second
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	return cfg, nil
}

// RetainNone, as Config.Retention, deletes a task as it succeeds: nothing
// of it stays but its idempotency record, for that record's window.
// Cancelled tasks and discarded dead letters are then kept for
// RetainNoneOthers, so that the answer to a cancel can still show them.
const (
	RetainNone       time.Duration = -1
	RetainNoneOthers               = time.Minute
)

// retentions returns how long succeeded tasks (0: not at all) and other
// finished tasks are kept.
func (c *Config) retentions() (succeeded, others time.Duration) {
	if c.Retention == RetainNone {
		return 0, RetainNoneOthers
	}
	return c.Retention, c.Retention
}

// keepOthers is how long finished tasks other than succeeded ones are kept.
func (c *engine) keepOthers() time.Duration {
	_, others := c.cfg.retentions()
	return others
}

// Client submits tasks and follows them: enqueue, get, list, cancel,
// events and workflows. It is safe for concurrent use and holds no
// goroutines of its own beyond short-lived ones publishing events. Build it
// with NewClient; an operator's Admin and a LeaseServer for HTTP workers
// are built on it and share its connection.
type Client struct{ *engine }

// Admin is the operator's face of a namespace: dead letters, redrive,
// pause, stats, queues, workers, audit, deletion, limits, group weights and
// schedules. Build it with NewAdmin; it is safe for concurrent use.
type Admin struct{ *engine }

// NewAdmin returns the Admin of c's namespace, on c's connection.
func NewAdmin(c *Client) *Admin { return &Admin{c.engine} }

// engine is what a Client, an Admin, a LeaseServer and a Worker of one
// Client share: the store, the configuration and the per-queue batchers.
type engine struct {
	store *store.Store
	cfg   Config
	log   *slog.Logger
	obs   observer
	pub   publisher
	// history counts this process's task events for the stored history
	// (nil when Config.DisableHistory); obs reports to it.
	history *historyFold

	mu     sync.Mutex
	queues map[string]*queueState
	layout bool // the namespace's layout was checked

	tracerOnce sync.Once
	tr         trace.Tracer // see tracer
}

// queueState is the per-queue state of a Client: its store and its batcher
// of checked submissions (concurrent ones share one script call).
type queueState struct {
	name     string
	store    *store.Queue
	scripted *batch.Batcher[store.EnqueueItem, store.EnqueueResult]
	// plain batches the plain submissions (one XADD each): up to 256 in
	// one pipeline, at most plainInFlight pipelines out at once.
	plain      *batch.Batcher[store.EnqueueItem, store.EnqueueResult]
	registered time.Time // when this Client last put the queue in the namespace's queue set
}

// plainInFlight is how many batches of plain submissions of a queue may be
// out at once. Two rather than any: each pipeline then carries the calls
// that arrived while the other was out, so Redis reads many XADDs at once
// (peerbench's enqueue, 2 vCPU, alternating runs: at c=50 57k -> 75-85k
// tasks/s and 11.1 -> 4.2-4.6 µs of Redis CPU per task, at c=10 +15 %), and
// a lone caller runs its own batch at once (batch.Batcher's idle path).
const plainInFlight = 2

// reregisterAfter is how long a Client trusts its registration of a queue:
// after it, its next submission registers the queue again (a cheap SADD),
// so a queue another process deleted while this one still submits to it is
// listed again.
const reregisterAfter = time.Minute

// Redis is the connection NewClient takes: a *conn.Redis from Connect, or
// a client of github.com/redis/rueidis that the caller built and owns
// (then set DisableCache, as Connect does). Any other value is an
// ErrInvalid.
type Redis interface{ Close() }

// NewClient returns a Client on the connection redis (Connect). It does no
// I/O.
func NewClient(redis Redis, cfg *Config) (*Client, error) {
	var r rueidis.Client
	switch v := redis.(type) {
	case *conn.Redis:
		r = redisconn.Client(v)
	case rueidis.Client:
		r = v
	}
	if r == nil {
		return nil, invalid("redis", "must be a connection from dtq.Connect (or a rueidis client)")
	}
	c, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	e := &engine{store: store.New(r, c.Namespace), cfg: c, log: c.Logger.With("component", "dtq"),
		queues: map[string]*queueState{}, pub: publisher{linger: eventLinger}}
	if !c.DisableHistory {
		e.history = newHistoryFold(e.store, e.log)
	}
	e.obs = newObserver(c.Observer, e.history)
	return &Client{e}, nil
}

// queue returns the state of queue name (which must be valid).
func (c *engine) queue(name string) *queueState {
	c.mu.Lock()
	defer c.mu.Unlock()
	q := c.queues[name]
	if q == nil {
		q = &queueState{name: name, store: c.store.Queue(name)}
		q.scripted = batch.New(func(ctx context.Context, items []store.EnqueueItem) ([]store.EnqueueResult, error) {
			return c.enqueueBatch(ctx, q, items)
		}, 256, 4, 10*time.Second)
		q.plain = batch.New(func(ctx context.Context, items []store.EnqueueItem) ([]store.EnqueueResult, error) {
			return c.enqueueBatch(ctx, q, items)
		}, 256, plainInFlight, 10*time.Second)
		c.queues[name] = q
	}
	return q
}

func (c *engine) enqueueConfig(queue string) store.EnqueueConfig {
	return store.EnqueueConfig{MaxDepth: c.maxDepth(queue), IdemWindow: c.cfg.IdempotencyWindow, Durability: c.durability()}
}

// enqueueBatch creates items of q in one round trip and publishes their
// events.
func (c *engine) enqueueBatch(ctx context.Context, q *queueState, items []store.EnqueueItem) ([]store.EnqueueResult, error) {
	cfg := c.enqueueConfig(q.name)
	if cfg.CarriesEvents(items) {
		cfg.Publish = c.takeEvents() // they ride along with its XADDs
	}
	res, err := q.store.Enqueue(ctx, cfg, items)
	if err != nil {
		c.redisError("enqueue", err)
		var nre *store.NotReplicatedError
		if errors.As(err, &nre) {
			return nil, fmt.Errorf("%w: %d of %d replicas within %v", ErrNotReplicated, nre.Got, nre.Want, nre.Timeout)
		}
		return nil, err
	}
	c.publishEnqueued(q, items, res)
	return res, nil
}

func (c *engine) maxDepth(queue string) int64 {
	if d, ok := c.cfg.QueueMaxDepth[queue]; ok {
		return d
	}
	return c.cfg.MaxDepth
}

// CheckLayout makes sure the namespace's data in Redis is of the layout
// this version of dtq reads and writes; it returns a *LayoutError naming
// both versions otherwise. Workers check it when they start, and a Client
// before its first submission; the dtq binary checks it at start.
func (a *Admin) CheckLayout(ctx context.Context) error { return a.checkLayout(ctx) }

func (c *engine) checkLayout(ctx context.Context) error {
	c.mu.Lock()
	done := c.layout
	c.mu.Unlock()
	if done {
		return nil
	}
	if err := c.store.CheckLayout(ctx); err != nil {
		var le *store.LayoutError
		if errors.As(err, &le) {
			return &LayoutError{Namespace: le.Namespace, Found: le.Found, Want: store.Layout}
		}
		return err
	}
	c.mu.Lock()
	c.layout = true
	c.mu.Unlock()
	return nil
}

// register adds queue to the namespace's queue set, once per Client and
// reregisterAfter, after checking the namespace's layout.
func (c *engine) register(ctx context.Context, q *queueState) error {
	c.mu.Lock()
	at := q.registered
	c.mu.Unlock()
	if !at.IsZero() && time.Since(at) < reregisterAfter {
		return nil
	}
	if err := c.checkLayout(ctx); err != nil {
		return err
	}
	if err := c.store.RegisterQueue(ctx, q.name); err != nil {
		return err
	}
	c.mu.Lock()
	q.registered = time.Now()
	c.mu.Unlock()
	return nil
}

// Get returns the task with id, from its id alone (the id names its
// queue), with its durable steps (Task.Steps), in one round trip.
func (c *Client) Get(ctx context.Context, id string) (*Task, error) {
	r, err := c.store.GetWithSteps(ctx, id)
	if err != nil {
		return nil, err
	}
	if r == nil {
		return nil, ErrNotFound
	}
	return taskOf(r), nil
}

func (c *engine) get(ctx context.Context, id string) (*Task, error) {
	r, err := c.store.Get(ctx, id)
	if err != nil {
		return nil, err
	}
	if r == nil {
		return nil, ErrNotFound
	}
	return taskOf(r), nil
}

// durability is the engine's Durability for writes that must survive a
// master's loss.
func (c *engine) durability() store.Durability {
	return store.Durability{Replicas: c.cfg.DurableReplicas, Timeout: c.cfg.DurableTimeout}
}

// Namespace returns the prefix of the client's Redis keys
// (Config.Namespace).
func (c *Client) Namespace() string { return c.cfg.Namespace }
