package dtq_test

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dtq-dev/dtq"
	"github.com/dtq-dev/dtq/internal/redisconn"
	"github.com/dtq-dev/dtq/internal/redistest"
	"github.com/dtq-dev/dtq/internal/store"
	"github.com/redis/rueidis"
)

// countKeys returns how many keys match pattern (SCAN: the server may be
// shared with other tests' namespaces), but those of except.
// The stored history's buckets (":hist:") are not counted: they are kept
// a day or 30 days by design, bounded on their own (TestHistoryMemoryBound),
// and a minute's turn adds one.
func countKeys(t *testing.T, c rueidis.Client, pattern string, except ...string) int {
	t.Helper()
	n := 0
	cursor := uint64(0)
	for {
		e, err := c.Do(t.Context(), c.B().Scan().Cursor(cursor).Match(pattern).Count(1000).Build()).AsScanEntry()
		if err != nil {
			t.Fatal(err)
		}
		for _, k := range e.Elements {
			if !slices.Contains(except, k) && !strings.Contains(k, ":hist:") {
				n++
			}
		}
		if e.Cursor == 0 {
			return n
		}
		cursor = e.Cursor
	}
}

// hlen returns the number of fields of hash key.
func hlen(t *testing.T, c rueidis.Client, key string) int64 {
	t.Helper()
	n, err := c.Do(t.Context(), c.B().Hlen().Key(key).Build()).AsInt64()
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func usedMemory(t *testing.T, addr string) int64 {
	t.Helper()
	out, err := redistest.Command(addr, "INFO", "memory")
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(out, "\r\n") {
		if v, ok := strings.CutPrefix(l, "used_memory:"); ok {
			n, _ := strconv.ParseInt(v, 10, 64)
			return n
		}
	}
	t.Fatal("no used_memory in INFO memory")
	return 0
}

// A burst at full speed with a short retention leaves nothing behind: once
// the retention has passed, the namespace holds as many keys as before the
// burst and Redis uses about the memory it used then. (The index of the
// previous layout kept every task id: 20,000 of them held megabytes.)
func TestMemoryBoundedAfterBurst(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t, nil)
	rc := redistest.Client(t, srv)
	const retention = time.Second
	e := newEnv(t, &redistest.Backend{Name: "redis", Client: rc, Namespace: redistest.Namespace(t), Server: srv},
		&dtq.Config{Retention: retention})
	e.worker(&dtq.WorkerConfig{Concurrency: 50}, map[string]dtq.HandlerFunc{
		"job": func(context.Context, *dtq.Task) (any, error) { return map[string]int{"ok": 1}, nil },
	})
	pattern := e.Namespace + ":*"
	// The run hash is the queue's own, as its info hash is, once a start
	// wrote a Run field (its pad field keeps it); a task started as an
	// implicit first run writes none, so the baseline may lack it.
	runHash := store.NewKeys(e.Namespace, dtq.DefaultQueue).Run()
	settled := func(what string, ok func() bool) {
		t.Helper()
		eventually(t, retention+10*time.Second, what, ok)
	}
	// The baseline: a queue that has run a task and forgotten it.
	first := e.enqueue("job", nil, nil)
	e.waitStatus(first.ID, dtq.StatusSucceeded, 10*time.Second)
	settled("the first task expired", func() bool {
		_, err := e.c.Get(t.Context(), first.ID)
		n, _ := rc.Do(t.Context(), rc.B().Xlen().Key(store.NewKeys(e.Namespace, dtq.DefaultQueue).Done()).Build()).AsInt64()
		return errors.Is(err, dtq.ErrNotFound) && n == 0
	})
	baseKeys, baseMem := countKeys(t, rc, pattern, runHash), usedMemory(t, srv.Addr)

	const burst = 20_000
	var next atomic.Int64
	var wg sync.WaitGroup
	for range 32 {
		wg.Go(func() {
			for next.Add(1) <= burst {
				if _, err := e.c.Enqueue(t.Context(), "job", map[string]int{"n": 1}, nil); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	eventually(t, 60*time.Second, "the burst succeeded", func() bool {
		st, err := e.a.Stats(t.Context(), dtq.DefaultQueue)
		return err == nil && st.Succeeded == burst+1
	})
	peakKeys := countKeys(t, rc, pattern)
	var keys int
	var mem int64
	settled("keys and memory back at their baseline", func() bool {
		keys, mem = countKeys(t, rc, pattern, runHash), usedMemory(t, srv.Addr)
		return keys == baseKeys && mem < baseMem+512<<10
	})
	t.Logf("baseline %d keys, %d B; %d keys right after the burst; %d keys, %d B after the retention", baseKeys, baseMem, peakKeys, keys, mem)
}

// Beyond Config.MaxFinished finished tasks, the oldest are deleted before
// their retention ends; the newest stay.
func TestFinishedCapDeletesOldest(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		c, err := dtq.NewClient(redisconn.Wrap(e.Client), &dtq.Config{Namespace: e.Namespace, MaxFinished: 50})
		if err != nil {
			t.Fatal(err)
		}
		e.c = c
		// One at a time: tasks finish in the order they were submitted.
		e.worker(&dtq.WorkerConfig{Concurrency: 1}, map[string]dtq.HandlerFunc{"job": func(context.Context, *dtq.Task) (any, error) { return nil, nil }})
		var ids []string
		for range 200 {
			ids = append(ids, e.enqueue("job", nil, nil).ID)
		}
		// All 200 ran (the first ones may be gone already: the cap).
		eventually(t, 20*time.Second, "200 tasks succeeded", func() bool {
			st, err := e.a.Stats(t.Context(), dtq.DefaultQueue)
			return err == nil && st.Succeeded == 200
		})
		k := store.NewKeys(e.Namespace, dtq.DefaultQueue)
		records := func() int {
			return countKeys(t, e.Client, e.Namespace+":{default}:task:*") + int(hlen(t, e.Client, k.Finished()))
		}
		eventually(t, 15*time.Second, "at most 50 finished tasks kept", func() bool {
			n, _ := e.Client.Do(t.Context(), e.Client.B().Hget().Key(k.Info()).Field(store.InfoDone).Build()).AsInt64()
			return n <= 50 && records() <= 50
		})
		if _, err := e.c.Get(t.Context(), ids[0]); !errors.Is(err, dtq.ErrNotFound) {
			t.Errorf("the oldest finished task: %v, want it deleted", err)
		}
		if got, err := e.c.Get(t.Context(), ids[len(ids)-1]); err != nil || got.Status != dtq.StatusSucceeded {
			t.Errorf("the newest finished task: %+v %v, want it kept", got, err)
		}
	})
}

// The dead-letter stream's cap takes the records of the letters it trims
// with them (they used to stay, with no expiry).
func TestDeadLetterCapDeletesRecords(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		c, err := dtq.NewClient(redisconn.Wrap(e.Client), &dtq.Config{Namespace: e.Namespace, DeadLetterMaxLen: 10})
		if err != nil {
			t.Fatal(err)
		}
		e.c = c
		e.worker(&dtq.WorkerConfig{Concurrency: 1}, map[string]dtq.HandlerFunc{"bad": func(context.Context, *dtq.Task) (any, error) {
			return nil, dtq.Permanent(errors.New("no"))
		}})
		var ids []string
		for range 30 {
			ids = append(ids, e.enqueue("bad", nil, nil).ID)
		}
		for _, id := range ids {
			e.waitStatus(id, dtq.StatusDead, 20*time.Second)
		}
		eventually(t, 15*time.Second, "10 dead letters and their 10 records kept", func() bool {
			st, err := e.a.Stats(t.Context(), dtq.DefaultQueue)
			return err == nil && st.Dead == 10 && countKeys(t, e.Client, e.Namespace+":{default}:task:*") == 10
		})
		if _, err := e.c.Get(t.Context(), ids[0]); !errors.Is(err, dtq.ErrNotFound) {
			t.Errorf("the oldest dead letter's task: %v, want it deleted with its letter", err)
		}
		letters, _, err := e.a.ListDead(t.Context(), dtq.DefaultQueue, 100, "")
		if err != nil || len(letters) != 10 || letters[0].Task.ID != ids[len(ids)-1] {
			t.Fatalf("dead letters: %d %v", len(letters), err)
		}
	})
}

