package dtq_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/dtq-dev/dtq"
)

// Grouped tasks through every way into the bands — submitted past their
// group's window, delayed, retried, requeued from the dead letters, unique —
// all run, each once per attempt, and leave nothing waiting.
func TestGroupedTasksThroughEveryPath(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		ctx := t.Context()
		var mu sync.Mutex
		runs := map[string]int{}
		count := func(id string) int {
			mu.Lock()
			defer mu.Unlock()
			runs[id]++
			return runs[id]
		}
		var dieOnce sync.Map
		e.worker(&dtq.WorkerConfig{Concurrency: 4}, map[string]dtq.HandlerFunc{
			"ok": func(_ context.Context, t *dtq.Task) (any, error) { count(t.ID); return nil, nil },
			"flaky": func(_ context.Context, t *dtq.Task) (any, error) {
				if count(t.ID) == 1 {
					return nil, dtq.RetryAfter(10*time.Millisecond, errors.New("first time"))
				}
				return nil, nil
			},
			"die": func(_ context.Context, t *dtq.Task) (any, error) {
				count(t.ID)
				if _, loaded := dieOnce.LoadOrStore(t.ID, true); !loaded {
					return nil, dtq.Permanent(errors.New("first time"))
				}
				return nil, nil
			},
		})
		var ids []string
		add := func(typ string, o dtq.EnqueueOpts) string {
			o.Group = "g"
			id := e.enqueue(typ, nil, &o).ID
			ids = append(ids, id)
			return id
		}
		for range 25 {
			add("ok", dtq.EnqueueOpts{})
		}
		for range 12 {
			add("ok", dtq.EnqueueOpts{Delay: 50 * time.Millisecond})
			add("flaky", dtq.EnqueueOpts{MaxAttempts: 2})
		}
		u := add("ok", dtq.EnqueueOpts{Unique: &dtq.UniqueOpts{Key: "u1"}})
		dead := add("die", dtq.EnqueueOpts{MaxAttempts: 1})
		e.waitStatus(dead, dtq.StatusDead, 10*time.Second)
		if _, err := dtq.NewAdmin(e.c).Requeue(ctx, dead); err != nil {
			t.Fatal(err)
		}
		for _, id := range ids {
			task := e.waitStatus(id, dtq.StatusSucceeded, 20*time.Second)
			if task.Group != "g" {
				t.Errorf("task %s: group %q, want g", id, task.Group)
			}
		}
		mu.Lock()
		for _, id := range ids {
			want := 1
			if id == dead {
				want = 2
			}
			if task, _ := e.c.Get(ctx, id); task.Type == "flaky" {
				want = 2
			}
			if runs[id] != want {
				t.Errorf("task %s ran %d times, want %d", id, runs[id], want)
			}
		}
		mu.Unlock()
		if runs[u] != 1 {
			t.Errorf("the unique task ran %d times", runs[u])
		}
		st, err := dtq.NewAdmin(e.c).Stats(ctx, dtq.DefaultQueue)
		if err != nil || st.Queued != 0 || st.GroupWaiting != 0 || st.Running != 0 {
			t.Errorf("stats after: %+v %v", st, err)
		}
	})
}
