package main

import (
	"context"
	"encoding/json"
	"errors"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/dtq-dev/dtq"
	"github.com/dtq-dev/dtq/api"
	"github.com/dtq-dev/dtq/internal/redisconn"
	"github.com/dtq-dev/dtq/internal/redistest"
)

// The client commands are tested against a live API server (api.New over
// a real redis-server, and over the embedded backend) with a worker running
// the test handlers:
//
//	echo     returns its payload
//	fail     always fails (with max_attempts 1: DEAD at once)
//	block    runs until it is cancelled
//	nap      suspends: a durable sleep "nap" of an hour
//	approve  suspends until signal "approval" (at most an hour), then
//	         returns its payload
//
// The worker serves the queues "default" and "other"; tasks submitted to
// "parked" stay QUEUED, which keeps those tests free of timing.

// testWorkerID names the worker of every test environment.
const testWorkerID = "cli-test-worker"

// waitLimit bounds every wait for a task to reach a status.
const waitLimit = time.Minute

// apiEnv is one API server over one backend.
type apiEnv struct {
	t   *testing.T
	c   *dtq.Client
	url string
}

type apiEnvOpts struct {
	engine   dtq.Config
	api      api.Config
	noWorker bool
}

// forEachAPI runs fn, in parallel, against an API server on real Redis and
// one on the embedded backend.
func forEachAPI(t *testing.T, o *apiEnvOpts, fn func(t *testing.T, e *apiEnv)) {
	t.Parallel()
	redistest.ForEachBackend(t, func(t *testing.T, b *redistest.Backend) {
		fn(t, newAPIEnv(t, b, o))
	})
}

func newAPIEnv(t *testing.T, b *redistest.Backend, o *apiEnvOpts) *apiEnv {
	t.Helper()
	if o == nil {
		o = &apiEnvOpts{}
	}
	ecfg := o.engine
	ecfg.Namespace = b.Namespace
	c, err := dtq.NewClient(redisconn.Wrap(b.Client), &ecfg)
	if err != nil {
		t.Fatal(err)
	}
	if !o.noWorker {
		w, err := dtq.NewWorker(c, &dtq.WorkerConfig{ID: testWorkerID, Queues: []string{"default", "other"}})
		if err != nil {
			t.Fatal(err)
		}
		w.Handle("echo", func(_ context.Context, task *dtq.Task) (any, error) { return task.Payload, nil })
		w.Handle("fail", func(context.Context, *dtq.Task) (any, error) { return nil, errors.New("boom") })
		w.Handle("block", func(ctx context.Context, _ *dtq.Task) (any, error) {
			<-ctx.Done()
			return nil, context.Cause(ctx)
		})
		w.Handle("nap", func(ctx context.Context, _ *dtq.Task) (any, error) { return nil, dtq.Sleep(ctx, "nap", time.Hour) })
		w.Handle("approve", func(ctx context.Context, _ *dtq.Task) (any, error) { return dtq.WaitFor(ctx, "approval", time.Hour) })
		if err := w.Start(t.Context()); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			w.Stop(ctx)
		})
	}
	cfg := o.api
	as := api.New(c, redisconn.Wrap(b.Client), &cfg)
	t.Cleanup(as.Close)
	srv := httptest.NewServer(as.Handler())
	t.Cleanup(srv.Close)
	return &apiEnv{t: t, c: c, url: srv.URL}
}

// run runs dtq with args against this server; it fails the test if the
// command wrote to its log writer.
func (e *apiEnv) run(args ...string) (string, error) {
	e.t.Helper()
	out, errOut, err := execute(e.t, append(args, "--api-url", e.url)...)
	if errOut != "" {
		e.t.Errorf("dtq %s wrote to the log writer: %q", strings.Join(args, " "), errOut)
	}
	if err != nil && strings.Contains(err.Error(), "\n") {
		e.t.Errorf("dtq %s: error %q is more than one line", strings.Join(args, " "), err)
	}
	return out, err
}

