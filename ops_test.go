package dtq_test

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dtq-dev/dtq"
	"github.com/dtq-dev/dtq/internal/redisconn"
	"github.com/dtq-dev/dtq/internal/store"
)

// Every transition publishes an event.
func TestEvents(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		e.worker(nil, map[string]dtq.HandlerFunc{"job": func(context.Context, *dtq.Task) (any, error) { return nil, nil }})
		var mu sync.Mutex
		var got []dtq.Event
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		go e.c.Events(ctx, nil, func(ev dtq.Event) { mu.Lock(); got = append(got, ev); mu.Unlock() })
		// Subscriptions start asynchronously: submit until one is seen.
		for {
			e.enqueue("job", nil, nil)
			mu.Lock()
			n := len(got)
			mu.Unlock()
			if n > 0 {
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
		task := e.enqueue("job", nil, &dtq.EnqueueOpts{Priority: dtq.Ptr(7)})
		e.waitStatus(task.ID, dtq.StatusSucceeded, 10*time.Second)
		var statuses []dtq.Status
		deadline := time.Now().Add(10 * time.Second)
		for len(statuses) < 3 && time.Now().Before(deadline) {
			time.Sleep(5 * time.Millisecond)
			statuses = statuses[:0]
			mu.Lock()
			for _, ev := range got {
				if ev.TaskID == task.ID {
					if ev.Queue != "default" || ev.Type != "job" || ev.Priority != 7 {
						t.Fatalf("event %+v", ev)
					}
					statuses = append(statuses, ev.Status)
				}
			}
			mu.Unlock()
		}
		// Each event is published after its transition, fire-and-forget:
		// they may arrive out of order (§3.2.2), but none is missing.
		slices.Sort(statuses)
		if !slices.Equal(statuses, []dtq.Status{dtq.StatusQueued, dtq.StatusRunning, dtq.StatusSucceeded}) {
			t.Fatalf("events %v", statuses)
		}
	})
}

// After a burst has finished and expired, nothing of it is left in Redis.
func TestRetentionReturnsToBaseline(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		c, _ := dtq.NewClient(redisconn.Wrap(e.Client), &dtq.Config{Namespace: e.Namespace, Retention: 100 * time.Millisecond})
		e.c = c
		e.worker(nil, map[string]dtq.HandlerFunc{"job": func(context.Context, *dtq.Task) (any, error) { return "x", nil }})
		reqs := make([]dtq.EnqueueRequest, 200)
		for i := range reqs {
			reqs[i] = dtq.EnqueueRequest{Type: "job", Opts: &dtq.EnqueueOpts{IdempotencyKey: string(rune('a'+i%26)) + string(rune('0'+i/26))}}
		}
		if _, err := c.EnqueueMany(t.Context(), reqs); err != nil {
			t.Fatal(err)
		}
		eventually(t, 20*time.Second, "all 200 succeeded", func() bool {
			st, err := dtq.NewAdmin(c).Stats(t.Context(), "default")
			return err == nil && st.Succeeded == 200
		})
		k := store.NewKeys(e.Namespace, "default")
		count := func(pattern string) int {
			ks, _ := e.Client.Do(t.Context(), e.Client.B().Keys().Pattern(pattern).Build()).AsStrSlice()
			return len(ks)
		}
		deadline := time.Now().Add(20 * time.Second)
		for {
			tasks := count(e.Namespace + ":{default}:task:*")
			index, _ := e.Client.Do(t.Context(), e.Client.B().Xlen().Key(k.Done()).Build()).AsInt64()
			var streams int64
			for p := range store.Bands {
				n, _ := e.Client.Do(t.Context(), e.Client.B().Xlen().Key(k.Band(p)).Build()).AsInt64()
				streams += n
			}
			packed := hlen(t, e.Client, k.Finished())
			if tasks == 0 && index == 0 && streams == 0 && packed == 0 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("left after expiry: %d task hashes, %d packed records, %d done-index entries, %d band entries", tasks, packed, index, streams)
			}
			time.Sleep(50 * time.Millisecond)
		}
		// The idempotency records live for their own window (24h here).
		if n := count(e.Namespace + ":{default}:idem:*"); n != 200 {
			t.Fatalf("%d idempotency records, want 200", n)
		}
	})
}

