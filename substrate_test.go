package dtq_test

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dtq-dev/dtq"
	"github.com/dtq-dev/dtq/internal/redisconn"
	"github.com/dtq-dev/dtq/internal/store"
	"github.com/dtq-dev/dtq/queue"
)

// The engine's workers and the queue's subscriptions accept the same
// shortest visibility timeout (they differed: 20 ms and 4 ms).
func TestVisibilityMinimumShared(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		q, err := queue.New(redisconn.Wrap(e.Client), "vis", &queue.Config{Namespace: e.Namespace})
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range []time.Duration{19 * time.Millisecond, 20 * time.Millisecond} {
			_, werr := dtq.NewWorker(e.c, &dtq.WorkerConfig{VisibilityTimeout: d})
			sub, serr := q.Subscribe(t.Context(), map[string]int{"t": 0}, &queue.SubscribeOpts{VisibilityTimeout: d})
			if sub != nil {
				sub.Close(t.Context())
			}
			if (werr == nil) != (serr == nil) || (d < 20*time.Millisecond) != (werr != nil) {
				t.Errorf("visibility timeout %v: worker %v, subscription %v; want both refused below 20ms, both accepted from it", d, werr, serr)
			}
		}
	})
}

// The end of the context a Worker was started with stops it, as the end of
// a Subscription's context closes it: running handlers are cancelled
// (ErrStopped) and their tasks retried, and the worker leaves the registry.
// (It used to go on.)
func TestWorkerStopsWhenStartContextEnds(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		w, err := dtq.NewWorker(e.c, fast(dtq.WorkerConfig{ID: "ctx-bound"}))
		if err != nil {
			t.Fatal(err)
		}
		cause, started := make(chan error, 1), make(chan struct{})
		w.Handle("long", func(ctx context.Context, _ *dtq.Task) (any, error) {
			close(started)
			<-ctx.Done()
			cause <- context.Cause(ctx)
			return nil, ctx.Err()
		})
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		if err := w.Start(ctx); err != nil {
			t.Fatal(err)
		}
		task := e.enqueue("long", nil, nil)
		select { // (RUNNING from its claim: its handler starts just after)
		case <-started:
		case <-time.After(10 * time.Second):
			t.Fatal("the handler never started")
		}
		cancel()
		select {
		case err := <-cause:
			if !errors.Is(err, dtq.ErrStopped) {
				t.Fatalf("handler's context ended with %v, want ErrStopped", err)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("the handler was not cancelled when the worker's context ended")
		}
		// Recorded as a retry due at once: SCHEDULED, or QUEUED already if
		// the stopping worker's scheduler promoted it before it stopped.
		var got *dtq.Task
		eventually(t, 10*time.Second, "the stopped run recorded as a retry", func() bool {
			var err error
			got, err = e.c.Get(t.Context(), task.ID)
			return err == nil && len(got.History) == 1 &&
				(got.Status == dtq.StatusScheduled || got.Status == dtq.StatusQueued)
		})
		if got.History[0].Outcome != dtq.OutcomeRetried {
			t.Fatalf("history %+v, want the stopped run recorded as a retry", got.History)
		}
		eventually(t, 10*time.Second, "the worker out of the registry", func() bool {
			ws, err := e.a.Workers(t.Context())
			return err == nil && len(ws) == 0
		})
	})
}

