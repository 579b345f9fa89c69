package api_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/dtq-dev/dtq/api"
	"github.com/dtq-dev/dtq/internal/redistest"
)

// deadTask submits a task that fails once and is dead, and returns its id.
func (e *env) deadTask(queue string) string {
	e.t.Helper()
	r := e.must(http.StatusCreated, "POST", "/api/v1/tasks", `{"task_type":"fail","max_attempts":1,"queue":"`+queue+`"}`)
	e.waitStatus(r.str("id"), "DEAD")
	return r.str("id")
}

func deadIDs(t *testing.T, r *resp) []string {
	t.Helper()
	letters, ok := r.body["dead_letters"].([]any)
	if !ok {
		t.Fatalf("dead letters: %s", r.raw)
	}
	var ids []string
	for _, l := range letters {
		task, _ := l.(map[string]any)["task"].(map[string]any)
		id, _ := task["id"].(string)
		ids = append(ids, id)
	}
	return ids
}

func TestDeadLetters(t *testing.T) {
	forEachBackend(t, &opts{queues: []string{"default", "b"}}, func(t *testing.T, e *env) {
		a1, a2, b1 := e.deadTask("default"), e.deadTask("default"), e.deadTask("b")
		if ids := deadIDs(t, e.must(http.StatusOK, "GET", "/api/v1/dlq", "")); len(ids) != 2 || !strings.Contains(strings.Join(ids, " "), a1) {
			t.Fatalf("dlq of default: %v", ids)
		}
		if ids := deadIDs(t, e.must(http.StatusOK, "GET", "/api/v1/dlq?queue=b", "")); len(ids) != 1 || ids[0] != b1 {
			t.Fatalf("dlq of b: %v", ids)
		}
		// One requeued runs again (and fails again: one more attempt).
		rq := e.must(http.StatusOK, "POST", "/api/v1/dlq/"+a1+"/requeue", "")
		if s := rq.str("status"); s != "QUEUED" && s != "RUNNING" && s != "DEAD" {
			t.Fatalf("requeued: %s", rq.raw)
		}
		e.waitStatus(a1, "DEAD")
		ok := e.must(http.StatusCreated, "POST", "/api/v1/tasks", `{"task_type":"echo"}`).str("id")
		e.waitStatus(ok, "SUCCEEDED")
		if r := e.must(http.StatusConflict, "POST", "/api/v1/dlq/"+ok+"/requeue", ""); r.errCode() != "not_dead" {
			t.Fatalf("requeue a task that is not dead: %s", r.raw)
		}
		// One discarded is gone from the stream.
		e.must(http.StatusOK, "DELETE", "/api/v1/dlq/"+a2, "")
		e.must(http.StatusOK, "DELETE", "/api/v1/dlq/"+a2, "") // idempotent
		if r := e.must(http.StatusConflict, "POST", "/api/v1/dlq/"+a2+"/requeue", ""); r.errCode() != "not_dead" {
			t.Fatalf("requeue a discarded task: %s", r.raw)
		}
		if r := e.must(http.StatusConflict, "DELETE", "/api/v1/dlq/"+ok, ""); r.errCode() != "not_dead" {
			t.Fatalf("discard a task that is not dead: %s", r.raw)
		}
		e.must(http.StatusNotFound, "DELETE", "/api/v1/dlq/nope", "")
		// Requeue all of b, then purge every queue.
		if r := e.must(http.StatusOK, "POST", "/api/v1/dlq/requeue?queue=b", ""); r.body["requeued"] != 1.0 {
			t.Fatalf("requeue all of b: %s", r.raw)
		}
		e.waitStatus(b1, "DEAD")
		if r := e.must(http.StatusOK, "DELETE", "/api/v1/dlq", ""); r.body["discarded"] != 2.0 {
			t.Fatalf("purge: %s", r.raw)
		}
		for _, q := range []string{"default", "b"} {
			if ids := deadIDs(t, e.must(http.StatusOK, "GET", "/api/v1/dlq?queue="+q, "")); len(ids) != 0 {
				t.Fatalf("dlq of %s after purge: %v", q, ids)
			}
		}
		audit := e.must(http.StatusOK, "GET", "/api/v1/audit?limit=10", "")
		if entries, _ := audit.body["entries"].([]any); len(entries) < 4 {
			t.Fatalf("audit: %s", audit.raw)
		}
	})
}

