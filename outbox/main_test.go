package outbox_test

import (
	"context"
	"encoding/json"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/dtq-dev/dtq"
	"github.com/dtq-dev/dtq/internal/leakcheck"
	"github.com/dtq-dev/dtq/internal/pgtest"
	"github.com/dtq-dev/dtq/internal/redistest"
	"github.com/dtq-dev/dtq/outbox"
	"github.com/jackc/pgx/v5/pgxpool"
)

func TestMain(m *testing.M) {
	if os.Getenv(childRelayEnv) != "" {
		os.Exit(runChildRelay())
	}
	code := redistest.Main(m)
	pgtest.StopShared()
	os.Exit(leakcheck.After(code))
}

// env is one test's outbox: a database of its own on the shared
// PostgreSQL, and a dtq client in a fresh namespace.
type env struct {
	t      *testing.T
	url    string
	pool   *pgxpool.Pool
	redis  string // Redis URL
	ns     string
	client *dtq.Client
}

func newEnv(t *testing.T, redisURL string) *env {
	t.Helper()
	ctx := context.Background()
	url := pgtest.Database(t, pgtest.Shared(t))
	pool, err := pgxpool.New(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	if err := outbox.Migrate(ctx, pool); err != nil {
		t.Fatal(err)
	}
	if redisURL == "" {
		redisURL = "redis://" + redistest.Shared(t).Addr
	}
	e := &env{t: t, url: url, pool: pool, redis: redisURL, ns: redistest.Namespace(t)}
	e.client = e.newClient(nil)
	return e
}

// newClient connects a dtq client of the test's namespace.
func (e *env) newClient(cfg *dtq.Config) *dtq.Client {
	e.t.Helper()
	r, err := dtq.Connect(context.Background(), e.redis)
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(r.Close)
	var c dtq.Config
	if cfg != nil {
		c = *cfg
	}
	c.Namespace = e.ns
	client, err := dtq.NewClient(r, &c)
	if err != nil {
		e.t.Fatal(err)
	}
	return client
}

// startRelay starts a relay of the test's outbox, stopped at cleanup.
func (e *env) startRelay(client *dtq.Client, cfg *outbox.RelayConfig) *outbox.Relay {
	e.t.Helper()
	if client == nil {
		client = e.client
	}
	r, err := outbox.NewRelay(client, e.url, cfg)
	if err != nil {
		e.t.Fatal(err)
	}
	if err := r.Start(context.Background()); err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := r.Stop(ctx); err != nil {
			e.t.Errorf("stop relay: %v", err)
		}
	})
	return r
}

// item is the payload of the tests' tasks: n names the enqueue.
type item struct {
	N int `json:"n"`
}

// enqueueTx enqueues items ns in one transaction and commits it, or rolls
// it back when rollback is set.
func (e *env) enqueueTx(ns []int, rollback bool) error {
	ctx := context.Background()
	tx, err := e.pool.Begin(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback(ctx)
	for _, n := range ns {
		if _, err := outbox.Enqueue(ctx, tx, "work", item{N: n}, &dtq.EnqueueOpts{Queue: "outbox"}); err != nil {
			return err
		}
	}
	if rollback {
		return tx.Rollback(ctx)
	}
	return tx.Commit(ctx)
}

// waiting counts the rows in the outbox table.
func (e *env) waiting() int {
	e.t.Helper()
	var n int
	if err := e.pool.QueryRow(context.Background(), "SELECT count(*) FROM "+outbox.Table).Scan(&n); err != nil {
		e.t.Fatal(err)
	}
	return n
}

// tasks lists the tasks of queue "outbox": how many there are of each n.
func (e *env) tasks() map[int]int {
	e.t.Helper()
	got := map[int]int{}
	cursor := ""
	for {
		page, err := e.client.List(context.Background(), dtq.ListOpts{Queue: "outbox", Limit: 500, Cursor: cursor})
		if err != nil {
			e.t.Fatal(err)
		}
		for _, task := range page.Tasks {
			var it item
			if err := json.Unmarshal(task.Payload, &it); err != nil {
				e.t.Fatalf("task %s: payload %s: %v", task.ID, task.Payload, err)
			}
			got[it.N]++
		}
		if page.Next == "" {
			return got
		}
		cursor = page.Next
	}
}

// waitFor polls cond until it holds, failing the test after a minute and a
// half (generous: the condition, not the time, is what is tested).
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(90 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// checkOnce fails unless got holds each of want exactly once and nothing
// else.
func checkOnce(t *testing.T, what string, got map[int]int, want map[int]bool) {
	t.Helper()
	bad := 0
	for n, c := range got {
		if !want[n] || c != 1 {
			if bad++; bad <= 10 {
				t.Errorf("%s: n=%d seen %d times (committed: %v)", what, n, c, want[n])
			}
		}
	}
	for n := range want {
		if got[n] == 0 {
			if bad++; bad <= 10 {
				t.Errorf("%s: committed n=%d missing", what, n)
			}
		}
	}
	if bad > 0 {
		t.Fatalf("%s: %d wrong of %d committed (%d seen)", what, bad, len(want), len(got))
	}
}

// effects runs a worker on queue "outbox" whose handler counts its runs
// of each n, until every one of want ran; it returns the counts.
func (e *env) effects(want map[int]bool) map[int]int {
	e.t.Helper()
	var mu sync.Mutex
	got := map[int]int{}
	total := 0
	w, err := dtq.NewWorker(e.client, &dtq.WorkerConfig{Queues: []string{"outbox"}, Concurrency: 50})
	if err != nil {
		e.t.Fatal(err)
	}
	w.Handle("work", func(_ context.Context, task *dtq.Task) (any, error) {
		var it item
		if err := json.Unmarshal(task.Payload, &it); err != nil {
			return nil, dtq.Permanent(err)
		}
		mu.Lock()
		got[it.N]++
		total++
		mu.Unlock()
		return nil, nil
	})
	if err := w.Start(context.Background()); err != nil {
		e.t.Fatal(err)
	}
	waitFor(e.t, "the handler to run every committed task", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return total >= len(want)
	})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := w.Stop(ctx); err != nil {
		e.t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	return got
}