// Workers register with a heartbeat and leave the registry when they stop.
func TestWorkerRegistry(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		w := e.worker(&dtq.WorkerConfig{ID: "reg-1", Queues: []string{"a", "b"}, Concurrency: 7}, nil)
		// Its queues exist from its Start, before any submission: admin
		// actions find them (CONTRACT 4.3.0).
		for _, q := range []string{"a", "b"} {
			if ok, err := e.a.QueueExists(t.Context(), q); err != nil || !ok {
				t.Fatalf("queue %s served by a started worker: exists %v (%v)", q, ok, err)
			}
		}
		if err := e.a.PauseQueue(t.Context(), "a"); err != nil {
			t.Fatalf("pausing a served queue before any submission: %v", err)
		}
		var ws []dtq.WorkerInfo
		deadline := time.Now().Add(10 * time.Second)
		for len(ws) == 0 && time.Now().Before(deadline) {
			ws, _ = e.a.Workers(t.Context())
			time.Sleep(5 * time.Millisecond)
		}
		if len(ws) != 1 || ws[0].ID != "reg-1" || !slices.Equal(ws[0].Queues, []string{"a", "b"}) || ws[0].Concurrency != 7 || ws[0].PID == 0 {
			t.Fatalf("workers %+v", ws)
		}
		// Busy counts running tasks, not the slots an idle reader holds.
		time.Sleep(50 * time.Millisecond) // the readers are waiting for tasks
		if ws, _ := e.a.Workers(t.Context()); len(ws) != 1 || ws[0].Busy != 0 {
			t.Fatalf("idle worker: %+v", ws)
		}
		w.Stop(t.Context())
		if ws, _ := e.a.Workers(t.Context()); len(ws) != 0 {
			t.Fatalf("after stop: %+v", ws)
		}
	})
}

// List pages through a queue's tasks by status: queued ones in the order
// they run (priority 9 first, oldest first within a priority), then
// scheduled ones; without a status, every task once.
func TestList(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		var low, high []string
		for i := range 25 {
			if i%3 == 0 {
				high = append(high, e.enqueue("job", nil, &dtq.EnqueueOpts{Priority: dtq.Ptr(9)}).ID)
			} else {
				low = append(low, e.enqueue("job", nil, nil).ID)
			}
		}
		sched := e.enqueue("job", nil, &dtq.EnqueueOpts{Delay: time.Hour})
		list := func(status dtq.Status) []string {
			var listed []string
			cursor := ""
			for {
				page, err := e.c.List(t.Context(), dtq.ListOpts{Queue: "default", Status: status, Limit: 10, Cursor: cursor})
				if err != nil {
					t.Fatal(err)
				}
				for _, task := range page.Tasks {
					listed = append(listed, task.ID)
				}
				if page.Next == "" {
					return listed
				}
				cursor = page.Next
			}
		}
		if listed, want := list(dtq.StatusQueued), append(slices.Clone(high), low...); !slices.Equal(listed, want) {
			t.Fatalf("listed %d tasks %v, want the 25 queued ones in run order %v", len(listed), listed, want)
		}
		if listed := list(dtq.StatusScheduled); !slices.Equal(listed, []string{sched.ID}) {
			t.Fatalf("scheduled: %v", listed)
		}
		if listed, want := list(""), append(append(slices.Clone(high), low...), sched.ID); !slices.Equal(listed, want) {
			t.Fatalf("all: %v, want %v", listed, want)
		}
		if _, err := e.c.List(t.Context(), dtq.ListOpts{Queue: "default", Status: "BOGUS"}); !errors.Is(err, dtq.ErrInvalid) {
			t.Fatalf("bad status: %v", err)
		}
		if _, err := e.c.List(t.Context(), dtq.ListOpts{Queue: "default", Cursor: "b12:1-0"}); !errors.Is(err, dtq.ErrInvalid) {
			t.Fatalf("bad cursor: %v", err)
		}
	})
}

