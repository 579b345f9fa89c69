package e2e

import (
	"fmt"
	"net/http"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/dtq-dev/dtq/internal/proctest"
	"github.com/dtq-dev/dtq/internal/redistest"
)

// `dtq serve` with no Redis runs everything on the embedded backend, says
// so first, runs a task end to end and stops cleanly on SIGTERM.
func TestServeEmbedded(t *testing.T) {
	t.Parallel()
	p := start(t, nil, "serve", "--addr", "127.0.0.1:0", "--pprof-addr", "127.0.0.1:0")
	first := p.Logged()[0]
	if first["backend"] != "embedded" || !strings.Contains(first["msg"].(string), "embedded") {
		t.Fatalf("first log line %v, want one about the embedded backend", first)
	}
	r := p.Must(http.StatusCreated, "POST", "/api/v1/tasks", `{"task_type":"echo","payload":{"hi":1}}`)
	done := p.WaitStatus(r.Str("id"), "SUCCEEDED")
	if !strings.Contains(string(done.Raw), `"echo":{"hi":1}`) {
		t.Fatalf("result: %s", done.Raw)
	}
	p.Must(http.StatusOK, "GET", "/health", "")
	p.Must(http.StatusOK, "GET", "/ready", "")
	// Profiles on their own address, not on the API's.
	p.Must(http.StatusNotFound, "GET", "/debug/pprof/", "")
	pprofServed := false
	for _, rec := range p.Logged() {
		if rec["msg"] == "serving pprof profiles" {
			pprofServed = true
			res, err := http.Get("http://" + rec["addr"].(string) + "/debug/pprof/")
			if err != nil || res.StatusCode != http.StatusOK {
				t.Fatalf("pprof: %v %v", res, err)
			}
			res.Body.Close()
		}
	}
	if !pprofServed {
		t.Fatal("no pprof address logged")
	}
	waitMetric(t, `dtq_tasks_succeeded_total{queue="default",task_type="echo"}`, 1, p)
	m := metrics(p)
	for _, want := range []string{
		`dtq_tasks_submitted_total{queue="default",task_type="echo"} 1`,
		`dtq_tasks_succeeded_total{queue="default",task_type="echo"} 1`,
		`dtq_http_requests_total{code="201",route="POST /api/v1/tasks"} 1`,
		`dtq_queue_depth{priority="5",queue="default",state="queued"} 0`,
	} {
		if !strings.Contains(m, want+"\n") {
			t.Errorf("/metrics lacks %q", want)
		}
	}
	if err := p.Stop(); err != nil {
		t.Fatalf("exit after SIGTERM: %v\n%s", err, p.Stderr())
	}
	if !strings.Contains(p.Stderr(), `"msg":"stopped"`) {
		t.Fatalf("no clean stop logged:\n%s", p.Stderr())
	}
	p.CheckNoPanic()
}

// Any number of api and worker processes share work through one Redis.
func TestAPIAndWorkersOnRedis(t *testing.T) {
	t.Parallel()
	env := []string{"DTQ_REDIS_URL=" + redisURL(t), "DTQ_NAMESPACE=" + redistest.Namespace(t)}
	apiProc := start(t, env, "api", "--addr", "127.0.0.1:0")
	if first := apiProc.Logged()[0]; first["backend"] != "redis" {
		t.Fatalf("first log line %v, want backend redis", first)
	}
	// The test's redis-server runs without AOF: the process says so.
	if !strings.Contains(apiProc.Stderr(), `"msg":"Redis setting puts accepted work at risk"`) ||
		!strings.Contains(apiProc.Stderr(), "appendonly is off") {
		t.Errorf("no warning about AOF being off:\n%s", apiProc.Stderr())
	}
	w1 := start(t, env, "worker", "--addr", "127.0.0.1:0", "--concurrency", "4")
	w2 := start(t, env, "worker", "--addr", "127.0.0.1:0", "--concurrency", "4")
	var items []string
	for i := range 200 {
		items = append(items, fmt.Sprintf(`{"task_type":"echo","payload":%d}`, i))
	}
	r := apiProc.Must(http.StatusOK, "POST", "/api/v1/tasks/batch", `{"tasks":[`+strings.Join(items, ",")+`]}`)
	results := r.Body["results"].([]any)
	for _, x := range results {
		item := x.(map[string]any)
		if item["status"] != 201.0 {
			t.Fatalf("batch item: %v", item)
		}
	}
	last := results[len(results)-1].(map[string]any)["task"].(map[string]any)["id"].(string)
	apiProc.WaitStatus(last, "SUCCEEDED")
	deadline := time.Now().Add(30 * time.Second)
	for {
		page := apiProc.Must(http.StatusOK, "GET", "/api/v1/queues/default", "")
		if page.Body["succeeded_total"] == 200.0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("queue after 30s: %s", page.Raw)
		}
		time.Sleep(20 * time.Millisecond)
	}
	workers := apiProc.Must(http.StatusOK, "GET", "/api/v1/workers", "")
	if ws := workers.Body["workers"].([]any); len(ws) != 2 {
		t.Fatalf("workers: %s", workers.Raw)
	}
	for _, w := range []*proctest.Proc{w1, w2} {
		w.Must(http.StatusOK, "GET", "/health", "")
		w.Must(http.StatusOK, "GET", "/ready", "")
		w.Must(http.StatusNotFound, "POST", "/api/v1/tasks", `{"task_type":"echo"}`)
	}
	waitMetric(t, `dtq_tasks_succeeded_total{queue="default",task_type="echo"}`, 200, w1, w2)
	if n := metricValue(t, metrics(apiProc), `dtq_tasks_submitted_total{queue="default",task_type="echo"}`); n != 200 {
		t.Fatalf("the API's metrics count %v submitted tasks, want 200", n)
	}
	for _, pr := range []*proctest.Proc{w1, w2, apiProc} {
		if err := pr.Stop(); err != nil {
			t.Fatalf("exit: %v\n%s", err, pr.Stderr())
		}
		pr.CheckNoPanic()
	}
}

