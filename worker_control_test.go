package dtq_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/dtq-dev/dtq"
	"github.com/dtq-dev/dtq/internal/store"
)

// workerInfo returns the registry's entry of worker id (nil: none).
func workerInfo(t *testing.T, e *env, id string) *dtq.WorkerInfo {
	t.Helper()
	ws, err := e.a.Workers(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	for i := range ws {
		if ws[i].ID == id {
			return &ws[i]
		}
	}
	return nil
}

// A quiet worker takes no new task and finishes its running one; a stop
// asked of it closes StopRequested and shows it stopping; both are
// audited. An unknown worker and a lease holder are refused.
func TestQuietAndStopWorker(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		ctx := t.Context()
		release := make(chan struct{})
		handlers := map[string]dtq.HandlerFunc{
			"block": func(context.Context, *dtq.Task) (any, error) { <-release; return nil, nil },
			"job":   func(context.Context, *dtq.Task) (any, error) { return nil, nil },
		}
		a := e.worker(&dtq.WorkerConfig{ID: "worker-a"}, handlers)
		var once sync.Once
		free := func() { once.Do(func() { close(release) }) }
		t.Cleanup(free) // (before the worker's stop, should the test end early)
		held := e.enqueue("block", nil, nil)
		e.waitStatus(held.ID, dtq.StatusRunning, 10*time.Second)
		eventually(t, 10*time.Second, "the worker running in the registry", func() bool {
			w := workerInfo(t, e, "worker-a")
			return w != nil && w.State == dtq.WorkerRunning && w.Requested == ""
		})

		if asked, err := e.a.QuietWorker(ctx, "worker-a"); err != nil || asked != "quiet" {
			t.Fatal(asked, err)
		}
		eventually(t, 10*time.Second, "the worker quiet in the registry", func() bool {
			w := workerInfo(t, e, "worker-a")
			return w != nil && w.State == dtq.WorkerQuiet && w.Requested == "quiet"
		})
		later := e.enqueue("job", nil, nil)
		free()
		e.waitStatus(held.ID, dtq.StatusSucceeded, 10*time.Second)
		// worker-a is idle now, yet takes nothing: worker-b runs it.
		e.worker(&dtq.WorkerConfig{ID: "worker-b"}, handlers)
		if tk := e.waitStatus(later.ID, dtq.StatusSucceeded, 10*time.Second); tk.Worker != "worker-b" {
			t.Errorf("the task submitted after the quiet ran on %s", tk.Worker)
		}

		if asked, err := e.a.StopWorker(ctx, "worker-a"); err != nil || asked != "stop" {
			t.Fatal(asked, err)
		}
		select {
		case <-a.StopRequested():
		case <-time.After(10 * time.Second):
			t.Fatal("StopRequested not closed")
		}
		eventually(t, 10*time.Second, "the worker stopping in the registry", func() bool {
			w := workerInfo(t, e, "worker-a")
			return w != nil && w.State == dtq.WorkerStopping && w.Requested == "stop"
		})
		// A quiet asked after a stop leaves it a stop.
		if asked, err := e.a.QuietWorker(ctx, "worker-a"); err != nil || asked != "stop" {
			t.Fatal(asked, err)
		}
		if w := workerInfo(t, e, "worker-a"); w.Requested != "stop" {
			t.Errorf("a quiet after a stop: requested %q", w.Requested)
		}

		for _, c := range []struct {
			id   string
			want error
		}{{"nobody", dtq.ErrWorkerNotFound}, {"", dtq.ErrInvalid}, {"a b", dtq.ErrInvalid}} {
			if _, err := e.a.StopWorker(ctx, c.id); !errors.Is(err, c.want) {
				t.Errorf("stop of %q: %v, want %v", c.id, err, c.want)
			}
		}
		if _, err := e.ls.Lease(ctx, dtq.LeaseRequest{Worker: "py", Queues: []string{"idle"}}); err != nil {
			t.Fatal(err)
		}
		if _, err := e.a.QuietWorker(ctx, "http:py"); !errors.Is(err, dtq.ErrLeaseHolder) {
			t.Errorf("quiet of a lease holder: %v, want ErrLeaseHolder", err)
		}
		entries, err := e.a.Audit(ctx, 100)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, a := range entries {
			if a.Action == "worker-quiet" || a.Action == "worker-stop" {
				got = append(got, a.Action+" "+a.Detail)
			}
		}
		if want := []string{"worker-quiet worker-a", "worker-stop worker-a", "worker-quiet worker-a"}; !equalStrings(got, want) {
			t.Errorf("audited %q, want %q", got, want)
		}
	})
}

// A control whose message the worker missed is read at its heartbeat.
func TestWorkerReadsControlAtHeartbeat(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		w := e.worker(&dtq.WorkerConfig{ID: "deaf"}, map[string]dtq.HandlerFunc{"job": func(context.Context, *dtq.Task) (any, error) { return nil, nil }})
		eventually(t, 10*time.Second, "registered", func() bool { return workerInfo(t, e, "deaf") != nil })
		// The field written as control.lua writes it, with no message.
		c := e.Client
		if err := c.Do(t.Context(), c.B().Hset().Key(store.WorkerKey(e.Namespace, "deaf")).FieldValue().FieldValue(store.WorkerControl, "stop").Build()).Error(); err != nil {
			t.Fatal(err)
		}
		dtq.Beat(t.Context(), w)
		select {
		case <-w.StopRequested():
		default:
			t.Fatal("the heartbeat did not read the stop")
		}
		if w.State() != dtq.WorkerStopping {
			t.Errorf("state %s", w.State())
		}
	})
}

func equalStrings(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
