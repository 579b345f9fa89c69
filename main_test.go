package dtq_test

import (
	"context"
	"log/slog"
	"os"
	"testing"
	"time"

	"github.com/dtq-dev/dtq"
	"github.com/dtq-dev/dtq/internal/leakcheck"
	"github.com/dtq-dev/dtq/internal/redisconn"
	"github.com/dtq-dev/dtq/internal/redistest"
)

func TestMain(m *testing.M) {
	if os.Getenv(childWorkerEnv) != "" {
		os.Exit(runChildWorker())
	}
	os.Exit(leakcheck.After(redistest.Main(m)))
}

// env is one conformance run of the task engine: a backend and a client in a
// fresh namespace.
type env struct {
	*redistest.Backend
	t  *testing.T
	c  *dtq.Client
	a  *dtq.Admin
	ls *dtq.LeaseServer // started, stopped at cleanup
}

func forEachBackend(t *testing.T, fn func(t *testing.T, e *env)) {
	t.Parallel()
	redistest.ForEachBackend(t, func(t *testing.T, b *redistest.Backend) {
		fn(t, newEnv(t, b, nil))
	})
}

// forEachBackendAlone is forEachBackend for a test that measures rates: it
// runs before the package's parallel tests, one backend after the other,
// so that their load does not starve the workers it times.
func forEachBackendAlone(t *testing.T, fn func(t *testing.T, e *env)) {
	redistest.ForEachBackendSerial(t, func(t *testing.T, b *redistest.Backend) {
		fn(t, newEnv(t, b, nil))
	})
}

func newEnv(t *testing.T, b *redistest.Backend, cfg *dtq.Config) *env {
	var c dtq.Config
	if cfg != nil {
		c = *cfg
	}
	c.Namespace = b.Namespace
	if os.Getenv("DTQ_TEST_LOG") != "" {
		c.Logger = slog.New(slog.NewTextHandler(os.Stderr, nil))
	}
	client, err := dtq.NewClient(redisconn.Wrap(b.Client), &c)
	if err != nil {
		t.Fatal(err)
	}
	ls, err := dtq.NewLeaseServer(client, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := ls.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := ls.Stop(ctx); err != nil {
			t.Error(err)
		}
	})
	return &env{Backend: b, t: t, c: client, a: dtq.NewAdmin(client), ls: ls}
}

// worker starts a worker with handlers, stopped at cleanup.
func (e *env) worker(cfg *dtq.WorkerConfig, handlers map[string]dtq.HandlerFunc) *dtq.Worker {
	e.t.Helper()
	return e.workerSet(cfg, handlers, func(*dtq.Worker) {})
}

// workerSet is worker with set called on the worker before it starts.
func (e *env) workerSet(cfg *dtq.WorkerConfig, handlers map[string]dtq.HandlerFunc, set func(*dtq.Worker)) *dtq.Worker {
	e.t.Helper()
	w, err := dtq.NewWorker(e.c, cfg)
	if err != nil {
		e.t.Fatal(err)
	}
	for typ, h := range handlers {
		w.Handle(typ, h)
	}
	set(w)
	if err := w.Start(context.Background()); err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		w.Stop(ctx)
	})
	return w
}

func (e *env) enqueue(typ string, payload any, opts *dtq.EnqueueOpts) *dtq.Task {
	e.t.Helper()
	res, err := e.c.Enqueue(e.t.Context(), typ, payload, opts)
	if err != nil {
		e.t.Fatalf("enqueue %s: %v", typ, err)
	}
	return res.Task
}

// waitStatus polls the task until it has status want (or fails after d).
func (e *env) waitStatus(id string, want dtq.Status, d time.Duration) *dtq.Task {
	e.t.Helper()
	deadline := time.Now().Add(d)
	for {
		task, err := e.c.Get(e.t.Context(), id)
		if err == nil && task.Status == want {
			return task
		}
		if time.Now().After(deadline) {
			if err != nil {
				e.t.Fatalf("task %s: %v, want status %s", id, err, want)
			}
			e.t.Fatalf("task %s is %s (last error %q), want %s within %v", id, task.Status, task.LastError, want, d)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// eventually polls cond until it holds or d passes.
func eventually(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not true within %v", what, d)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