func TestQueuesAndWorkers(t *testing.T) {
	forEachBackend(t, nil, func(t *testing.T, e *env) {
		id := e.must(http.StatusCreated, "POST", "/api/v1/tasks", `{"task_type":"echo"}`).str("id")
		e.waitStatus(id, "SUCCEEDED")
		p := e.must(http.StatusOK, "POST", "/api/v1/queues/default/pause", "")
		if p.body["paused"] != true {
			t.Fatalf("paused: %s", p.raw)
		}
		held := e.must(http.StatusCreated, "POST", "/api/v1/tasks", `{"task_type":"echo"}`).str("id")
		q := e.must(http.StatusOK, "GET", "/api/v1/queues/default", "")
		if q.body["paused"] != true || q.str("name") != "default" {
			t.Fatalf("queue: %s", q.raw)
		}
		list := e.must(http.StatusOK, "GET", "/api/v1/queues", "")
		if qs, _ := list.body["queues"].([]any); len(qs) != 1 {
			t.Fatalf("queues: %s", list.raw)
		}
		if r := e.must(http.StatusOK, "GET", "/api/v1/tasks/"+held, ""); r.str("status") != "QUEUED" {
			t.Fatalf("task on a paused queue: %s", r.raw)
		}
		e.must(http.StatusOK, "POST", "/api/v1/queues/default/resume", "")
		e.waitStatus(held, "SUCCEEDED")
		e.must(http.StatusBadRequest, "POST", "/api/v1/queues/a%20b/pause", "")
		w := e.must(http.StatusOK, "GET", "/api/v1/workers", "")
		if ws, _ := w.body["workers"].([]any); len(ws) != 1 {
			t.Fatalf("workers: %s", w.raw)
		}
	})
}

func TestRoutingErrors(t *testing.T) {
	forEachBackend(t, nil, func(t *testing.T, e *env) {
		if r := e.must(http.StatusNotFound, "GET", "/api/v1/nothing", ""); r.errCode() != "not_found" {
			t.Fatalf("unknown route: %s", r.raw)
		}
		r := e.must(http.StatusMethodNotAllowed, "PUT", "/api/v1/tasks", "")
		if r.errCode() != "method_not_allowed" || !strings.Contains(r.header.Get("Allow"), "POST") {
			t.Fatalf("wrong method: Allow %q, %s", r.header.Get("Allow"), r.raw)
		}
		e.must(http.StatusOK, "GET", "/health", "")
		e.must(http.StatusOK, "GET", "/ready", "")
	})
}

func TestAPIKey(t *testing.T) {
	forEachBackend(t, &opts{api: api.Config{APIKey: "s3cret"}}, func(t *testing.T, e *env) {
		body := `{"task_type":"echo"}`
		if r := e.must(http.StatusUnauthorized, "POST", "/api/v1/tasks", body); r.errCode() != "unauthorized" {
			t.Fatalf("no key: %s", r.raw)
		}
		e.must(http.StatusUnauthorized, "POST", "/api/v1/tasks", body, "X-API-Key", "s3cre")
		e.must(http.StatusUnauthorized, "DELETE", "/api/v1/dlq", "")
		e.must(http.StatusUnauthorized, "POST", "/api/v1/queues/default/pause", "")
		id := e.must(http.StatusCreated, "POST", "/api/v1/tasks", body, "X-API-Key", "s3cret").str("id")
		e.must(http.StatusOK, "GET", "/api/v1/tasks/"+id, "") // reads stay open
	})
}

func TestAPIKeyOnReads(t *testing.T) {
	forEachBackend(t, &opts{api: api.Config{APIKey: "s3cret", APIKeyReads: true}}, func(t *testing.T, e *env) {
		e.must(http.StatusUnauthorized, "GET", "/api/v1/tasks", "")
		e.must(http.StatusUnauthorized, "GET", "/api/v1/queues", "")
		e.must(http.StatusOK, "GET", "/api/v1/queues", "", "X-API-Key", "s3cret")
		e.must(http.StatusOK, "GET", "/health", "") // probes stay open
	})
}

