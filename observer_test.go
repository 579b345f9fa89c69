package dtq_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dtq-dev/dtq"
	"github.com/dtq-dev/dtq/internal/redistest"
	"github.com/dtq-dev/dtq/internal/store"
)

// recorder is an Observer that records every call as a line
// "<method> <queue> <type> [<outcome>]", with the durations apart.
type recorder struct {
	mu        sync.Mutex
	events    []string
	durations []time.Duration
	reclaimed map[string]int
	redisOps  []string
}

func newRecorder() *recorder { return &recorder{reclaimed: map[string]int{}} }

func (r *recorder) add(line string, d time.Duration) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, line)
	r.durations = append(r.durations, d)
}

func (r *recorder) TaskSubmitted(queue, typ string) { r.add("submitted "+queue+" "+typ, 0) }
func (r *recorder) TaskStarted(queue, typ string, pickup time.Duration) {
	r.add("started "+queue+" "+typ, pickup)
}
func (r *recorder) TaskFinished(queue, typ string, o dtq.Outcome, run time.Duration) {
	r.add("finished "+queue+" "+typ+" "+string(o), run)
}
func (r *recorder) TaskEnded(queue, typ string, o dtq.Outcome) {
	r.add("ended "+queue+" "+typ+" "+string(o), 0)
}
func (r *recorder) TasksReclaimed(queue string, n int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.reclaimed[queue] += n
}
func (r *recorder) RedisError(op string, _ error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.redisOps = append(r.redisOps, op)
}

// count returns how many events equal line.
func (r *recorder) count(line string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, e := range r.events {
		if e == line {
			n++
		}
	}
	return n
}

func (r *recorder) snapshot() ([]string, []time.Duration) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.events), slices.Clone(r.durations)
}

// waitEvents waits until every line of want was recorded (at least) as
// often as it is listed.
func (r *recorder) waitEvents(t *testing.T, want ...string) {
	t.Helper()
	need := map[string]int{}
	for _, w := range want {
		need[w]++
	}
	eventually(t, 10*time.Second, fmt.Sprintf("observer events %q", want), func() bool {
		for line, n := range need {
			if r.count(line) < n {
				return false
			}
		}
		return true
	})
}

func forEachBackendObserved(t *testing.T, fn func(t *testing.T, e *env, rec *recorder)) {
	t.Parallel()
	redistest.ForEachBackend(t, func(t *testing.T, b *redistest.Backend) {
		rec := newRecorder()
		fn(t, newEnv(t, b, &dtq.Config{Observer: rec}), rec)
	})
}