// IdempotentOperation skips a side effect that already succeeded in an
// earlier execution of the task.
func TestIdempotentOperation(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		var charged atomic.Int32
		e.worker(fast(dtq.WorkerConfig{}), map[string]dtq.HandlerFunc{
			"charge": func(ctx context.Context, task *dtq.Task) (any, error) {
				err := dtq.IdempotentOperation(ctx, "charge:"+task.ID, func(context.Context) error {
					charged.Add(1)
					return nil
				})
				if err != nil {
					return nil, err
				}
				if task.Attempt == 1 {
					return nil, errors.New("crash after the charge")
				}
				return "ok", nil
			},
		})
		task := e.enqueue("charge", nil, nil)
		done := e.waitStatus(task.ID, dtq.StatusSucceeded, 10*time.Second)
		if done.Attempt != 2 || charged.Load() != 1 {
			t.Fatalf("attempts %d, charged %d times; want 2 and 1", done.Attempt, charged.Load())
		}
	})
}

// Stop lets a running handler finish; a queued task left behind is taken by
// another worker at once, not after a visibility timeout.
func TestStopIsGraceful(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		release := make(chan struct{})
		started := make(chan struct{}, 1)
		slow := func(context.Context, *dtq.Task) (any, error) {
			started <- struct{}{}
			<-release
			return "finished", nil
		}
		w := e.worker(&dtq.WorkerConfig{Concurrency: 1, VisibilityTimeout: time.Hour}, map[string]dtq.HandlerFunc{"slow": slow})
		first := e.enqueue("slow", nil, nil)
		<-started
		second := e.enqueue("slow", nil, nil)
		stopped := make(chan error, 1)
		go func() { stopped <- w.Stop(context.Background()) }()
		select {
		case err := <-stopped:
			t.Fatalf("Stop returned (%v) while a handler was still running", err)
		case <-time.After(100 * time.Millisecond):
		}
		close(release)
		if err := <-stopped; err != nil {
			t.Fatal(err)
		}
		e.waitStatus(first.ID, dtq.StatusSucceeded, time.Second) // finished during Stop
		e.worker(&dtq.WorkerConfig{VisibilityTimeout: time.Hour}, map[string]dtq.HandlerFunc{
			"slow": func(context.Context, *dtq.Task) (any, error) { return "ok", nil },
		})
		e.waitStatus(second.ID, dtq.StatusSucceeded, 5*time.Second)
	})
}

// A stop that cancels a read whose reply was in flight — Redis claimed a
// task for the worker (an idle reader's blocking read: its implicit start)
// and the worker never saw it — runs
// the task to its end as a claim made before the stop (once, no crash),
// rather than leaving it RUNNING without a handler until the visibility
// timeout. (Without the recovery on the stop the task stays RUNNING.)
func TestStopRunsClaimsOfALostReply(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		ran := make(chan string, 4)
		handler := func(_ context.Context, t *dtq.Task) (any, error) { ran <- t.ID; return "ok", nil }
		var lost atomic.Bool
		var w *dtq.Worker
		w = e.workerSet(&dtq.WorkerConfig{Concurrency: 1, VisibilityTimeout: time.Hour}, map[string]dtq.HandlerFunc{"job": handler},
			func(w0 *dtq.Worker) {
				dtq.LoseReply(w0, func(ctx context.Context) bool {
					if !lost.CompareAndSwap(false, true) {
						return false
					}
					go w.Stop(context.Background())
					<-ctx.Done()
					return true
				})
			})
		time.Sleep(300 * time.Millisecond) // idle: its reads block (the task's start is its claim)
		task := e.enqueue("job", nil, nil)
		eventually(t, 10*time.Second, "the reply lost", lost.Load)
		sctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
		defer cancel()
		if err := w.Stop(sctx); err != nil {
			t.Fatal(err)
		}
		got := e.waitStatus(task.ID, dtq.StatusSucceeded, 5*time.Second) // (well within the visibility timeout, an hour)
		if len(got.History) != 1 || got.Crashes != 0 {
			t.Fatalf("after the stop: %d runs, %d crashes; want one run, no crash", len(got.History), got.Crashes)
		}
		if id := <-ran; id != task.ID {
			t.Fatalf("ran %s", id)
		}
	})
}

