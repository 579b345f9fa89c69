package api_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/dtq-dev/dtq"
	"github.com/dtq-dev/dtq/api"
	"github.com/dtq-dev/dtq/internal/leakcheck"
	"github.com/dtq-dev/dtq/internal/redisconn"
	"github.com/dtq-dev/dtq/internal/redistest"
)

func TestMain(m *testing.M) { os.Exit(leakcheck.After(redistest.Main(m))) }

// env is one API server over one backend, with a worker running the test
// handlers: "echo" (returns its payload), "fail" (always fails), "nap"
// (suspends: a durable sleep of an hour) and "approve" (suspends until
// signal "approval", at most an hour, and returns its payload).
type env struct {
	t   *testing.T
	b   *redistest.Backend
	c   *dtq.Client
	srv *httptest.Server
}

type opts struct {
	engine   dtq.Config
	api      api.Config
	noWorker bool
	queues   []string
}

func forEachBackend(t *testing.T, o *opts, fn func(t *testing.T, e *env)) {
	t.Parallel()
	redistest.ForEachBackend(t, func(t *testing.T, b *redistest.Backend) {
		fn(t, newEnv(t, b, o))
	})
}

func newEnv(t *testing.T, b *redistest.Backend, o *opts) *env {
	if o == nil {
		o = &opts{}
	}
	cfg := o.engine
	cfg.Namespace = b.Namespace
	c, err := dtq.NewClient(redisconn.Wrap(b.Client), &cfg)
	if err != nil {
		t.Fatal(err)
	}
	if !o.noWorker {
		w, err := dtq.NewWorker(c, &dtq.WorkerConfig{Queues: o.queues})
		if err != nil {
			t.Fatal(err)
		}
		w.Handle("echo", func(_ context.Context, task *dtq.Task) (any, error) { return task.Payload, nil })
		w.Handle("fail", func(context.Context, *dtq.Task) (any, error) { return nil, errors.New("boom") })
		w.Handle("nap", func(ctx context.Context, _ *dtq.Task) (any, error) { return nil, dtq.Sleep(ctx, "nap", time.Hour) })
		w.Handle("approve", func(ctx context.Context, _ *dtq.Task) (any, error) { return dtq.WaitFor(ctx, "approval", time.Hour) })
		if err := w.Start(context.Background()); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			w.Stop(ctx)
		})
	}
	acfg := o.api
	as := api.New(c, redisconn.Wrap(b.Client), &acfg)
	srv := httptest.NewServer(as.Handler())
	t.Cleanup(srv.Close)
	t.Cleanup(as.Close) // runs first
	return &env{t: t, b: b, c: c, srv: srv}
}

// resp is a response with its body decoded.
type resp struct {
	status int
	header http.Header
	raw    []byte
	body   map[string]any
}

// errCode is the code of an error response, "" if it is not one.
func (r *resp) errCode() string {
	e, _ := r.body["error"].(map[string]any)
	code, _ := e["code"].(string)
	return code
}

func (r *resp) errMessage() string {
	e, _ := r.body["error"].(map[string]any)
	msg, _ := e["message"].(string)
	return msg
}

func (r *resp) str(field string) string {
	s, _ := r.body[field].(string)
	return s
}

// do sends a request; a string body is sent as is with Content-Type
// application/json unless headers set one.
func (e *env) do(method, path, body string, headers ...string) *resp {
	e.t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	// No request may hang a test: 30s is far beyond any answer's time.
	ctx, cancel := context.WithTimeout(e.t.Context(), 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, e.srv.URL+path, rd)
	if err != nil {
		e.t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	res, err := e.srv.Client().Do(req)
	if err != nil {
		e.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	r := &resp{status: res.StatusCode, header: res.Header, raw: raw}
	if len(bytes.TrimSpace(raw)) > 0 {
		if err := json.Unmarshal(raw, &r.body); err != nil {
			e.t.Fatalf("%s %s: answer is not a JSON object: %v\n%s", method, path, err, raw)
		}
	}
	if ct := res.Header.Get("Content-Type"); len(raw) > 0 && ct != "application/json" {
		e.t.Fatalf("%s %s: Content-Type %q", method, path, ct)
	}
	return r
}

// must sends a request and fails the test unless it answers want.
func (e *env) must(want int, method, path, body string, headers ...string) *resp {
	e.t.Helper()
	r := e.do(method, path, body, headers...)
	if r.status != want {
		e.t.Fatalf("%s %s %s: status %d, want %d: %s", method, path, body, r.status, want, r.raw)
	}
	return r
}

// waitStatus polls GET /api/v1/tasks/{id} until the task has status want.
func (e *env) waitStatus(id, want string) *resp {
	e.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		r := e.must(http.StatusOK, "GET", "/api/v1/tasks/"+id, "")
		if r.str("status") == want {
			return r
		}
		if time.Now().After(deadline) {
			e.t.Fatalf("task %s is %s, want %s: %s", id, r.str("status"), want, r.raw)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