// The observer sees each task submitted once (not its duplicates), every
// execution started and finished with its outcome, and a cancellation
// before the task ran, all with the task's queue and type; durations are
// never negative.
func TestObserverSeesTaskLifecycle(t *testing.T) {
	forEachBackendObserved(t, func(t *testing.T, e *env, rec *recorder) {
		const q = "obs"
		opts := &dtq.EnqueueOpts{Queue: q}
		blocking := make(chan struct{})
		e.worker(fast(dtq.WorkerConfig{Queues: []string{q}}), map[string]dtq.HandlerFunc{
			"ok": func(context.Context, *dtq.Task) (any, error) { return "done", nil },
			"flaky": func(_ context.Context, task *dtq.Task) (any, error) {
				if task.Attempt < 2 {
					return nil, errors.New("not yet")
				}
				return nil, nil
			},
			"bad": func(context.Context, *dtq.Task) (any, error) { return nil, dtq.Permanent(errors.New("no")) },
			"block": func(ctx context.Context, _ *dtq.Task) (any, error) {
				close(blocking)
				<-ctx.Done()
				return nil, context.Cause(ctx)
			},
		})

		ok := e.enqueue("ok", nil, &dtq.EnqueueOpts{Queue: q, IdempotencyKey: "k1"})
		if res, err := e.c.Enqueue(t.Context(), "ok", nil, &dtq.EnqueueOpts{Queue: q, IdempotencyKey: "k1"}); err != nil || !res.Duplicate {
			t.Fatalf("duplicate submission: %+v, %v", res, err)
		}
		flaky := e.enqueue("flaky", nil, opts)
		bad := e.enqueue("bad", nil, opts)
		block := e.enqueue("block", nil, opts)
		later := e.enqueue("later", nil, &dtq.EnqueueOpts{Queue: q, Delay: time.Hour})
		many, err := e.c.EnqueueMany(t.Context(), []dtq.EnqueueRequest{
			{Type: "ok", Opts: opts}, {Type: "ok", Opts: &dtq.EnqueueOpts{Queue: "bad name"}},
		})
		if err != nil || many[0].Err != nil || many[1].Err == nil {
			t.Fatalf("EnqueueMany: %+v, %v", many, err)
		}

		e.waitStatus(ok.ID, dtq.StatusSucceeded, 10*time.Second)
		e.waitStatus(flaky.ID, dtq.StatusSucceeded, 10*time.Second)
		e.waitStatus(bad.ID, dtq.StatusDead, 10*time.Second)
		waitClosed(t, blocking, "the blocking task starts")
		for _, id := range []string{later.ID, block.ID} {
			if _, err := e.c.Cancel(t.Context(), id); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := e.c.Cancel(t.Context(), later.ID); err != nil { // again: nothing happens
			t.Fatal(err)
		}
		e.waitStatus(block.ID, dtq.StatusCancelled, 10*time.Second)

		rec.waitEvents(t,
			"finished obs ok succeeded", "finished obs ok succeeded",
			"finished obs flaky retried", "finished obs flaky succeeded",
			"finished obs bad dead", "finished obs block cancelled", "ended obs later cancelled")
		want := map[string]int{
			"submitted obs ok": 2, "submitted obs flaky": 1, "submitted obs bad": 1,
			"submitted obs block": 1, "submitted obs later": 1,
			"started obs ok": 2, "started obs flaky": 2, "started obs bad": 1, "started obs block": 1,
			"finished obs ok succeeded": 2, "finished obs flaky retried": 1, "finished obs flaky succeeded": 1,
			"finished obs bad dead": 1, "finished obs block cancelled": 1, "ended obs later cancelled": 1,
		}
		events, durations := rec.snapshot()
		got := map[string]int{}
		for i, ev := range events {
			got[ev]++
			if durations[i] < 0 {
				t.Errorf("%s: negative duration %v", ev, durations[i])
			}
		}
		total := 0
		for line, n := range want {
			total += n
			if got[line] != n {
				t.Errorf("%q seen %d times, want %d", line, got[line], n)
			}
		}
		if len(events) != total {
			t.Errorf("%d events, want %d: %q", len(events), total, events)
		}
	})
}

// waitClosed waits up to 10s for ch to be closed.
func waitClosed(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(10 * time.Second):
		t.Fatalf("%s: not within 10s", what)
	}
}

// ghostStart claims the task's entry for a worker that never renews it and
// starts it there (RUNNING), as a worker that then died would have: taking
// it over from a lost worker when reclaim is set.
func ghostStart(t *testing.T, e *env, queue, ghost string, reclaim bool) {
	t.Helper()
	q := store.New(e.Client, e.Namespace).Queue(queue)
	req := store.ReadRequest{Consumer: ghost, Credit: 1, EnsureGroups: true}
	if reclaim {
		req.ReclaimIdle = time.Millisecond
	}
	var entries []store.Entry
	eventually(t, 10*time.Second, ghost+" claims the task", func() bool {
		res, err := q.Read(t.Context(), req)
		if err != nil {
			t.Fatal(err)
		}
		entries = res.Entries
		return len(entries) == 1 && entries[0].Reclaimed == reclaim
	})
	started, err := q.Start(t.Context(), store.StartConfig{Worker: ghost, MaxCrashes: 10, Retention: time.Hour}, entries)
	if err != nil || started[0].Code != store.Began {
		t.Fatalf("%s starting the task: %+v, %v", ghost, started, err)
	}
}

