package dtq_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/dtq-dev/dtq"
)

// debounceRun is one run of a debounced task: its id and payload.
type debounceRun struct {
	id      string
	payload string
}

// runsOf starts a worker on queue that reports every run of task type
// "d" on the returned channel.
func runsOf(e *env, queue string) chan debounceRun {
	runs := make(chan debounceRun, 100)
	e.worker(fast(dtq.WorkerConfig{Queues: []string{queue}}), map[string]dtq.HandlerFunc{
		"d": func(_ context.Context, task *dtq.Task) (any, error) {
			runs <- debounceRun{task.ID, string(task.Payload)}
			return nil, nil
		},
	})
	return runs
}

// 1,000 submissions of one key in 10 bursts of 100 — each burst sent
// within the period, the next once the burst's task ran — make exactly 10
// runs, each with its burst's last payload (its first with KeepFirst, in
// the odd bursts); every submission of a burst names the burst's task.
func TestDebounceBursts(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		runs := runsOf(e, "deb")
		seen := map[string]bool{}
		for burst := range 10 {
			keep := burst%2 == 1
			opts := &dtq.EnqueueOpts{Queue: "deb", Debounce: &dtq.DebounceOpts{Key: "doc-7", Period: time.Second, KeepFirst: keep}}
			var id string
			for n := range 100 {
				res, err := e.c.Enqueue(t.Context(), "d", map[string]int{"burst": burst, "n": n}, opts)
				if err != nil {
					t.Fatal(err)
				}
				if n == 0 {
					id = res.Task.ID
					if res.Debounced || seen[id] {
						t.Fatalf("burst %d: its first submission joined %s, want a new task", burst, id)
					}
					seen[id] = true
					continue
				}
				if !res.Debounced || res.Task.ID != id || res.Task.Status != dtq.StatusScheduled {
					t.Fatalf("burst %d, submission %d: %+v, want it joined %s", burst, n, res, id)
				}
				want := n
				if keep {
					want = 0
				}
				if got := string(res.Task.Payload); got != fmt.Sprintf(`{"burst":%d,"n":%d}`, burst, want) {
					t.Fatalf("burst %d, submission %d: the task's payload is %s", burst, n, got)
				}
			}
			r := <-runs
			want := 99
			if keep {
				want = 0
			}
			if r.id != id || r.payload != fmt.Sprintf(`{"burst":%d,"n":%d}`, burst, want) {
				t.Fatalf("burst %d ran %+v, want %s with submission %d's payload", burst, r, id, want)
			}
		}
		select {
		case r := <-runs:
			t.Errorf("an 11th run: %+v", r)
		default:
		}
		if len(seen) != 10 {
			t.Errorf("%d tasks, want 10", len(seen))
		}
	})
}

// A steady stream of submissions, each within the period of the one
// before, runs its task MaxWait after the first: every due time is capped
// there, and the task runs while the submissions go on (without the cap it
// would never run); the submissions after it make a new task.
func TestDebounceMaxWait(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		runs := runsOf(e, "deb")
		opts := &dtq.EnqueueOpts{Queue: "deb", Debounce: &dtq.DebounceOpts{Key: "k", Period: 500 * time.Millisecond, MaxWait: time.Second}}
		first, err := e.c.Enqueue(t.Context(), "d", 0, opts)
		if err != nil {
			t.Fatal(err)
		}
		limit := first.Task.CreatedAt.Add(time.Second)
		tick := time.NewTicker(50 * time.Millisecond)
		defer tick.Stop()
		giveUp := time.After(20 * time.Second)
		for n := 1; ; n++ {
			select {
			case r := <-runs:
				if r.id != first.Task.ID {
					t.Fatalf("ran %+v, want %s", r, first.Task.ID)
				}
				res, err := e.c.Enqueue(t.Context(), "d", n, opts)
				if err != nil || res.Task.ID == first.Task.ID {
					t.Fatalf("a submission after the run: %+v %v, want another task", res, err)
				}
				return
			case <-giveUp:
				t.Fatal("the task did not run while the submissions went on")
			case <-tick.C:
			}
			res, err := e.c.Enqueue(t.Context(), "d", n, opts)
			if err != nil {
				t.Fatal(err)
			}
			if res.Task.ID != first.Task.ID {
				continue // (it came due before its run was reported: this is the next task)
			}
			if res.Task.ScheduledAt != nil && res.Task.ScheduledAt.After(limit) {
				t.Fatalf("submission %d made the task due at %v, past the first + MaxWait (%v)", n, res.Task.ScheduledAt, limit)
			}
		}
	})
}

// Different keys, and the same key of another type, are different tasks,
// each with its own last payload.
func TestDebounceKeysIndependent(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		ids := map[string]string{}
		for n := range 3 {
			for _, typ := range []string{"a", "b"} {
				for _, key := range []string{"x", "y"} {
					res, err := e.c.Enqueue(t.Context(), typ, n, &dtq.EnqueueOpts{Queue: "idle", Debounce: &dtq.DebounceOpts{Key: key, Period: time.Hour}})
					if err != nil {
						t.Fatal(err)
					}
					name := typ + "/" + key
					if res.Debounced != (n > 0) || n > 0 && ids[name] != res.Task.ID {
						t.Fatalf("%s, submission %d: %+v, want it to join %q", name, n, res, ids[name])
					}
					ids[name] = res.Task.ID
				}
			}
		}
		distinct := map[string]bool{}
		for name, id := range ids {
			distinct[id] = true
			task, err := e.c.Get(t.Context(), id)
			if err != nil || string(task.Payload) != "2" || task.Status != dtq.StatusScheduled {
				t.Errorf("%s: %+v %v, want SCHEDULED with payload 2", name, task, err)
			}
		}
		if len(distinct) != 4 {
			t.Errorf("%d tasks, want 4", len(distinct))
		}
		// another queue too
		res, err := e.c.Enqueue(t.Context(), "a", 9, &dtq.EnqueueOpts{Queue: "idle2", Debounce: &dtq.DebounceOpts{Key: "x", Period: time.Hour}})
		if err != nil || res.Debounced {
			t.Errorf("another queue: %+v %v, want a new task", res, err)
		}
	})
}

