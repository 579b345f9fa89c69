package dtq_test

import (
	"context"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dtq-dev/dtq"
	"github.com/dtq-dev/dtq/internal/redistest"
	"github.com/dtq-dev/dtq/internal/store"
)

// An idle worker waits in Redis instead of polling — also when one band's
// consumer group is lost under it: over two seconds it makes only a few
// dozen calls (not thousands), and tasks submitted meanwhile run.
func TestIdleWorkerDoesNotPoll(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t, nil)
	e := newEnv(t, &redistest.Backend{Name: "redis", Client: redistest.Client(t, srv), Namespace: "idle", Server: srv}, nil)
	e.worker(&dtq.WorkerConfig{Concurrency: 4, VisibilityTimeout: time.Hour}, map[string]dtq.HandlerFunc{
		"job": func(context.Context, *dtq.Task) (any, error) { return nil, nil },
	})
	first := e.enqueue("job", nil, nil) // the worker has read once and is now blocked
	e.waitStatus(first.ID, dtq.StatusSucceeded, 10*time.Second)
	band4 := store.NewKeys("idle", dtq.DefaultQueue).Band(4)
	if err := e.Client.Do(t.Context(), e.Client.B().XgroupDestroy().Key(band4).Group("workers").Build()).Error(); err != nil {
		t.Fatal(err)
	}
	before := totalCalls(t, e)
	time.Sleep(2 * time.Second)
	calls := totalCalls(t, e) - before - 1 // minus our own INFO
	// Per second: a reclaim pass (read.lua, with the commands it runs), a
	// new blocking read, a scheduler pass, a heartbeat every 5s.
	if calls > 200 {
		t.Fatalf("an idle worker made %d Redis calls in 2s, want it blocked", calls)
	}
	t.Logf("idle worker: %d Redis calls in 2s", calls)
	for _, p := range []int{4, 5} {
		task := e.enqueue("job", nil, &dtq.EnqueueOpts{Priority: dtq.Ptr(p)})
		e.waitStatus(task.ID, dtq.StatusSucceeded, 10*time.Second)
	}
}

// totalCalls returns the server's total_commands_processed, which counts
// the commands scripts run too: an order of magnitude, not a round-trip
// count.
func totalCalls(t *testing.T, e *env) int {
	info, err := e.Client.Do(t.Context(), e.Client.B().Info().Section("stats").Build()).ToString()
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(info, "\r\n") {
		if v, ok := strings.CutPrefix(line, "total_commands_processed:"); ok {
			n, _ := strconv.Atoi(v)
			return n
		}
	}
	t.Fatal("no total_commands_processed")
	return 0
}

// An outcome that cannot be recorded while Redis is down is retried for as
// long as the outage lasts (here longer than half the visibility timeout,
// but shorter than it): the task ends SUCCEEDED after one execution instead
// of running again. (Redis is killed and restarted with its AOF: a paused
// Redis would run the first attempt, queued in its socket, on resume.)
func TestOutcomeRetriedThroughOutage(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t, &redistest.Options{AppendFsync: "always"})
	e := newEnv(t, &redistest.Backend{Name: "redis", Client: redistest.Client(t, srv), Namespace: "outage", Server: srv}, nil)
	running, release := make(chan struct{}), make(chan struct{})
	var runs atomic.Int32
	e.worker(&dtq.WorkerConfig{Concurrency: 1, VisibilityTimeout: 4 * time.Second}, map[string]dtq.HandlerFunc{
		"job": func(context.Context, *dtq.Task) (any, error) {
			if runs.Add(1) == 1 {
				close(running)
				<-release
			}
			return nil, nil
		},
	})
	task := e.enqueue("job", nil, nil)
	// The handler runs (RUNNING alone is no proof: a claim shows RUNNING
	// before its worker has started it).
	select {
	case <-running:
	case <-time.After(10 * time.Second):
		t.Fatal("the task did not start")
	}
	if err := srv.Kill(); err != nil {
		t.Fatal(err)
	}
	close(release)              // the handler returns while Redis is down
	time.Sleep(3 * time.Second) // the outage: over half the visibility timeout
	if err := srv.Restart(); err != nil {
		t.Fatal(err)
	}
	got := e.waitStatus(task.ID, dtq.StatusSucceeded, 30*time.Second)
	if n := runs.Load(); n != 1 || got.Crashes != 0 {
		t.Fatalf("after a 3 s outage the task ran %d times (%d crashes), want once", n, got.Crashes)
	}
}