// A task taken over from lost workers is reported reclaimed, and DEAD
// without a run once it crashed more than MaxCrashes times; an execution
// whose task was taken over elsewhere finishes "lost".
func TestObserverSeesReclaimsAndLostRuns(t *testing.T) {
	forEachBackendObserved(t, func(t *testing.T, e *env, rec *recorder) {
		// Crashed twice under ghost workers, then past MaxCrashes 1.
		doomed := e.enqueue("crashy", nil, &dtq.EnqueueOpts{Queue: "crash"})
		ghostStart(t, e, "crash", "ghost1", false)
		ghostStart(t, e, "crash", "ghost2", true)
		// (A visibility timeout far above a start's time: with 20ms, a
		// start slowed past it under -race let the next pass take the
		// entry back from this worker itself, a second reclaim.)
		e.worker(&dtq.WorkerConfig{Queues: []string{"crash"}, VisibilityTimeout: 300 * time.Millisecond, MaxCrashes: 1},
			map[string]dtq.HandlerFunc{"crashy": func(context.Context, *dtq.Task) (any, error) { return nil, nil }})
		e.waitStatus(doomed.ID, dtq.StatusDead, 10*time.Second)
		rec.waitEvents(t, "ended crash crashy dead")
		if n := rec.count("started crash crashy"); n != 0 {
			t.Fatalf("the dead task was reported started %d times", n)
		}

		// Taken over while it runs here: its run ends lost.
		running, release := make(chan struct{}), make(chan struct{})
		e.worker(&dtq.WorkerConfig{Queues: []string{"steal"}, VisibilityTimeout: 10 * time.Second},
			map[string]dtq.HandlerFunc{"slow": func(context.Context, *dtq.Task) (any, error) {
				close(running)
				<-release
				return nil, nil
			}})
		e.enqueue("slow", nil, &dtq.EnqueueOpts{Queue: "steal"})
		waitClosed(t, running, "the slow task starts")
		ghostStart(t, e, "steal", "thief", true)
		close(release)
		rec.waitEvents(t, "started steal slow", "finished steal slow lost")

		rec.mu.Lock()
		defer rec.mu.Unlock()
		if rec.reclaimed["crash"] != 1 {
			t.Fatalf("reclaimed %v, want crash: 1", rec.reclaimed)
		}
	})
}