// 100 concurrent submissions of one key make one task: one creates it,
// 99 join it.
func TestDebounceUnderConcurrentSubmissions(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		var mu sync.Mutex
		ids := map[string]int{}
		joined := 0
		var wg sync.WaitGroup
		for i := range 100 {
			wg.Go(func() {
				res, err := e.c.Enqueue(t.Context(), "d", i, &dtq.EnqueueOpts{Queue: "idle", Debounce: &dtq.DebounceOpts{Key: "k", Period: time.Hour}})
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				defer mu.Unlock()
				ids[res.Task.ID]++
				if res.Debounced {
					joined++
				}
			})
		}
		wg.Wait()
		if len(ids) != 1 || joined != 99 {
			t.Errorf("%d tasks (%v), %d joined; want one task, 99 joined", len(ids), ids, joined)
		}
	})
}

// Bad debounce options are refused naming the field, and nothing is
// written.
func TestDebounceValidation(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		ok := dtq.DebounceOpts{Key: "k", Period: time.Second}
		with := func(f func(*dtq.EnqueueOpts)) *dtq.EnqueueOpts {
			d := ok
			o := &dtq.EnqueueOpts{Queue: "idle", Debounce: &d}
			f(o)
			return o
		}
		for _, tc := range []struct {
			field string
			opts  *dtq.EnqueueOpts
		}{
			{"debounce.key", with(func(o *dtq.EnqueueOpts) { o.Debounce.Key = "" })},
			{"debounce.key", with(func(o *dtq.EnqueueOpts) { o.Debounce.Key = string(make([]byte, 257)) })},
			{"debounce.key", with(func(o *dtq.EnqueueOpts) { o.Debounce.Key = "\xff" })},
			{"debounce.period", with(func(o *dtq.EnqueueOpts) { o.Debounce.Period = 0 })},
			{"debounce.period", with(func(o *dtq.EnqueueOpts) { o.Debounce.Period = time.Microsecond })},
			{"debounce.period", with(func(o *dtq.EnqueueOpts) { o.Debounce.Period = dtq.MaxDelay + time.Second })},
			{"debounce.max_wait", with(func(o *dtq.EnqueueOpts) { o.Debounce.MaxWait = time.Millisecond })},
			{"debounce.max_wait", with(func(o *dtq.EnqueueOpts) { o.Debounce.MaxWait = -time.Second })},
			{"debounce.max_wait", with(func(o *dtq.EnqueueOpts) { o.Debounce.MaxWait = dtq.MaxDelay + time.Second })},
			{"debounce", with(func(o *dtq.EnqueueOpts) { o.IdempotencyKey = "i" })},
			{"debounce", with(func(o *dtq.EnqueueOpts) { o.Unique = &dtq.UniqueOpts{} })},
			{"debounce", with(func(o *dtq.EnqueueOpts) { o.OrderKey = "o" })},
			{"debounce", with(func(o *dtq.EnqueueOpts) { o.Delay = time.Second })},
			{"debounce", with(func(o *dtq.EnqueueOpts) { o.RunAt = time.Now().Add(time.Hour) })},
		} {
			_, err := e.c.Enqueue(t.Context(), "d", nil, tc.opts)
			var v *dtq.ValidationError
			if !errors.As(err, &v) || v.Field != tc.field {
				t.Errorf("%+v: %v, want a ValidationError of %s", tc.opts.Debounce, err, tc.field)
			}
		}
		// a batch refuses the item alone
		out, err := e.c.EnqueueMany(t.Context(), []dtq.EnqueueRequest{
			{Type: "d", Opts: with(func(o *dtq.EnqueueOpts) { o.Debounce.Period = 0 })},
			{Type: "d", Opts: with(func(*dtq.EnqueueOpts) {})},
			{Type: "d", Payload: 2, Opts: with(func(*dtq.EnqueueOpts) {})},
		})
		if err != nil || out[0].Err == nil || out[1].Err != nil || out[2].Err != nil || out[1].Debounced == out[2].Debounced ||
			out[2].Task.ID != out[1].Task.ID {
			t.Fatalf("batch: %+v %v, want the first refused and the others one task (one created, one joined)", out, err)
		}
		if st, err := e.a.Stats(t.Context(), "idle"); err != nil || st.Scheduled != 1 {
			t.Errorf("stats: %+v %v, want the one task", st, err)
		}
		// a workflow's task takes none
		_, err = e.c.EnqueueWorkflow(t.Context(), dtq.Call("d", nil, with(func(o *dtq.EnqueueOpts) { o.Queue = "" })), &dtq.WorkflowOpts{Queue: "idle"})
		var v *dtq.ValidationError
		if !errors.As(err, &v) || v.Field != "root.task.debounce" {
			t.Errorf("a workflow's debounced task: %v, want a ValidationError of root.task.debounce", err)
		}
	})
}