// SIGTERM while a task runs: the worker lets it finish within the shutdown
// timeout; past it, the task is handed back and another worker runs it.
func TestWorkerShutdownHandsBack(t *testing.T) {
	t.Parallel()
	env := []string{"DTQ_REDIS_URL=" + redisURL(t), "DTQ_NAMESPACE=" + redistest.Namespace(t)}
	apiProc := start(t, env, "api", "--addr", "127.0.0.1:0")
	w1 := start(t, env, "worker", "--addr", "127.0.0.1:0", "--shutdown-timeout", "200ms")
	r := apiProc.Must(http.StatusCreated, "POST", "/api/v1/tasks", `{"task_type":"sleep","payload":{"seconds":2}}`)
	apiProc.WaitStatus(r.Str("id"), "RUNNING")
	if err := w1.Stop(); err != nil {
		t.Fatalf("worker exit: %v\n%s", err, w1.Stderr())
	}
	if !strings.Contains(w1.Stderr(), "cancelled and will be retried") {
		t.Fatalf("no hand-back logged:\n%s", w1.Stderr())
	}
	back := apiProc.Must(http.StatusOK, "GET", "/api/v1/tasks/"+r.Str("id"), "")
	if s := back.Str("status"); s != "QUEUED" && s != "SCHEDULED" {
		t.Fatalf("after the worker stopped: %s", back.Raw)
	}
	start(t, append(env, "DTQ_QUEUES=default"), "worker", "--addr", "127.0.0.1:0")
	deadline := time.Now().Add(60 * time.Second)
	for apiProc.Must(http.StatusOK, "GET", "/api/v1/tasks/"+r.Str("id"), "").Str("status") != "SUCCEEDED" {
		if time.Now().After(deadline) {
			t.Fatal("the handed-back task did not succeed on the second worker")
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Configuration errors are one clear line and a non-zero exit.
func TestConfigErrors(t *testing.T) {
	t.Parallel()
	cases := []struct {
		args    []string
		env     []string
		mention string
	}{
		{[]string{"api"}, nil, "needs --redis"},
		{[]string{"worker"}, nil, "needs --redis"},
		{[]string{"serve", "--concurrency", "x"}, nil, "concurrency"},
		{[]string{"serve"}, []string{"DTQ_CONCURRENCY=lots"}, "DTQ_CONCURRENCY"},
		{[]string{"serve", "--log-level", "loud"}, nil, "--log-level"},
		{[]string{"serve", "--queues", "a b"}, nil, "queue"},
		{[]string{"serve", "--addr", "256.0.0.1:1"}, nil, "listen"},
		{[]string{"serve", "--redis", "http://x"}, nil, "redis://"},
	}
	for _, c := range cases {
		cmd := exec.Command(binary, c.args...)
		cmd.Env = append(cmd.Environ(), c.env...)
		out, err := cmd.CombinedOutput()
		if err == nil {
			t.Errorf("dtq %v: exit 0, want an error", c.args)
			continue
		}
		lines := strings.Split(strings.TrimSpace(string(out)), "\n")
		last := lines[len(lines)-1]
		if !strings.HasPrefix(last, "dtq: ") || !strings.Contains(last, c.mention) {
			t.Errorf("dtq %v %v: last line %q, want a one-line error naming %q\n%s", c.args, c.env, last, c.mention, out)
		}
	}
}

// The binary on Redis Cluster and on Sentinel: an api and a worker process
// share work through the topology's URL.
func TestTopologies(t *testing.T) {
	t.Parallel()
	cluster := redistest.StartCluster(t, 3, 0)
	sentinels := redistest.StartSentinels(t, 1, 3)
	for _, url := range []string{cluster.URL(), sentinels.URL()} {
		env := []string{"DTQ_REDIS_URL=" + url, "DTQ_NAMESPACE=" + redistest.Namespace(t)}
		apiProc := start(t, env, "api", "--addr", "127.0.0.1:0")
		start(t, env, "worker", "--addr", "127.0.0.1:0", "--queues", "default,mail")
		var ids []string
		for _, q := range []string{"default", "mail"} {
			ids = append(ids, apiProc.Must(http.StatusCreated, "POST", "/api/v1/tasks", `{"task_type":"echo","queue":"`+q+`"}`).Str("id"))
		}
		for _, id := range ids {
			apiProc.WaitStatus(id, "SUCCEEDED")
		}
		apiProc.Must(http.StatusOK, "GET", "/ready", "")
	}
}