// A failed enqueue is reported as a Redis error.
func TestObserverSeesRedisErrors(t *testing.T) {
	t.Parallel()
	be := redistest.Embedded(t)
	rec := newRecorder()
	e := newEnv(t, &redistest.Backend{Name: "embedded", Client: be.Client, Namespace: "obs", Embedded: be},
		&dtq.Config{Observer: rec})
	e.enqueue("job", nil, nil) // the queue is registered
	be.Server.Close()
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	if _, err := e.c.Enqueue(ctx, "job", nil, nil); err == nil {
		t.Fatal("enqueue with Redis down succeeded")
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if !slices.Contains(rec.redisOps, "enqueue") {
		t.Fatalf("redis errors %q, want enqueue", rec.redisOps)
	}
	if n := len(rec.events); n != 1 {
		t.Fatalf("events %q", rec.events)
	}
}

// Every log line about a task carries its id, queue and type.
func TestTaskLogLinesCarryTheTask(t *testing.T) {
	t.Parallel()
	be := redistest.Embedded(t)
	var buf syncBuffer
	log := slog.New(slog.NewJSONHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
	e := newEnv(t, &redistest.Backend{Name: "embedded", Client: be.Client, Namespace: "logs", Embedded: be},
		&dtq.Config{Logger: log})
	e.worker(fast(dtq.WorkerConfig{Queues: []string{"lq"}}), map[string]dtq.HandlerFunc{
		"flaky":  func(context.Context, *dtq.Task) (any, error) { return nil, errors.New("try again") },
		"doomed": func(context.Context, *dtq.Task) (any, error) { return nil, errors.New("no") },
	})
	e.enqueue("doomed", nil, &dtq.EnqueueOpts{Queue: "lq", MaxAttempts: 1})         // dead at once
	flaky := e.enqueue("flaky", nil, &dtq.EnqueueOpts{Queue: "lq", MaxAttempts: 2}) // retried, then dead
	e.waitStatus(flaky.ID, dtq.StatusDead, 10*time.Second)
	var lines []map[string]any
	eventually(t, 10*time.Second, "three task log lines", func() bool {
		lines = nil
		for _, l := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
			var m map[string]any
			if err := json.Unmarshal([]byte(l), &m); err != nil {
				t.Fatalf("log line %q: %v", l, err)
			}
			if strings.HasPrefix(m["msg"].(string), "task") {
				lines = append(lines, m)
			}
		}
		return len(lines) >= 3
	})
	for _, m := range lines {
		if m["task_id"] == "" || m["task_id"] == nil || m["queue"] != "lq" || (m["task_type"] != "flaky" && m["task_type"] != "doomed") {
			t.Errorf("task log line without its task: %v", m)
		}
	}
}

// syncBuffer is a bytes.Buffer safe for concurrent use.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// taskRecorder is a TaskObserver: it records each callback with the task's
// id, and the plain Observer calls it must not get.
type taskRecorder struct {
	dtq.NopTaskObserver
	mu    sync.Mutex
	calls []string
	plain int
}

func (r *taskRecorder) add(s string) { r.mu.Lock(); r.calls = append(r.calls, s); r.mu.Unlock() }
func (r *taskRecorder) OnSubmitted(t dtq.TaskRef) {
	r.add("submitted " + t.ID + " " + t.Queue + " " + t.Type)
}
func (r *taskRecorder) OnStarted(t dtq.TaskRef, _ time.Duration) {
	r.add("started " + t.ID + " " + t.Type)
}
func (r *taskRecorder) OnFinished(t dtq.TaskRef, o dtq.Outcome, _ time.Duration) {
	r.add("finished " + t.ID + " " + string(o))
}
func (r *taskRecorder) OnEnded(t dtq.TaskRef, o dtq.Outcome) {
	r.add("ended " + t.ID + " " + string(o))
}
func (r *taskRecorder) TaskSubmitted(string, string) { r.mu.Lock(); r.plain++; r.mu.Unlock() }
func (r *taskRecorder) TaskFinished(string, string, dtq.Outcome, time.Duration) {
	r.mu.Lock()
	r.plain++
	r.mu.Unlock()
}
func (r *taskRecorder) has(s string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Contains(r.calls, s)
}

// A TaskObserver gets every task event with the task's id, in place of the
// plain Observer calls.
func TestTaskObserverGetsIDs(t *testing.T) {
	redistest.ForEachBackend(t, func(t *testing.T, b *redistest.Backend) {
		rec := &taskRecorder{}
		e := newEnv(t, b, &dtq.Config{Observer: rec})
		e.worker(nil, map[string]dtq.HandlerFunc{"job": func(context.Context, *dtq.Task) (any, error) { return nil, nil }})
		ran := e.enqueue("job", nil, nil)
		e.waitStatus(ran.ID, dtq.StatusSucceeded, 10*time.Second)
		later := e.enqueue("job", nil, &dtq.EnqueueOpts{Delay: time.Hour})
		if _, err := e.c.Cancel(t.Context(), later.ID); err != nil {
			t.Fatal(err)
		}
		want := []string{"submitted " + ran.ID + " default job", "started " + ran.ID + " job", "finished " + ran.ID + " succeeded",
			"submitted " + later.ID + " default job", "ended " + later.ID + " cancelled"}
		eventually(t, 10*time.Second, "every event with its task's id", func() bool {
			for _, w := range want {
				if !rec.has(w) {
					return false
				}
			}
			return true
		})
		rec.mu.Lock()
		defer rec.mu.Unlock()
		if rec.plain != 0 {
			t.Fatalf("%d plain Observer calls besides the TaskObserver's", rec.plain)
		}
	})
}

// Leases report through the same claimer as Go workers (internal/claim):
// a lease taken over from a holder that stopped extending it is reported
// reclaimed, like a worker's takeover.
func TestObserverSeesLeaseTakeovers(t *testing.T) {
	forEachBackendObserved(t, func(t *testing.T, e *env, rec *recorder) {
		e.enqueue("job", nil, nil)
		e.lease(dtq.LeaseRequest{Worker: "a", Timeout: 100 * time.Millisecond}, 1)
		second := e.takeOver("b", 100*time.Millisecond)
		if second.Task.Crashes != 1 {
			t.Fatalf("taken over: %+v", second.Task)
		}
		rec.mu.Lock()
		defer rec.mu.Unlock()
		if rec.reclaimed[dtq.DefaultQueue] != 1 {
			t.Fatalf("reclaimed %v, want %s: 1", rec.reclaimed, dtq.DefaultQueue)
		}
	})
}