// ok runs dtq with args and fails the test on an error.
func (e *apiEnv) ok(args ...string) string {
	e.t.Helper()
	out, err := e.run(args...)
	if err != nil {
		e.t.Fatalf("dtq %s: %v\noutput:\n%s", strings.Join(args, " "), err, out)
	}
	return out
}

// fails runs dtq with args and fails the test unless it returns an error
// containing every one of want; it returns the error's text.
func (e *apiEnv) fails(args []string, want ...string) string {
	e.t.Helper()
	out, err := e.run(args...)
	if err == nil {
		e.t.Fatalf("dtq %s: nil error, want one containing %q\noutput:\n%s", strings.Join(args, " "), want, out)
	}
	for _, w := range want {
		if !strings.Contains(err.Error(), w) {
			e.t.Errorf("dtq %s: error %q, want it to contain %q", strings.Join(args, " "), err, w)
		}
	}
	if out != "" {
		e.t.Errorf("dtq %s failed but printed %q", strings.Join(args, " "), out)
	}
	return err.Error()
}

// json runs dtq with args and --json, and decodes its output, which must
// be exactly one JSON document.
func (e *apiEnv) json(args ...string) map[string]any {
	e.t.Helper()
	out := e.ok(append(args, "--json")...)
	return decodeOne(e.t, out)
}

// decodeOne decodes out as exactly one JSON object.
func decodeOne(t *testing.T, out string) map[string]any {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(out))
	var v map[string]any
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("--json output is not a JSON object: %v\n%s", err, out)
	}
	if !strings.HasSuffix(out, "}\n") || strings.HasSuffix(out, "\n\n") {
		t.Errorf("--json output does not end with one newline: %q", out[max(0, len(out)-10):])
	}
	if dec.More() {
		t.Fatalf("--json output holds more than one JSON document:\n%s", out)
	}
	return v
}

// submit submits a task with the extra args and returns its id.
func (e *apiEnv) submit(taskType string, args ...string) string {
	e.t.Helper()
	task := e.json(append([]string{"submit", taskType}, args...)...)
	id, _ := task["id"].(string)
	if id == "" {
		e.t.Fatalf("submit %s: no id in %v", taskType, task)
	}
	return id
}

// waitStatus waits, at most waitLimit, until task id has status want.
func (e *apiEnv) waitStatus(id string, want dtq.Status) *dtq.Task {
	e.t.Helper()
	deadline := time.Now().Add(waitLimit)
	for {
		task, err := e.c.Get(e.t.Context(), id)
		if err != nil {
			e.t.Fatalf("get %s: %v", id, err)
		}
		if task.Status == want {
			return task
		}
		if time.Now().After(deadline) {
			e.t.Fatalf("task %s is still %s after %v, want %s", id, task.Status, waitLimit, want)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// deadTask submits a task that fails at once to queue and waits until it is
// DEAD.
func (e *apiEnv) deadTask(queue string) string {
	e.t.Helper()
	id := e.submit("fail", "--queue", queue, "--max-attempts", "1")
	e.waitStatus(id, dtq.StatusDead)
	return id
}

// lines returns out's lines, without the final newline.
func lines(out string) []string {
	return strings.Split(strings.TrimSuffix(out, "\n"), "\n")
}

// rowOf returns the line of out that contains id, or fails the test.
func rowOf(t *testing.T, out, id string) []string {
	t.Helper()
	for _, l := range lines(out) {
		if strings.Contains(l, id) {
			return strings.Fields(l)
		}
	}
	t.Fatalf("no line contains %s:\n%s", id, out)
	return nil
}

// leaseServer returns a started LeaseServer on e's client, stopped at
// cleanup: a holder of leases beside the API's own.
func (e *apiEnv) leaseServer() *dtq.LeaseServer {
	e.t.Helper()
	ls, err := dtq.NewLeaseServer(e.c, nil)
	if err != nil {
		e.t.Fatal(err)
	}
	if err := ls.Start(e.t.Context()); err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() {
		if err := ls.Stop(context.Background()); err != nil {
			e.t.Error(err)
		}
	})
	return ls
}