// With Redis unresponsive, every route that needs it answers 503 within
// RequestTimeout (a submit within the engine's batch timeout, 10s) instead
// of waiting for Redis.
func TestRedisUnresponsive(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t, nil)
	b := &redistest.Backend{Name: "redis", Client: redistest.Client(t, srv), Namespace: redistest.Namespace(t), Server: srv}
	e := newEnv(t, b, &opts{noWorker: true, api: api.Config{RequestTimeout: 300 * time.Millisecond}})
	id := e.must(http.StatusCreated, "POST", "/api/v1/tasks", `{"task_type":"echo"}`).str("id")
	if err := srv.Pause(); err != nil {
		t.Fatal(err)
	}
	defer srv.Resume()
	for _, r := range [][3]string{
		{"GET", "/api/v1/tasks/" + id, ""},
		{"GET", "/api/v1/tasks", ""},
		{"GET", "/api/v1/queues", ""},
		{"GET", "/api/v1/dlq", ""},
		{"POST", "/api/v1/tasks", `{"task_type":"echo"}`},
		{"DELETE", "/api/v1/dlq", ""},
	} {
		start := time.Now()
		got := e.do(r[0], r[1], r[2])
		if got.status != http.StatusServiceUnavailable || got.errCode() != "unavailable" || time.Since(start) > 15*time.Second ||
			got.header.Get("Retry-After") != "1" {
			t.Errorf("%s %s with Redis paused: %d after %v, Retry-After %q: %s", r[0], r[1], got.status, time.Since(start),
				got.header.Get("Retry-After"), got.raw)
		}
	}
}

// With Redis down (connections refused), a route that needs it answers
// 503 unavailable with Retry-After: 1: a write at once (it was not sent;
// the client retries it with its idempotency key), a read once the
// request timeout passed (the Redis client retries reads meanwhile, which
// rides over a restart); both work again once Redis is back.
func TestRedisRefused(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t, &redistest.Options{AppendFsync: "always"})
	b := &redistest.Backend{Name: "redis", Client: redistest.Client(t, srv), Namespace: redistest.Namespace(t), Server: srv}
	const timeout = 5 * time.Second
	e := newEnv(t, b, &opts{noWorker: true, api: api.Config{RequestTimeout: timeout}})
	id := e.must(http.StatusCreated, "POST", "/api/v1/tasks", `{"task_type":"echo"}`).str("id")
	if err := srv.Kill(); err != nil {
		t.Fatal(err)
	}
	for _, r := range []struct {
		method, path, body string
		atOnce             bool
	}{
		{"POST", "/api/v1/tasks", `{"task_type":"echo"}`, true},
		{"GET", "/api/v1/tasks/" + id, "", false},
	} {
		start := time.Now()
		got := e.do(r.method, r.path, r.body)
		took := time.Since(start)
		t.Logf("%s %s with Redis down: %d after %v", r.method, r.path, got.status, took)
		if got.status != http.StatusServiceUnavailable || got.errCode() != "unavailable" || got.header.Get("Retry-After") != "1" ||
			(r.atOnce && took >= timeout/2) {
			t.Errorf("%s %s with Redis down: %d after %v, Retry-After %q: %s", r.method, r.path, got.status, took,
				got.header.Get("Retry-After"), got.raw)
		}
	}
	if err := srv.Restart(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for e.do("POST", "/api/v1/tasks", `{"task_type":"echo"}`).status != http.StatusCreated {
		if time.Now().After(deadline) {
			t.Fatal("submits still fail 30s after Redis came back")
		}
		time.Sleep(50 * time.Millisecond)
	}
	e.must(http.StatusOK, "GET", "/api/v1/tasks/"+id, "")
}

// A cursor that no page produced is a 400 naming it, not a 503.
func TestBadCursors(t *testing.T) {
	forEachBackend(t, &opts{noWorker: true}, func(t *testing.T, e *env) {
		for _, path := range []string{
			"/api/v1/dlq?cursor=garbage", "/api/v1/dlq?cursor=1-x", "/api/v1/dlq?cursor=-",
			"/api/v1/tasks?cursor=nan:1", "/api/v1/tasks?cursor=inf:0", "/api/v1/tasks?cursor=1:-5", "/api/v1/tasks?cursor=x",
			"/api/v1/tasks?status=SCHEDULED&cursor=-1",
		} {
			if r := e.do("GET", path, ""); r.status != http.StatusBadRequest || !strings.Contains(r.errMessage(), "cursor") {
				t.Errorf("GET %s: %d %s", path, r.status, r.raw)
			}
		}
	})
}