// A band entry that is no task (written by something else) is dead-lettered
// with its fields as the reason, and the worker goes on (DESIGN rule 7; the
// engine used to drop it silently).
func TestMalformedBandEntryDeadLettered(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		e.worker(fast(dtq.WorkerConfig{}), map[string]dtq.HandlerFunc{"ok": func(context.Context, *dtq.Task) (any, error) { return 1, nil }})
		band := store.NewKeys(e.Namespace, dtq.DefaultQueue).Band(dtq.DefaultPriority)
		if err := e.Client.Do(t.Context(), e.Client.B().Xadd().Key(band).Id("*").FieldValue().FieldValue("junk", "x").Build()).Error(); err != nil {
			t.Fatal(err)
		}
		after := e.enqueue("ok", nil, nil)
		e.waitStatus(after.ID, dtq.StatusSucceeded, 10*time.Second)
		var letters []dtq.DeadLetter
		eventually(t, 10*time.Second, "the malformed entry dead-lettered", func() bool {
			letters, _, _ = e.a.ListDead(t.Context(), dtq.DefaultQueue, 10, "")
			return len(letters) == 1
		})
		if !strings.Contains(letters[0].Reason, "malformed band entry") || !strings.Contains(letters[0].Reason, "junk=x") ||
			letters[0].Task.Status != dtq.StatusDead {
			t.Fatalf("dead letter %+v (task %+v)", letters[0], letters[0].Task)
		}
	})
}

// A namespace holding data of another key layout is refused — by
// Worker.Start, a submission and CheckLayout — with an error naming both
// versions; data of the first layout (which recorded none) is recognised.
func TestLayoutMismatchRefused(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		for _, c := range []struct {
			setup func() error
			found string
		}{
			{func() error {
				return e.Client.Do(t.Context(), e.Client.B().Set().Key(store.LayoutKey(e.Namespace)).Value("7").Build()).Error()
			}, "7"},
			{func() error {
				e.Client.Do(t.Context(), e.Client.B().Del().Key(store.LayoutKey(e.Namespace)).Build())
				return e.Client.Do(t.Context(), e.Client.B().Sadd().Key(store.QueuesKey(e.Namespace)).Member("old").Build()).Error()
			}, "1"},
		} {
			if err := c.setup(); err != nil {
				t.Fatal(err)
			}
			client, err := dtq.NewClient(redisconn.Wrap(e.Client), &dtq.Config{Namespace: e.Namespace})
			if err != nil {
				t.Fatal(err)
			}
			w, err := dtq.NewWorker(client, nil)
			if err != nil {
				t.Fatal(err)
			}
			var le *dtq.LayoutError
			err = w.Start(t.Context())
			if !errors.As(err, &le) || le.Found != c.found || le.Want != store.Layout || !strings.Contains(err.Error(), c.found) {
				t.Fatalf("Worker.Start on layout %s: %v", c.found, err)
			}
			if _, err := client.Enqueue(t.Context(), "x", nil, nil); !errors.Is(err, dtq.ErrLayout) {
				t.Fatalf("Enqueue on layout %s: %v", c.found, err)
			}
			if err := dtq.NewAdmin(client).CheckLayout(t.Context()); !errors.As(err, &le) {
				t.Fatalf("CheckLayout on layout %s: %v", c.found, err)
			}
		}
	})
}

// A band's consumer group destroyed after its tasks finished is recreated
// at id 0, and delivers again the entries of finished tasks not yet
// trimmed: they are recognised by their records (a packed record, or a
// hash for a task that was retried) and not run again; tasks submitted
// after the loss run once.
func TestGroupDestroyedDoesNotRerunFinished(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		t.Run("kept", func(t *testing.T) { groupDestroyedAfterFinish(t, e, true) })
		none, err := dtq.NewClient(redisconn.Wrap(e.Client), &dtq.Config{Namespace: e.Namespace + "-none", Retention: dtq.RetainNone})
		if err != nil {
			t.Fatal(err)
		}
		ne := &env{Backend: e.Backend, t: t, c: none}
		ne.Namespace = e.Namespace + "-none"
		t.Run("retention none", func(t *testing.T) { ne.t = t; groupDestroyedAfterFinish(t, ne, false) })
	})
}

