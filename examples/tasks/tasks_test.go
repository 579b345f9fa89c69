package tasks_test

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/dtq-dev/dtq"
	"github.com/dtq-dev/dtq/examples/tasks"
	"github.com/dtq-dev/dtq/internal/redisconn"
	"github.com/dtq-dev/dtq/internal/redistest"
)

func TestMain(m *testing.M) { os.Exit(redistest.Main(m)) }

func TestExampleHandlers(t *testing.T) {
	redistest.ForEachBackend(t, func(t *testing.T, b *redistest.Backend) {
		c, err := dtq.NewClient(redisconn.Wrap(b.Client), &dtq.Config{Namespace: b.Namespace})
		if err != nil {
			t.Fatal(err)
		}
		w, _ := dtq.NewWorker(c, &dtq.WorkerConfig{BackoffBase: time.Millisecond, BackoffMax: 2 * time.Millisecond})
		tasks.Register(w)
		w.Start(context.Background())
		defer w.Stop(context.Background())
		enqueue := func(typ, payload string, o *dtq.EnqueueOpts) string {
			res, err := c.Enqueue(t.Context(), typ, []byte(payload), o)
			if err != nil {
				t.Fatal(err)
			}
			return res.Task.ID
		}
		wait := func(id string, want dtq.Status) *dtq.Task {
			deadline := time.Now().Add(10 * time.Second)
			for {
				task, err := c.Get(t.Context(), id)
				if err == nil && task.Status == want {
					return task
				}
				if time.Now().After(deadline) {
					t.Fatalf("%s: %+v %v, want %s", id, task, err, want)
				}
				time.Sleep(5 * time.Millisecond)
			}
		}
		if got := wait(enqueue("echo", `{"a":1}`, nil), dtq.StatusSucceeded); string(got.Result) != `{"attempt":1,"echo":{"a":1}}` {
			t.Fatalf("echo result %s", got.Result)
		}
		if got := wait(enqueue("sleep", `{"seconds":0.01}`, nil), dtq.StatusSucceeded); string(got.Result) != `{"slept_seconds":0.01}` {
			t.Fatalf("sleep result %s", got.Result)
		}
		if got := wait(enqueue("flaky", `{"fail_times":2}`, nil), dtq.StatusSucceeded); got.Attempt != 3 {
			t.Fatalf("flaky succeeded on attempt %d, want 3", got.Attempt)
		}
		if got := wait(enqueue("always_fail", `{"permanent":true}`, nil), dtq.StatusDead); got.Attempt != 1 {
			t.Fatalf("permanent failure after %d attempts, want 1", got.Attempt)
		}
		got := wait(enqueue("always_fail", `null`, &dtq.EnqueueOpts{MaxAttempts: 3}), dtq.StatusDead)
		if got.Attempt != 3 || !strings.Contains(got.LastError, "always fails") {
			t.Fatalf("always_fail: attempt %d error %q", got.Attempt, got.LastError)
		}
		if got := wait(enqueue("sleep", `{"seconds":-1}`, nil), dtq.StatusDead); !strings.Contains(got.LastError, "seconds must be") {
			t.Fatalf("bad sleep payload: %q", got.LastError)
		}
	})
}
