package main

import (
	"context"
	"crypto/rand"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/dtq-dev/dtq"
	"github.com/dtq-dev/dtq/conn"
	"github.com/dtq-dev/dtq/internal/pgtest"
	"github.com/dtq-dev/dtq/internal/redistest"
	"github.com/dtq-dev/dtq/outbox"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// backends are the servers of a run: a redis-server and a PostgreSQL.
type backends struct {
	redis *redistest.Server
	pg    *pgtest.Server
	conn  *conn.Redis
}

func startBackends() (*backends, error) {
	r, err := redistest.StartServer(nil)
	if err != nil {
		return nil, err
	}
	pg, err := pgtest.StartServer()
	if err != nil {
		r.Close()
		return nil, err
	}
	c, err := dtq.Connect(context.Background(), "redis://"+r.Addr)
	if err != nil {
		r.Close()
		pg.Close()
		return nil, err
	}
	return &backends{redis: r, pg: pg, conn: c}, nil
}

func (b *backends) close() {
	b.conn.Close()
	b.redis.Close()
	b.pg.Close()
}

// database creates a fresh database with the outbox's tables and returns
// its URL and a pool on it.
func (b *backends) database(ctx context.Context) (string, *pgxpool.Pool, error) {
	name := "bench_" + strings.ToLower(rand.Text()[:10])
	admin, err := pgx.Connect(ctx, b.pg.URL("postgres"))
	if err != nil {
		return "", nil, err
	}
	defer admin.Close(ctx)
	if _, err := admin.Exec(ctx, "CREATE DATABASE "+name); err != nil {
		return "", nil, err
	}
	url := b.pg.URL(name)
	pool, err := pgxpool.New(ctx, url)
	if err != nil {
		return "", nil, err
	}
	if err := outbox.Migrate(ctx, pool); err != nil {
		pool.Close()
		return "", nil, err
	}
	return url, pool, nil
}

// submitTimes is a dtq observer that notes when each task's submission
// returned in the relay.
type submitTimes struct {
	dtq.NopTaskObserver
	mu sync.Mutex
	at map[string]time.Time
}

func (s *submitTimes) OnSubmitted(t dtq.TaskRef) {
	now := time.Now()
	s.mu.Lock()
	s.at[t.ID] = now
	s.mu.Unlock()
}

// client returns a dtq client in a fresh namespace, observed by obs.
func (b *backends) client(obs dtq.Observer) (*dtq.Client, error) {
	return dtq.NewClient(b.conn, &dtq.Config{Namespace: "bench" + rand.Text()[:8], Observer: obs})
}

// waitEmpty polls until the outbox table is empty.
func waitEmpty(ctx context.Context, pool *pgxpool.Pool, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		var n int
		if err := pool.QueryRow(ctx, "SELECT count(*) FROM "+outbox.Table).Scan(&n); err != nil {
			return err
		}
		if n == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%d rows still waiting after %v", n, timeout)
		}
		time.Sleep(time.Millisecond)
	}
}