// With RetainNone a task is deleted as it succeeds: nothing of it stays
// but its idempotency record, which still answers a replay; a cancelled
// task stays long enough to be shown.
func TestRetainNoneDeletesSucceeded(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		c, err := dtq.NewClient(redisconn.Wrap(e.Client), &dtq.Config{Namespace: e.Namespace, Retention: dtq.RetainNone})
		if err != nil {
			t.Fatal(err)
		}
		e.c = c
		e.worker(fast(dtq.WorkerConfig{}), map[string]dtq.HandlerFunc{
			"job":  func(context.Context, *dtq.Task) (any, error) { return 1, nil },
			"flap": func(_ context.Context, task *dtq.Task) (any, error) { return nil, retryOnce(task) },
		})
		opts := &dtq.EnqueueOpts{IdempotencyKey: "k1"}
		var ids []string
		for _, typ := range []string{"job", "flap"} { // born and first run; a hash after a retry
			res, err := c.Enqueue(t.Context(), typ, nil, opts)
			if err != nil {
				t.Fatal(err)
			}
			ids = append(ids, res.Task.ID)
			opts = &dtq.EnqueueOpts{IdempotencyKey: "k2"}
		}
		for _, id := range ids {
			eventually(t, 20*time.Second, id+" succeeded and gone", func() bool {
				_, err := c.Get(t.Context(), id)
				return errors.Is(err, dtq.ErrNotFound)
			})
		}
		st, err := dtq.NewAdmin(c).Stats(t.Context(), dtq.DefaultQueue)
		if err != nil || st.Succeeded != 2 {
			t.Fatalf("stats %+v %v", st, err)
		}
		k := store.NewKeys(e.Namespace, dtq.DefaultQueue)
		if n := hlen(t, e.Client, k.Finished()) + int64(countKeys(t, e.Client, e.Namespace+":{default}:task:*")); n != 0 {
			t.Fatalf("%d records left of succeeded tasks", n)
		}
		replay, err := c.Enqueue(t.Context(), "job", nil, &dtq.EnqueueOpts{IdempotencyKey: "k1"})
		if err != nil || !replay.Duplicate || replay.Task.ID != ids[0] {
			t.Fatalf("replay: %+v %v, want the original id", replay, err)
		}
		late := e.enqueue("job", nil, &dtq.EnqueueOpts{Delay: time.Hour})
		if got, err := c.Cancel(t.Context(), late.ID); err != nil || got.Status != dtq.StatusCancelled {
			t.Fatalf("cancel: %+v %v", got, err)
		}
	})
}

// retryOnce fails a task's first attempt, retryably, with no backoff.
func retryOnce(task *dtq.Task) error {
	if task.Attempt == 1 {
		return dtq.RetryAfter(time.Millisecond, errors.New("once"))
	}
	return nil
}
