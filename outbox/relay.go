package outbox

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dtq-dev/dtq"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Defaults of RelayConfig.
const (
	DefaultBatchSize    = 500
	DefaultPollInterval = 5 * time.Second
	MaxBatchSize        = 10000
)

// RelayConfig configures a Relay. A nil *RelayConfig means all defaults.
type RelayConfig struct {
	// BatchSize is the most rows the relay reads and submits at once (1 to
	// 10000). Defaults to 500.
	BatchSize int

	// PollInterval is how often the relay reads the table when no
	// notification woke it (the slow poll, beside LISTEN/NOTIFY), and how
	// long a standby relay waits between checks of its connection.
	// Defaults to 5s.
	PollInterval time.Duration

	// Logger receives the relay's logs (component=outbox). Defaults to
	// none.
	Logger *slog.Logger
}

// Relay moves committed outbox rows into dtq: each row becomes the task it
// describes, submitted with an idempotency key made of the outbox's source
// id and the row's id, and the row is deleted once dtq accepted it (or
// marked failed when dtq refuses it for good). Several relays may run
// against one database: one is active (it holds a session advisory lock),
// the others wait for the lock and take over when its session ends. Build
// it with NewRelay; Start and Stop it.
type Relay struct {
	client *dtq.Client
	pgcfg  *pgx.ConnConfig
	pool   *pgxpool.Pool // Migrate and Stats
	cfg    RelayConfig
	log    *slog.Logger

	active    atomic.Bool
	relayed   atomic.Uint64
	failed    atomic.Uint64
	errors    atomic.Uint64
	afterSend func() // tests: called after dtq accepted a batch, before its rows are deleted

	mu     sync.Mutex
	cancel context.CancelFunc
	done   chan struct{}
}

// NewRelay returns a relay from the outbox in the PostgreSQL database at
// url (postgres://… or a key=value connection string) to client's dtq. It
// connects to nothing until Start.
func NewRelay(client *dtq.Client, url string, cfg *RelayConfig) (*Relay, error) {
	if client == nil {
		return nil, invalid("client", "must not be nil")
	}
	var c RelayConfig
	if cfg != nil {
		c = *cfg
	}
	switch {
	case c.BatchSize < 0 || c.BatchSize > MaxBatchSize:
		return nil, invalid("outbox.RelayConfig.BatchSize", "must be from 1 to %d (got %d)", MaxBatchSize, c.BatchSize)
	case c.BatchSize == 0:
		c.BatchSize = DefaultBatchSize
	}
	switch {
	case c.PollInterval < 0:
		return nil, invalid("outbox.RelayConfig.PollInterval", "must not be negative (got %v)", c.PollInterval)
	case c.PollInterval == 0:
		c.PollInterval = DefaultPollInterval
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	pgcfg, err := pgx.ParseConfig(url)
	if err != nil {
		return nil, invalid("outbox", "is not a PostgreSQL connection URL: %v", err)
	}
	// The relay's session holds the lock: a server that lost sight of it
	// (a network partition) should end it, and free the lock for a standby,
	// within about a minute, not the operating system's two hours.
	for name, v := range map[string]string{"tcp_keepalives_idle": "30", "tcp_keepalives_interval": "10", "tcp_keepalives_count": "3"} {
		if _, set := pgcfg.RuntimeParams[name]; !set {
			pgcfg.RuntimeParams[name] = v
		}
	}
	poolcfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, invalid("outbox", "is not a PostgreSQL connection URL: %v", err)
	}
	poolcfg.MaxConns = 2
	pool, err := pgxpool.NewWithConfig(context.Background(), poolcfg) // connects lazily
	if err != nil {
		return nil, fmt.Errorf("outbox: %w", err)
	}
	return &Relay{client: client, pgcfg: pgcfg, pool: pool, cfg: c, log: c.Logger.With("component", "outbox")}, nil
}

// Start migrates the outbox's tables (Migrate) and starts relaying in the
// background: as the active relay, or as a standby until the active one's
// session ends. It returns once the tables exist; a database that cannot
// be reached then is an error. Later outages of PostgreSQL or Redis are
// retried with backoff for as long as the relay runs: no row is dropped.
func (r *Relay) Start(ctx context.Context) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.done != nil {
		return errors.New("outbox: relay already started")
	}
	if err := Migrate(ctx, r.pool); err != nil {
		return err
	}
	runCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	r.cancel, r.done = cancel, make(chan struct{})
	go func() {
		defer close(r.done)
		r.run(runCtx)
	}()
	return nil
}

// Stop stops relaying and waits for the relay to end, up to ctx. A batch
// cut off by the stop (submitted, its rows not yet deleted) is submitted
// again by the next relay, which creates nothing new: its tasks are known
// by their rows' ids. The relay cannot be started again.
func (r *Relay) Stop(ctx context.Context) error {
	r.mu.Lock()
	cancel, done := r.cancel, r.done
	r.mu.Unlock()
	if done == nil {
		r.pool.Close()
		return nil
	}
	cancel()
	select {
	case <-done:
		r.pool.Close()
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Stats is what Relay.Stats reports.
type Stats struct {
	// Active is whether this relay holds the lock (it relays; the others
	// wait).
	Active bool
	// Waiting counts the committed rows not yet relayed (not failed).
	Waiting int64
	// Failed counts the rows dtq refused for good (a bad row: their error
	// column says why); they stay in the table, and are not retried until
	// their failed_at is cleared.
	Failed int64
	// Lag is the age of the oldest waiting row (since its insert), zero
	// when none waits.
	Lag time.Duration
	// Relayed counts the rows this relay submitted and deleted since it
	// started; FailedByRelay those it marked failed; Errors the failed
	// attempts (PostgreSQL or Redis unreachable) it retried.
	Relayed, FailedByRelay, Errors uint64
}

const statsQuery = `SELECT count(*) FILTER (WHERE failed_at IS NULL), count(*) FILTER (WHERE failed_at IS NOT NULL),
	coalesce(extract(epoch FROM clock_timestamp() - min(created_at) FILTER (WHERE failed_at IS NULL)), 0)::float8
FROM ` + Table

// Stats reads the outbox's waiting and failed rows and the lag (one query,
// a count over the table), and this relay's counters.
func (r *Relay) Stats(ctx context.Context) (Stats, error) {
	s := Stats{Active: r.active.Load(), Relayed: r.relayed.Load(), FailedByRelay: r.failed.Load(), Errors: r.errors.Load()}
	var lag float64
	if err := r.pool.QueryRow(ctx, statsQuery).Scan(&s.Waiting, &s.Failed, &lag); err != nil {
		return s, fmt.Errorf("outbox: stats: %w", err)
	}
	s.Lag = time.Duration(lag * float64(time.Second))
	return s, nil
}