// groupDestroyedAfterFinish runs 30 tasks (3 fail once), destroys their
// band's group and runs 3 more; kept says whether succeeded tasks keep
// their records (their entries then linger until trimmed).
func groupDestroyedAfterFinish(t *testing.T, e *env, kept bool) {
	{
		var mu sync.Mutex
		runs := map[string]int{}
		// A task submitted between the group's loss and its recreation
		// waits for the visibility timeout: its start cannot tell it from
		// an implicit first run the lost group held (engine.md).
		e.worker(&dtq.WorkerConfig{Concurrency: 4, BackoffBase: time.Millisecond, BackoffMax: 5 * time.Millisecond,
			VisibilityTimeout: time.Second},
			map[string]dtq.HandlerFunc{
				"job": func(_ context.Context, task *dtq.Task) (any, error) {
					mu.Lock()
					runs[task.ID]++
					mu.Unlock()
					if string(task.Payload) == `"flaky"` && task.Attempt == 1 {
						return nil, errors.New("first attempt fails")
					}
					return "ok", nil
				},
			})
		var before []string
		for i := range 30 {
			payload := any(i)
			if i%10 == 0 {
				payload = "flaky"
			}
			before = append(before, e.enqueue("job", payload, nil).ID)
		}
		finished := func(ids []string) {
			for _, id := range ids {
				if kept {
					e.waitStatus(id, dtq.StatusSucceeded, 10*time.Second)
					continue
				}
				eventually(t, 10*time.Second, id+" succeeded and gone", func() bool {
					_, err := e.c.Get(t.Context(), id)
					return errors.Is(err, dtq.ErrNotFound)
				})
			}
		}
		finished(before)
		band := store.NewKeys(e.Namespace, dtq.DefaultQueue).Band(dtq.DefaultPriority)
		n, err := e.Client.Do(t.Context(), e.Client.B().Xlen().Key(band).Build()).AsInt64()
		if err != nil {
			t.Fatal(err)
		}
		if kept && n == 0 {
			t.Fatal("the band holds no entries: no acknowledged leftovers, the test proves nothing")
		}
		if !kept && n != 0 {
			t.Errorf("retention none: the band holds %d entries of finished tasks, want none", n)
		}
		if err := e.Client.Do(t.Context(), e.Client.B().XgroupDestroy().Key(band).Group(store.Group).Build()).Error(); err != nil {
			t.Fatal(err)
		}
		// Submitted after the loss, these come after the leftovers in the
		// band: once they ran, the leftovers were delivered again.
		var after []string
		for i := range 3 {
			after = append(after, e.enqueue("job", 100+i, nil).ID)
		}
		finished(after)
		mu.Lock()
		defer mu.Unlock()
		for i, id := range before {
			want := 1
			if i%10 == 0 {
				want = 2
			}
			if runs[id] != want {
				t.Errorf("task %d (%s) ran %d times, want %d", i, id, runs[id], want)
			}
		}
		for _, id := range after {
			if runs[id] != 1 {
				t.Errorf("task %s submitted after the loss ran %d times, want 1", id, runs[id])
			}
		}
	}
}

// TestBacklogBeforeFirstWorkerIsNotSuspect: tasks submitted before any
// worker ran meet their band's first consumer group, which marks none of
// them as possible leftovers (else every one of them would be looked up
// in fin and as a hash before it starts: a drain at half speed).
func TestBacklogBeforeFirstWorkerIsNotSuspect(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		var ids []string
		for i := range 5 {
			ids = append(ids, e.enqueue("job", i, nil).ID)
		}
		e.worker(&dtq.WorkerConfig{Concurrency: 2}, map[string]dtq.HandlerFunc{
			"job": func(context.Context, *dtq.Task) (any, error) { return nil, nil },
		})
		for _, id := range ids {
			e.waitStatus(id, dtq.StatusSucceeded, 10*time.Second)
		}
		info := store.NewKeys(e.Namespace, dtq.DefaultQueue).Info()
		field := store.InfoRegrouped + strconv.Itoa(dtq.DefaultPriority)
		got, err := e.Client.Do(t.Context(), e.Client.B().Hget().Key(info).Field(field).Build()).ToString()
		if err != nil {
			t.Fatalf("HGET %s %s: %v", info, field, err)
		}
		if got != "0-0" {
			t.Errorf("info %s = %q after the band's first group, want \"0-0\" (no entry suspect)", field, got)
		}
	})
}
