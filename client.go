package dtq

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/dtq-dev/dtq/internal/batch"
	"github.com/dtq-dev/dtq/internal/keys"
	"github.com/dtq-dev/dtq/internal/taskid"
	"github.com/dtq-dev/dtq/internal/taskscript"
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
	// expires. DEAD tasks in the dead-letter stream do not expire.
	// Defaults to 24h.
	Retention time.Duration

	// DeadLetterMaxLen caps each queue's dead-letter stream (approximately;
	// the oldest entries go first). Defaults to 10,000.
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

	// Observer receives the task events of the Client and of the Workers
	// built from it, for metrics. Defaults to none.
	Observer Observer
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
		if err := keys.CheckName("queue", q); err != nil {
			return cfg, invalid("Config.QueueMaxDepth", "%v", err)
		}
		if d < 0 {
			return cfg, invalid("Config.QueueMaxDepth", "of %q must not be negative (got %d)", q, d)
		}
	}
	for _, f := range []struct {
		name string
		v    *int64
	}{{"Config.DeadLetterMaxLen", &cfg.DeadLetterMaxLen}, {"Config.AuditMaxLen", &cfg.AuditMaxLen}} {
		switch {
		case *f.v < 0:
			return cfg, invalid(f.name, "must not be negative (got %d)", *f.v)
		case *f.v == 0:
			*f.v = 10_000
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

// Client submits, inspects and administers tasks. It is safe for concurrent
// use and holds no goroutines of its own. Build it with NewClient.
type Client struct {
	redis rueidis.Client
	cfg   Config
	log   *slog.Logger

	mu     sync.Mutex
	queues map[string]*queueState
}

// queueState is the per-queue state of a Client: its keys and its enqueue
// batcher (concurrent Enqueue calls share one script call).
type queueState struct {
	name       string
	keys       keys.Tasks
	enqueues   *batch.Batcher[taskscript.EnqueueItem, taskscript.EnqueueResult]
	registered bool // the queue is in the namespace's queue set
}

// NewClient returns a Client on redis. It does no I/O.
func NewClient(redis rueidis.Client, cfg *Config) (*Client, error) {
	if redis == nil {
		return nil, invalid("redis", "must not be nil")
	}
	c, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	return &Client{redis: redis, cfg: c, log: c.Logger.With("component", "dtq"), queues: map[string]*queueState{}}, nil
}

// queue returns the state of queue name (which must be valid).
func (c *Client) queue(name string) *queueState {
	c.mu.Lock()
	defer c.mu.Unlock()
	q := c.queues[name]
	if q == nil {
		q = &queueState{name: name, keys: keys.NewTasks(c.cfg.Namespace, name)}
		cfg := taskscript.EnqueueConfig{MaxDepth: c.maxDepth(name), IdemWindow: c.cfg.IdempotencyWindow, Durability: c.durability()}
		q.enqueues = batch.New(func(ctx context.Context, items []taskscript.EnqueueItem) ([]taskscript.EnqueueResult, error) {
			res, err := enqueue(ctx, c.redis, q.keys, cfg, items)
			if err != nil {
				c.redisError("enqueue", err)
				return nil, err
			}
			c.publishEnqueued(q, items, res) // one PUBLISH for the batch
			return res, nil
		}, 256, 1, 10*time.Second)
		c.queues[name] = q
	}
	return q
}

func (c *Client) maxDepth(queue string) int64 {
	if d, ok := c.cfg.QueueMaxDepth[queue]; ok {
		return d
	}
	return c.cfg.MaxDepth
}

// register adds queue to the namespace's queue set, once per Client.
func (c *Client) register(ctx context.Context, q *queueState) error {
	c.mu.Lock()
	done := q.registered
	c.mu.Unlock()
	if done {
		return nil
	}
	if err := c.redis.Do(ctx, c.redis.B().Sadd().Key(keys.Queues(c.cfg.Namespace)).Member(q.name).Build()).Error(); err != nil {
		return err
	}
	c.mu.Lock()
	q.registered = true
	c.mu.Unlock()
	return nil
}

// Get returns the task with id, from its id alone (the id names its queue).
func (c *Client) Get(ctx context.Context, id string) (*Task, error) {
	queue, ulid, err := taskid.Parse(id)
	if err != nil {
		return nil, ErrNotFound
	}
	k := keys.NewTasks(c.cfg.Namespace, queue)
	h, err := c.redis.Do(ctx, c.redis.B().Hgetall().Key(k.Task(ulid)).Build()).AsStrMap()
	if err != nil {
		return nil, err
	}
	if len(h) == 0 {
		return nil, ErrNotFound
	}
	return taskFromHash(id, queue, h), nil
}

// enqueue creates items: those that need no check inside Redis (no
// idempotency key, delay or depth bound) with plain commands in one
// transaction, the others with enqueue.lua; both in one round trip.
func enqueue(ctx context.Context, r rueidis.Client, k keys.Tasks, cfg taskscript.EnqueueConfig, items []taskscript.EnqueueItem) ([]taskscript.EnqueueResult, error) {
	var plain, scripted []int
	for i, it := range items {
		if cfg.MaxDepth == 0 && it.IdemHash == "" && it.Delay == 0 && it.RunAt == 0 {
			plain = append(plain, i)
		} else {
			scripted = append(scripted, i)
		}
	}
	pick := func(idx []int) []taskscript.EnqueueItem {
		out := make([]taskscript.EnqueueItem, len(idx))
		for j, i := range idx {
			out[j] = items[i]
		}
		return out
	}
	out := make([]taskscript.EnqueueResult, len(items))
	var wg sync.WaitGroup
	var perr, serr error
	if len(plain) > 0 {
		wg.Go(func() {
			var res []taskscript.EnqueueResult
			if res, perr = taskscript.EnqueuePlain(ctx, r, k, cfg.Durability, pick(plain)); perr == nil {
				for j, i := range plain {
					out[i] = res[j]
				}
			}
		})
	}
	if len(scripted) > 0 {
		wg.Go(func() {
			var res []taskscript.EnqueueResult
			if res, serr = taskscript.Enqueue(ctx, r, k, cfg, pick(scripted)); serr == nil {
				for j, i := range scripted {
					out[i] = res[j]
				}
			}
		})
	}
	wg.Wait()
	if err := errors.Join(perr, serr); err != nil {
		var nre *taskscript.NotReplicatedError
		if errors.As(err, &nre) {
			return nil, fmt.Errorf("%w: %d of %d replicas within %v", ErrNotReplicated, nre.Got, nre.Want, nre.Timeout)
		}
		return nil, err
	}
	return out, nil
}

// durability is the engine's Durability for writes that must survive a
// master's loss.
func (c *Client) durability() taskscript.Durability {
	return taskscript.Durability{Replicas: c.cfg.DurableReplicas, Timeout: c.cfg.DurableTimeout}
}