// StopAndCancel cancels running handlers (cause ErrStopped); their tasks are
// retried.
func TestStopAndCancel(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		started := make(chan struct{}, 1)
		var cause atomic.Value
		w := e.worker(fast(dtq.WorkerConfig{}), map[string]dtq.HandlerFunc{"slow": func(ctx context.Context, _ *dtq.Task) (any, error) {
			started <- struct{}{}
			<-ctx.Done()
			cause.Store(context.Cause(ctx))
			return nil, ctx.Err()
		}})
		task := e.enqueue("slow", nil, nil)
		<-started
		if err := w.StopAndCancel(t.Context()); err != nil {
			t.Fatal(err)
		}
		if c, _ := cause.Load().(error); !errors.Is(c, dtq.ErrStopped) {
			t.Fatalf("handler context cause %v, want ErrStopped", c)
		}
		got, _ := e.c.Get(t.Context(), task.ID)
		if got.Status != dtq.StatusScheduled && got.Status != dtq.StatusQueued {
			t.Fatalf("after StopAndCancel the task is %s, want it waiting to run again", got.Status)
		}
	})
}

// Bad configuration and arguments are errors naming the field.
func TestEngineValidation(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		for _, cfg := range []*dtq.Config{{Namespace: "a b"}, {Retention: -time.Second}, {MaxDepth: -1}, {QueueMaxDepth: map[string]int64{"x y": 1}}} {
			if _, err := dtq.NewClient(redisconn.Wrap(e.Client), cfg); !errors.Is(err, dtq.ErrInvalid) {
				t.Errorf("config %+v: %v", cfg, err)
			}
		}
		for _, cfg := range []*dtq.WorkerConfig{{Queues: []string{"bad queue"}}, {Queues: []string{"a", "a"}}, {Concurrency: -1},
			{VisibilityTimeout: time.Millisecond}, {BackoffBase: time.Minute, BackoffMax: time.Second}} {
			if _, err := dtq.NewWorker(e.c, cfg); !errors.Is(err, dtq.ErrInvalid) {
				t.Errorf("worker config %+v: %v", cfg, err)
			}
		}
		bad := []dtq.EnqueueOpts{{Queue: "no/slash"}, {Priority: dtq.Ptr(-1)}, {MaxAttempts: -2}, {Timeout: -time.Second},
			{Delay: -time.Second}, {Delay: time.Second, RunAt: time.Now()}}
		for _, o := range bad {
			_, err := e.c.Enqueue(t.Context(), "job", nil, &o)
			var ve *dtq.ValidationError
			if !errors.As(err, &ve) || ve.Field == "" {
				t.Errorf("opts %+v: %v, want a ValidationError naming the field", o, err)
			}
		}
		if _, err := e.c.Enqueue(t.Context(), "", nil, nil); !errors.Is(err, dtq.ErrInvalid) {
			t.Errorf("empty type: %v", err)
		}
		if _, err := e.c.Enqueue(t.Context(), "job", []byte("{not json"), nil); !errors.Is(err, dtq.ErrInvalid) {
			t.Errorf("invalid JSON payload: %v", err)
		}
		if _, err := e.c.Get(t.Context(), "nonsense"); !errors.Is(err, dtq.ErrNotFound) {
			t.Errorf("get of a malformed id: %v", err)
		}
	})
}

