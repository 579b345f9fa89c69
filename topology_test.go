package dtq_test

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dtq-dev/dtq"
	"github.com/dtq-dev/dtq/internal/redisconn"
	"github.com/dtq-dev/dtq/internal/redistest"
	"github.com/dtq-dev/dtq/internal/store"
)

// topologyEnv connects an engine client to url with a fresh namespace.
func topologyEnv(t *testing.T, url string) *env {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	rc, err := redisconn.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(rc.Close)
	return newEnv(t, &redistest.Backend{Name: "topology", Client: rc, Namespace: redistest.Namespace(t)}, nil)
}

// coreCases runs the engine's core behaviour on e: tasks on several queues
// (several Cluster slots) run, a retry succeeds, a dead letter is requeued,
// an idempotent submit makes one task, a delayed task waits, a queued task
// is cancelled, and events arrive.
func coreCases(t *testing.T, e *env) {
	queues := []string{"default", "mail", "media", "reports"}
	var failOnce atomic.Bool
	var fail atomic.Bool
	fail.Store(true)
	e.worker(fast(dtq.WorkerConfig{Queues: queues, Concurrency: 20}), map[string]dtq.HandlerFunc{
		"ok": func(context.Context, *dtq.Task) (any, error) { return "done", nil },
		"flaky": func(context.Context, *dtq.Task) (any, error) {
			if failOnce.CompareAndSwap(false, true) {
				return nil, errors.New("first attempt fails")
			}
			return "second time", nil
		},
		"doomed": func(context.Context, *dtq.Task) (any, error) {
			if fail.Load() {
				return nil, dtq.Permanent(errors.New("no"))
			}
			return "revived", nil
		},
		// durable: a step, a sleep, a wait for a signal and a child in
		// another queue (another slot)
		"durable": func(ctx context.Context, _ *dtq.Task) (any, error) {
			n, err := dtq.Step(ctx, "one", func(context.Context) (int, error) { return 1, nil })
			if err != nil {
				return nil, err
			}
			if err := dtq.Sleep(ctx, "nap", 200*time.Millisecond); err != nil {
				return nil, err
			}
			got, err := dtq.WaitFor(ctx, "go", time.Minute)
			if err != nil {
				return nil, err
			}
			kid, err := dtq.Child(ctx, "kid", "ok", nil, &dtq.EnqueueOpts{Queue: "media"})
			if err != nil {
				return nil, err
			}
			return fmt.Sprintf("%d %s %s", n, got, kid), nil
		},
	})
	seen := make(chan dtq.Event, 1024)
	evCtx, stop := context.WithCancel(t.Context())
	defer stop()
	go e.c.Events(evCtx, nil, func(ev dtq.Event) {
		select {
		case seen <- ev:
		default:
		}
	})

	var ids []string
	for i := range 40 {
		q := queues[i%len(queues)]
		ids = append(ids, e.enqueue("ok", i, &dtq.EnqueueOpts{Queue: q}).ID)
	}
	reqs := make([]dtq.EnqueueRequest, 20)
	for i := range reqs {
		reqs[i] = dtq.EnqueueRequest{Type: "ok", Payload: i, Opts: &dtq.EnqueueOpts{Queue: queues[i%len(queues)]}}
	}
	res, err := e.c.EnqueueMany(t.Context(), reqs)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res {
		if r.Err != nil {
			t.Fatal(r.Err)
		}
		ids = append(ids, r.Task.ID)
	}
	for _, id := range ids {
		e.waitStatus(id, dtq.StatusSucceeded, 30*time.Second)
	}

	flaky := e.enqueue("flaky", nil, &dtq.EnqueueOpts{Queue: "mail"})
	if done := e.waitStatus(flaky.ID, dtq.StatusSucceeded, 30*time.Second); done.Attempt != 2 {
		t.Fatalf("flaky: attempt %d", done.Attempt)
	}

	doomed := e.enqueue("doomed", nil, &dtq.EnqueueOpts{Queue: "media"})
	e.waitStatus(doomed.ID, dtq.StatusDead, 30*time.Second)
	fail.Store(false)
	if _, err := e.a.Requeue(t.Context(), doomed.ID); err != nil {
		t.Fatal(err)
	}
	e.waitStatus(doomed.ID, dtq.StatusSucceeded, 30*time.Second)

	key := &dtq.EnqueueOpts{Queue: "reports", IdempotencyKey: "once"}
	a := e.enqueue("ok", "x", key)
	b := e.enqueue("ok", "x", key)
	if a.ID != b.ID {
		t.Fatalf("idempotent submit made two tasks: %s %s", a.ID, b.ID)
	}

	later := e.enqueue("ok", nil, &dtq.EnqueueOpts{Queue: "mail", Delay: time.Hour})
	if got, err := e.c.Cancel(t.Context(), later.ID); err != nil || got.Status != dtq.StatusCancelled {
		t.Fatalf("cancel: %+v %v", got, err)
	}
	soon := e.enqueue("ok", nil, &dtq.EnqueueOpts{Queue: "default", Delay: 300 * time.Millisecond})
	if got, _ := e.c.Get(t.Context(), soon.ID); got.Status != dtq.StatusScheduled {
		t.Fatalf("delayed: %s", got.Status)
	}
	e.waitStatus(soon.ID, dtq.StatusSucceeded, 30*time.Second)

	durable := e.enqueue("durable", nil, &dtq.EnqueueOpts{Queue: "reports"})
	if got := e.waitStatus(durable.ID, dtq.StatusScheduled, 30*time.Second); got.Suspended == nil {
		t.Fatalf("durable task %+v, want suspended", got)
	}
	eventually(t, 30*time.Second, "the durable task waits for its signal", func() bool {
		got, err := e.c.Get(t.Context(), durable.ID)
		return err == nil && got.Suspended != nil && got.Suspended.For == "signal"
	})
	if err := e.c.Signal(t.Context(), durable.ID, "go", "sig"); err != nil {
		t.Fatal(err)
	}
	if done := e.waitStatus(durable.ID, dtq.StatusSucceeded, 30*time.Second); string(done.Result) != `"1 \"sig\" \"done\""` {
		t.Fatalf("durable task: result %s", done.Result)
	}

	qs, err := e.a.Queues(t.Context())
	if err != nil || len(qs) != len(queues) {
		t.Fatalf("queues: %d (%v)", len(qs), err)
	}
	select {
	case <-seen:
	case <-time.After(10 * time.Second):
		t.Fatal("no event arrived")
	}

	// DeleteQueue finds the records of single tasks on whichever node
	// holds the queue's slot.
	idem := &dtq.EnqueueOpts{Queue: "scratch", Delay: time.Hour, IdempotencyKey: "k"}
	old := e.enqueue("ok", nil, idem)
	if _, err := e.a.DeleteQueue(t.Context(), "scratch", &dtq.DeleteQueueOpts{Force: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.c.Get(t.Context(), old.ID); !errors.Is(err, dtq.ErrNotFound) {
		t.Fatalf("Get after DeleteQueue: %v", err)
	}
	if again := e.enqueue("ok", nil, idem); again.ID == old.ID {
		t.Fatal("the deleted queue's idempotency record answered")
	}
}

// submitAndRun submits n tasks on queue and waits until they succeed,
// retrying submits that fail (the same idempotency key each time) while a
// failover is in progress.
func submitAndRun(t *testing.T, e *env, queue string, n int, tag string) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for i := range n {
		opts := &dtq.EnqueueOpts{Queue: queue, IdempotencyKey: fmt.Sprintf("%s-%d", tag, i)}
		for {
			ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
			res, err := e.c.Enqueue(ctx, "ok", i, opts)
			cancel()
			if err == nil {
				e.waitStatus(res.Task.ID, dtq.StatusSucceeded, 60*time.Second)
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("submit %d still failing after 60s: %v", i, err)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
}

func TestClusterCore(t *testing.T) {
	t.Parallel()
	c := redistest.StartCluster(t, 3, 1)
	coreCases(t, topologyEnv(t, c.URL()))
}

// A Cluster master killed under load: its replica takes over and the
// engine carries on (submits retried with their idempotency keys while the
// slot has no master).
func TestClusterFailover(t *testing.T) {
	t.Parallel()
	c := redistest.StartCluster(t, 3, 1)
	took := runThroughFailover(t, c.URL(), func(e *env) error {
		return c.MasterOf(t, e.Namespace+":{default}:info").Kill()
	})
	t.Logf("20 tasks submitted and run within %v of the master's death", took.Round(time.Millisecond))
}

// runThroughFailover runs 20 tasks on the topology at url, kills its
// master with kill, then submits and runs 20 more; it returns how long
// those took from the kill.
func runThroughFailover(t *testing.T, url string, kill func(e *env) error) time.Duration {
	t.Helper()
	e := topologyEnv(t, url)
	e.worker(fast(dtq.WorkerConfig{Concurrency: 20, VisibilityTimeout: 2 * time.Second}), map[string]dtq.HandlerFunc{
		"ok": func(context.Context, *dtq.Task) (any, error) { return "done", nil },
	})
	submitAndRun(t, e, "default", 20, "before")
	if err := kill(e); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	submitAndRun(t, e, "default", 20, "after")
	return time.Since(start)
}

func TestSentinelCore(t *testing.T) {
	t.Parallel()
	s := redistest.StartSentinels(t, 1, 3)
	coreCases(t, topologyEnv(t, s.URL()))
}

// The Sentinel primary killed under load: the sentinels promote the
// replica and the engine follows them.
func TestSentinelFailover(t *testing.T) {
	t.Parallel()
	s := redistest.StartSentinels(t, 1, 3)
	took := runThroughFailover(t, s.URL(), func(*env) error { return s.Primary.Kill() })
	addr, err := s.PrimaryAddr()
	if err != nil || addr != s.Replicas[0].Addr {
		t.Fatalf("primary after failover: %s (%v), want the replica %s", addr, err, s.Replicas[0].Addr)
	}
	t.Logf("20 tasks submitted and run within %v of the primary's death", took.Round(time.Millisecond))
}

// Durable mode: a submit is done once the replica has it; with the replica
// gone, a submit fails with ErrNotReplicated (after DurableTimeout) and a
// resubmit with the same key finds the task the master kept.
func TestDurableReplicas(t *testing.T) {
	t.Parallel()
	s := redistest.StartSentinels(t, 1, 3)
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	rc, err := redisconn.Connect(ctx, s.URL())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(rc.Close)
	e := newEnv(t, &redistest.Backend{Name: "sentinel", Client: rc, Namespace: redistest.Namespace(t)},
		&dtq.Config{DurableReplicas: 1, DurableTimeout: 300 * time.Millisecond})
	e.worker(fast(dtq.WorkerConfig{}), map[string]dtq.HandlerFunc{"ok": func(context.Context, *dtq.Task) (any, error) { return 1, nil }})
	plain := e.enqueue("ok", nil, nil)
	keyed := e.enqueue("ok", nil, &dtq.EnqueueOpts{IdempotencyKey: "k"})
	e.waitStatus(plain.ID, dtq.StatusSucceeded, 10*time.Second)
	e.waitStatus(keyed.ID, dtq.StatusSucceeded, 10*time.Second)
	// The task is on the replica already: acknowledged means replicated.
	if n, err := redistest.Command(s.Replicas[0].Addr, "HEXISTS", store.NewKeys(e.Namespace, "default").Finished(), plain.ID[len("default-"):]); err != nil || n != "1" {
		t.Fatalf("the replica lacks an acknowledged task: %q %v", n, err)
	}

	if err := s.Replicas[0].Pause(); err != nil {
		t.Fatal(err)
	}
	defer s.Replicas[0].Resume()
	for _, opts := range []*dtq.EnqueueOpts{nil, {IdempotencyKey: "k2"}} {
		_, err := e.c.Enqueue(t.Context(), "ok", nil, opts)
		if !errors.Is(err, dtq.ErrNotReplicated) {
			t.Fatalf("submit with the replica paused (%+v): %v, want ErrNotReplicated", opts, err)
		}
	}
	// The two tasks the master kept run although their starts and
	// outcomes reach no replica in time (they stand, logged).
	deadline := time.Now().Add(10 * time.Second)
	for {
		page, err := e.c.List(t.Context(), dtq.ListOpts{Queue: dtq.DefaultQueue, Status: dtq.StatusSucceeded})
		if err != nil {
			t.Fatal(err)
		}
		if len(page.Tasks) == 4 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("with the replica paused, %d of 4 tasks succeeded", len(page.Tasks))
		}
		time.Sleep(10 * time.Millisecond)
	}
	s.Replicas[0].Resume()
	res, err := e.c.Enqueue(t.Context(), "ok", nil, &dtq.EnqueueOpts{IdempotencyKey: "k2"})
	if err != nil || !res.Duplicate || res.Task.Status != dtq.StatusSucceeded {
		t.Fatalf("resubmit with the same key: %+v %v, want the finished task the master kept", res, err)
	}
}
