package outbox_test

import (
	"context"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"

	"github.com/dtq-dev/dtq"
	"github.com/dtq-dev/dtq/outbox"
)

// 10,000 enqueues from 20 concurrent transactions, about a fifth of them
// rolled back, while two relays run (one active, one standby): exactly the
// committed ones become tasks, once each, and the handler runs each once.
func TestConcurrentTransactionsExactlyOnce(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "")
	e.startRelay(nil, &outbox.RelayConfig{BatchSize: 200})
	e.startRelay(e.newClient(nil), &outbox.RelayConfig{BatchSize: 200})
	const writers, perWriter = 20, 500
	var mu sync.Mutex
	committed := map[int]bool{}
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(w), 36))
			for next := 0; next < perWriter; {
				size := min(1+rng.IntN(10), perWriter-next)
				ns := make([]int, size)
				for i := range ns {
					ns[i] = w*perWriter + next + i
				}
				next += size
				rollback := rng.IntN(5) == 0
				if err := e.enqueueTx(ns, rollback); err != nil {
					t.Error(err)
					return
				}
				if !rollback {
					mu.Lock()
					for _, n := range ns {
						committed[n] = true
					}
					mu.Unlock()
				}
			}
		})
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	waitFor(t, "every committed row to be relayed", func() bool { return e.waiting() == 0 })
	checkOnce(t, "tasks", e.tasks(), committed)
	checkOnce(t, "handler runs", e.effects(committed), committed)
}

// A row dtq refuses for good (here a payload over the client's limit) is
// marked failed and left in the table; the rows after it are relayed.
func TestRefusedRowMarkedFailed(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "")
	ctx := context.Background()
	tx, err := e.pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := outbox.Enqueue(ctx, tx, "work", map[string]any{"n": 1, "pad": strings.Repeat("x", 200)}, &dtq.EnqueueOpts{Queue: "outbox"}); err != nil {
		t.Fatal(err)
	}
	if _, err := outbox.Enqueue(ctx, tx, "work", item{N: 2}, &dtq.EnqueueOpts{Queue: "outbox"}); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	r := e.startRelay(e.newClient(&dtq.Config{MaxPayloadBytes: 100}), nil)
	waitFor(t, "the good row to be relayed", func() bool { return e.waiting() == 1 })
	checkOnce(t, "tasks", e.tasks(), map[int]bool{2: true})
	var reason string
	if err := e.pool.QueryRow(ctx, "SELECT error FROM "+outbox.Table+" WHERE failed_at IS NOT NULL").Scan(&reason); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(reason, "payload") {
		t.Fatalf("failed row's error %q does not say why", reason)
	}
	s, err := r.Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if s.Failed != 1 || s.Waiting != 0 || s.FailedByRelay != 1 {
		t.Fatalf("stats %+v, want 1 failed, none waiting", s)
	}
}

// Stats counts the rows waiting and the age of the oldest, with no relay
// running.
func TestStatsWithoutRelay(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "")
	if err := e.enqueueTx([]int{1, 2, 3}, false); err != nil {
		t.Fatal(err)
	}
	r, err := outbox.NewRelay(e.client, e.url, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Stop(context.Background())
	s, err := r.Stats(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if s.Active || s.Waiting != 3 || s.Lag <= 0 {
		t.Fatalf("stats %+v, want 3 waiting with a lag, not active", s)
	}
}

// NewRelay refuses a bad configuration naming the field.
func TestNewRelayRefusesBadConfig(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "")
	for _, c := range []struct {
		url   string
		cfg   *outbox.RelayConfig
		field string
	}{
		{e.url, &outbox.RelayConfig{BatchSize: -1}, "BatchSize"},
		{e.url, &outbox.RelayConfig{BatchSize: outbox.MaxBatchSize + 1}, "BatchSize"},
		{e.url, &outbox.RelayConfig{PollInterval: -1}, "PollInterval"},
		{"postgres://host:notaport/db", nil, "outbox"},
	} {
		_, err := outbox.NewRelay(e.client, c.url, c.cfg)
		if err == nil || !strings.Contains(err.Error(), c.field) {
			t.Errorf("NewRelay(%q, %+v) = %v; want an error naming %s", c.url, c.cfg, err, c.field)
		}
	}
}

// A standby relay waits while another is active, and takes over as soon as
// the active one stops: rows committed after the stop are relayed by it.
func TestStandbyTakesOver(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "")
	first := e.startRelay(nil, nil)
	waitFor(t, "the first relay to be active", func() bool { return stats(t, first).Active })
	second := e.startRelay(e.newClient(nil), nil)
	if err := e.enqueueTx([]int{1}, false); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the first row to be relayed", func() bool { return e.waiting() == 0 })
	if s := stats(t, second); s.Active || s.Relayed != 0 {
		t.Fatalf("the standby's stats %+v while the first relay is active", s)
	}
	if err := first.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := e.enqueueTx([]int{2}, false); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the second row to be relayed by the standby", func() bool { return e.waiting() == 0 })
	if s := stats(t, second); !s.Active || s.Relayed != 1 {
		t.Fatalf("the standby's stats %+v after the takeover; want active, 1 relayed", s)
	}
	checkOnce(t, "tasks", e.tasks(), map[int]bool{1: true, 2: true})
}