// Queue and schedule names follow one rule wherever the library takes
// them: names made only of dots ("." and "..", steps of a URL path) are
// refused like any other bad name, with a ValidationError naming the
// field, and nothing is written.
func TestNamesAreNotOnlyDots(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		ctx := t.Context()
		for _, name := range []string{".", "..", "..."} {
			want := func(what string, err error, field string) {
				t.Helper()
				var ve *dtq.ValidationError
				if !errors.As(err, &ve) || ve.Field != field || !strings.Contains(ve.Problem, "not only dots") {
					t.Errorf("%s(%q): %v, want a ValidationError of %s stating the rule", what, name, err, field)
				}
			}
			_, err := e.c.Enqueue(ctx, "job", nil, &dtq.EnqueueOpts{Queue: name})
			want("Enqueue", err, "queue")
			res, err := e.c.EnqueueMany(ctx, []dtq.EnqueueRequest{{Type: "job", Opts: &dtq.EnqueueOpts{Queue: name}}})
			if err != nil || len(res) != 1 {
				t.Fatalf("EnqueueMany: %v %v", res, err)
			}
			want("EnqueueMany", res[0].Err, "queue")
			_, err = dtq.NewWorker(e.c, &dtq.WorkerConfig{Queues: []string{name}})
			want("NewWorker", err, "WorkerConfig.Queues")
			_, err = e.a.Stats(ctx, name)
			want("Stats", err, "queue")
			want("PauseQueue", e.a.PauseQueue(ctx, name), "queue")
			_, err = e.c.List(ctx, dtq.ListOpts{Queue: name})
			want("List", err, "queue")
			_, _, err = e.a.ListDead(ctx, name, 10, "")
			want("ListDead", err, "queue")
			_, err = e.a.UpsertSchedule(ctx, dtq.Schedule{Name: name, Cron: "@hourly", TaskType: "job"})
			want("UpsertSchedule", err, "name")
			_, err = e.a.UpsertSchedule(ctx, dtq.Schedule{Name: "n", Queue: name, Cron: "@hourly", TaskType: "job"})
			want("UpsertSchedule", err, "queue")
			_, err = e.a.GetSchedule(ctx, "", name)
			want("GetSchedule", err, "name")
			want("DeleteSchedule", e.a.DeleteSchedule(ctx, "", name), "name")
			want("PauseSchedule", e.a.PauseSchedule(ctx, "", name), "name")
			_, err = e.a.ListSchedules(ctx, name)
			want("ListSchedules", err, "queue")
		}
		if qs, err := e.a.Queues(ctx); err != nil || len(qs) != 0 {
			t.Errorf("refused names made queues: %v %v", qs, err)
		}
	})
}

// Finished tasks page newest first, each exactly once, across the done
// index's entries (one per finish batch).
func TestListFinishedPages(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		e.worker(&dtq.WorkerConfig{Concurrency: 16}, map[string]dtq.HandlerFunc{"job": func(context.Context, *dtq.Task) (any, error) { return nil, nil }})
		reqs := make([]dtq.EnqueueRequest, 120)
		for i := range reqs {
			reqs[i] = dtq.EnqueueRequest{Type: "job"}
		}
		res, err := e.c.EnqueueMany(t.Context(), reqs)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range res {
			e.waitStatus(r.Task.ID, dtq.StatusSucceeded, 20*time.Second)
		}
		seen := map[string]bool{}
		var last time.Time
		cursor, pages := "", 0
		for {
			page, err := e.c.List(t.Context(), dtq.ListOpts{Queue: "default", Status: dtq.StatusSucceeded, Limit: 7, Cursor: cursor})
			if err != nil {
				t.Fatal(err)
			}
			pages++
			for _, task := range page.Tasks {
				if seen[task.ID] {
					t.Fatalf("%s listed twice", task.ID)
				}
				seen[task.ID] = true
				if !last.IsZero() && task.FinishedAt.After(last) {
					t.Fatalf("%s finished at %v, after the one listed before it (%v): not newest first", task.ID, task.FinishedAt, last)
				}
				last = *task.FinishedAt
			}
			if page.Next == "" {
				break
			}
			cursor = page.Next
		}
		if len(seen) != 120 || pages < 120/7 {
			t.Fatalf("listed %d of 120 finished tasks in %d pages", len(seen), pages)
		}
	})
}