// A Redis at its maxmemory (noeviction) refuses writes: a submit is a 503
// out_of_memory with Retry-After, told apart from Redis being down, and the
// task does not exist; once memory is available again the same submit works.
func TestRedisOutOfMemory(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t, &redistest.Options{Args: []string{"--maxmemory-policy", "noeviction"}})
	b := &redistest.Backend{Name: "redis", Client: redistest.Client(t, srv), Namespace: redistest.Namespace(t), Server: srv}
	e := newEnv(t, b, &opts{noWorker: true})
	e.must(http.StatusCreated, "POST", "/api/v1/tasks", `{"task_type":"echo"}`)
	if _, err := redistest.Command(srv.Addr, "CONFIG", "SET", "maxmemory", "1"); err != nil {
		t.Fatal(err)
	}
	for _, body := range []string{`{"task_type":"echo"}`, `{"task_type":"echo","delay_seconds":60}`} {
		r := e.do("POST", "/api/v1/tasks", body, "Idempotency-Key", "oom-"+body)
		if r.status != http.StatusServiceUnavailable || r.errCode() != "out_of_memory" || r.header.Get("Retry-After") == "" ||
			!strings.Contains(r.errMessage(), "maxmemory") {
			t.Errorf("submit %s over maxmemory: %d Retry-After %q %s", body, r.status, r.header.Get("Retry-After"), r.raw)
		}
	}
	if st := e.must(http.StatusOK, "GET", "/api/v1/queues/default", ""); st.body["submitted_total"] != float64(1) {
		t.Errorf("after refused submits the queue counts %v submitted, want 1", st.body["submitted_total"])
	}
	if _, err := redistest.Command(srv.Addr, "CONFIG", "SET", "maxmemory", "0"); err != nil {
		t.Fatal(err)
	}
	e.must(http.StatusCreated, "POST", "/api/v1/tasks", `{"task_type":"echo"}`, "Idempotency-Key", `oom-{"task_type":"echo"}`)
}

// An admin action on a queue that does not exist answers 404 and makes no
// queue (issue 30: `dtq queue pause no-such-queue` made one); a submission, a
// schedule or a limit's PUT still make queues.
func TestAdminOnAQueueThatDoesNotExist(t *testing.T) {
	forEachBackend(t, &opts{noWorker: true}, func(t *testing.T, e *env) {
		for _, c := range []struct{ method, path, body string }{
			{"GET", "/api/v1/queues/no-such-queue", ""},
			{"POST", "/api/v1/queues/no-such-queue/pause", ""},
			{"POST", "/api/v1/queues/no-such-queue/resume", ""},
			{"DELETE", "/api/v1/queues/no-such-queue?force=true", ""},
			{"GET", "/api/v1/queues/no-such-queue/groups", ""},
			{"DELETE", "/api/v1/queues/no-such-queue/groups/acme", ""},
			{"GET", "/api/v1/limits/no-such-queue", ""},
			{"DELETE", "/api/v1/limits/no-such-queue", ""},
			{"DELETE", "/api/v1/limits/no-such-queue/types/t", ""},
			{"DELETE", "/api/v1/limits/no-such-queue/keys/k", ""},
			{"POST", "/api/v1/dlq/requeue?queue=no-such-queue", ""},
			{"DELETE", "/api/v1/dlq?queue=no-such-queue", ""},
			{"POST", "/api/v1/dlq/redrive", `{"queue":"no-such-queue"}`},
		} {
			r := e.do(c.method, c.path, c.body)
			if r.status != http.StatusNotFound || r.errCode() != "not_found" || !strings.HasPrefix(r.errMessage(), `no such queue "no-such-queue"`) {
				t.Errorf("%s %s: %d %s, want 404 no such queue", c.method, c.path, r.status, r.raw)
			}
		}
		if r := e.must(http.StatusOK, "GET", "/api/v1/queues", ""); len(r.body["queues"].([]any)) != 0 {
			t.Fatalf("the refused actions made queues: %s", r.raw)
		}
		// Listings are no admin action: an empty list.
		e.must(http.StatusOK, "GET", "/api/v1/dlq?queue=no-such-queue", "")
		e.must(http.StatusOK, "GET", "/api/v1/tasks?queue=no-such-queue", "")

		e.must(http.StatusCreated, "POST", "/api/v1/tasks", `{"task_type":"echo","queue":"fresh"}`)
		if r := e.must(http.StatusOK, "POST", "/api/v1/queues/fresh/pause", ""); r.body["paused"] != true {
			t.Errorf("pause of a submitted-to queue: %s", r.raw)
		}
		e.must(http.StatusOK, "PUT", "/api/v1/limits/partner", `{"rate":5}`)
		e.must(http.StatusOK, "GET", "/api/v1/queues/partner", "")
		e.must(http.StatusCreated, "PUT", "/api/v1/schedules/nightly/report", `{"cron":"@daily","task_type":"echo"}`)
		e.must(http.StatusOK, "POST", "/api/v1/queues/nightly/pause", "")
		// Deleted, a queue is gone: a second delete is 404.
		e.must(http.StatusOK, "DELETE", "/api/v1/queues/partner", "")
		e.must(http.StatusNotFound, "DELETE", "/api/v1/queues/partner", "")
	})
}