// A worker serving a queue full of long tasks and another queue keeps
// serving the other one: each queue has its share of the slots.
func TestQueueSharesDoNotStarve(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		release := make(chan struct{})
		defer close(release)
		var mu sync.Mutex
		running := map[string]int{}
		e.worker(&dtq.WorkerConfig{Queues: []string{"long", "short"}, Concurrency: 4, QueueWeights: map[string]int{"long": 3}},
			map[string]dtq.HandlerFunc{
				"hold": func(ctx context.Context, task *dtq.Task) (any, error) {
					mu.Lock()
					running[task.Queue]++
					mu.Unlock()
					select {
					case <-release:
					case <-ctx.Done():
					}
					return nil, nil
				},
				"quick": func(context.Context, *dtq.Task) (any, error) { return nil, nil },
			})
		for range 10 {
			e.enqueue("hold", nil, &dtq.EnqueueOpts{Queue: "long"})
		}
		eventually(t, 10*time.Second, "the long queue's share busy", func() bool {
			mu.Lock()
			defer mu.Unlock()
			return running["long"] == 3
		})
		for range 3 {
			task := e.enqueue("quick", nil, &dtq.EnqueueOpts{Queue: "short"})
			e.waitStatus(task.ID, dtq.StatusSucceeded, 10*time.Second)
		}
		mu.Lock()
		defer mu.Unlock()
		if running["long"] != 3 {
			t.Errorf("the long queue ran %d at once, want its share 3 of 4", running["long"])
		}
	})
}

func TestQueueWeightsValidation(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		for _, cfg := range []*dtq.WorkerConfig{
			{Queues: []string{"a"}, QueueWeights: map[string]int{"b": 1}},
			{Queues: []string{"a", "b"}, QueueWeights: map[string]int{"a": 0}},
			{Queues: []string{"a", "b"}, QueueWeights: map[string]int{"a": 1001}},
		} {
			_, err := dtq.NewWorker(e.c, cfg)
			var ve *dtq.ValidationError
			if !errors.As(err, &ve) || ve.Field != "WorkerConfig.QueueWeights" {
				t.Errorf("%v: %v, want a ValidationError of WorkerConfig.QueueWeights", cfg.QueueWeights, err)
			}
		}
	})
}

// The same with a separate worker process serving queues long and short
// (2 slots each of 4): long's tasks never end, and short's still run.
func TestQueueSharesDoNotStarveAcrossProcesses(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		ctx := t.Context()
		effects := childEffectsEnv + "=" + filepath.Join(t.TempDir(), "effects") // nap logs its runs
		startChildWorker(t, e, "shared", 5*time.Second, childQueuesEnv+"=long,short", childConcurrencyEnv+"=4", effects)
		for range 10 {
			e.enqueue("block", nil, &dtq.EnqueueOpts{Queue: "long"})
		}
		eventually(t, 10*time.Second, "the long queue's share busy", func() bool {
			st, err := e.a.Stats(ctx, "long")
			return err == nil && st.Running == 2
		})
		for range 3 {
			task := e.enqueue("nap", 0, &dtq.EnqueueOpts{Queue: "short"})
			e.waitStatus(task.ID, dtq.StatusSucceeded, 10*time.Second)
		}
		if st, err := e.a.Stats(ctx, "long"); err != nil || st.Running != 2 || st.Queued != 8 {
			t.Errorf("long: %+v %v, want its share of 2 running and 8 queued", st, err)
		}
	})
}
