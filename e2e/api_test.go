package e2e

import (
	"bufio"
	"fmt"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/dtq-dev/dtq/internal/proctest"
	"github.com/dtq-dev/dtq/internal/redistest"
)

const key = "e2e-secret"

// Every route of the API, with each status code it documents, against the
// real binary on a real Redis.
func TestEveryRoute(t *testing.T) {
	t.Parallel()
	p := start(t, []string{"DTQ_REDIS_URL=" + redisURL(t), "DTQ_NAMESPACE=" + redistest.Namespace(t), "DTQ_API_KEY=" + key},
		"serve", "--addr", "127.0.0.1:0", "--max-depth", "3", "--max-batch", "10", "--queues", "default,slow")
	k := []string{"X-API-Key", key}
	post := func(want int, path, body string, h ...string) *proctest.Response {
		t.Helper()
		return p.Must(want, "POST", path, body, append(h, k...)...)
	}

	// Submit: 201, auth 401, idempotent 200/409/422, queue full 429.
	p.Must(http.StatusUnauthorized, "POST", "/api/v1/tasks", `{"task_type":"echo"}`)
	p.Must(http.StatusUnauthorized, "POST", "/api/v1/tasks", `{"task_type":"echo"}`, "X-API-Key", "wrong")
	created := post(http.StatusCreated, "/api/v1/tasks", `{"task_type":"echo","payload":"a"}`, "Idempotency-Key", "once")
	id := created.Str("id")
	p.WaitStatus(id, "SUCCEEDED")
	if r := post(http.StatusOK, "/api/v1/tasks", `{"task_type":"echo","payload":"a"}`, "Idempotency-Key", "once"); r.Str("id") != id {
		t.Fatalf("replay: %s", r.Raw)
	}
	post(http.StatusUnprocessableEntity, "/api/v1/tasks", `{"task_type":"echo","payload":"b"}`, "Idempotency-Key", "once")
	held := post(http.StatusCreated, "/api/v1/tasks", `{"task_type":"echo","queue":"held"}`, "Idempotency-Key", "held").Str("id")
	post(http.StatusConflict, "/api/v1/tasks", `{"task_type":"echo","queue":"held"}`, "Idempotency-Key", "held")
	post(http.StatusCreated, "/api/v1/tasks", `{"task_type":"echo","queue":"held"}`)
	post(http.StatusCreated, "/api/v1/tasks", `{"task_type":"echo","queue":"held"}`)
	if r := post(http.StatusTooManyRequests, "/api/v1/tasks", `{"task_type":"echo","queue":"held"}`); r.Header.Get("Retry-After") == "" {
		t.Fatalf("429 without Retry-After: %v", r.Header)
	}

	// Batch: 200 with per-item results; 413 over --max-batch.
	b := post(http.StatusOK, "/api/v1/tasks/batch", `{"tasks":[{"task_type":"echo"},{"task_type":""}]}`)
	if items := b.Body["results"].([]any); items[0].(map[string]any)["status"] != 201.0 || items[1].(map[string]any)["status"] != 400.0 {
		t.Fatalf("batch: %s", b.Raw)
	}
	post(http.StatusRequestEntityTooLarge, "/api/v1/tasks/batch", `{"tasks":[`+strings.TrimSuffix(strings.Repeat(`{"task_type":"echo"},`, 11), ",")+`]}`)

	// Reads are open without the key.
	p.Must(http.StatusOK, "GET", "/api/v1/tasks/"+id, "")
	p.Must(http.StatusNotFound, "GET", "/api/v1/tasks/default-01ARZ3NDEKTSV4RRFFQ69G5FAV", "")
	if l := p.Must(http.StatusOK, "GET", "/api/v1/tasks?queue=held&status=QUEUED&limit=2", ""); len(l.Body["tasks"].([]any)) != 2 {
		t.Fatalf("list: %s", l.Raw)
	}
	p.Must(http.StatusBadRequest, "GET", "/api/v1/tasks?limit=0", "")

	// Cancel: 200, then 409 for a finished task, 404 for an unknown one.
	if c := post(http.StatusOK, "/api/v1/tasks/"+held+"/cancel", ""); c.Str("status") != "CANCELLED" {
		t.Fatalf("cancel: %s", c.Raw)
	}
	post(http.StatusConflict, "/api/v1/tasks/"+id+"/cancel", "")
	post(http.StatusNotFound, "/api/v1/tasks/nope/cancel", "")
	p.Must(http.StatusUnauthorized, "POST", "/api/v1/tasks/"+id+"/cancel", "")

	// Dead letters.
	dead := post(http.StatusCreated, "/api/v1/tasks", `{"task_type":"always_fail","payload":{"permanent":true}}`).Str("id")
	p.WaitStatus(dead, "DEAD")
	if l := p.Must(http.StatusOK, "GET", "/api/v1/dlq", ""); len(l.Body["dead_letters"].([]any)) != 1 {
		t.Fatalf("dlq: %s", l.Raw)
	}
	p.Must(http.StatusUnauthorized, "POST", "/api/v1/dlq/"+dead+"/requeue", "")
	post(http.StatusOK, "/api/v1/dlq/"+dead+"/requeue", "")
	p.WaitStatus(dead, "DEAD")
	post(http.StatusConflict, "/api/v1/dlq/"+id+"/requeue", "")
	p.Must(http.StatusOK, "DELETE", "/api/v1/dlq/"+dead, "", k...)
	p.Must(http.StatusConflict, "DELETE", "/api/v1/dlq/"+id, "", k...)
	post(http.StatusOK, "/api/v1/dlq/requeue?queue=default", "")
	p.Must(http.StatusOK, "DELETE", "/api/v1/dlq", "", k...)
	p.Must(http.StatusUnauthorized, "DELETE", "/api/v1/dlq", "")

	// Queues, workers, audit.
	if q := p.Must(http.StatusOK, "GET", "/api/v1/queues", ""); len(q.Body["queues"].([]any)) < 2 {
		t.Fatalf("queues: %s", q.Raw)
	}
	p.Must(http.StatusOK, "GET", "/api/v1/queues/held", "")
	p.Must(http.StatusBadRequest, "GET", "/api/v1/queues/a%20b", "")
	p.Must(http.StatusUnauthorized, "POST", "/api/v1/queues/held/pause", "")
	if q := post(http.StatusOK, "/api/v1/queues/held/pause", ""); q.Body["paused"] != true {
		t.Fatalf("pause: %s", q.Raw)
	}
	if q := post(http.StatusOK, "/api/v1/queues/held/resume", ""); q.Body["paused"] != false {
		t.Fatalf("resume: %s", q.Raw)
	}
	if w := p.Must(http.StatusOK, "GET", "/api/v1/workers", ""); len(w.Body["workers"].([]any)) != 1 {
		t.Fatalf("workers: %s", w.Raw)
	}
	if a := p.Must(http.StatusOK, "GET", "/api/v1/audit", ""); len(a.Body["entries"].([]any)) < 5 {
		t.Fatalf("audit: %s", a.Raw)
	}

	// Probes and routing errors.
	p.Must(http.StatusOK, "GET", "/health", "")
	p.Must(http.StatusOK, "GET", "/ready", "")
	if r := p.Must(http.StatusMethodNotAllowed, "DELETE", "/api/v1/tasks", ""); r.Header.Get("Allow") == "" || r.ErrCode() != "method_not_allowed" {
		t.Fatalf("405: %v %s", r.Header, r.Raw)
	}
	if r := p.Must(http.StatusNotFound, "GET", "/api/v1/nope", ""); r.ErrCode() != "not_found" {
		t.Fatalf("404: %s", r.Raw)
	}
	p.CheckNoPanic()
}

// Each class of bad input gets a 4xx naming the problem: never a 5xx, never
// a panic, and the server keeps serving.
func TestBadInput(t *testing.T) {
	t.Parallel()
	p := start(t, nil, "serve", "--addr", "127.0.0.1:0", "--max-body-bytes", "65536", "--max-payload-bytes", "16384")
	cases := []struct {
		name, body, ctype string
		status            int
	}{
		{"oversized body", `{"task_type":"echo","payload":"` + strings.Repeat("x", 70000) + `"}`, "", 413},
		{"oversized payload", `{"task_type":"echo","payload":"` + strings.Repeat("x", 20000) + `"}`, "", 413},
		{"malformed", `{"task_type":"echo",`, "", 400},
		{"wrong type", `{"task_type":["echo"]}`, "", 400},
		{"wrong number", `{"task_type":"echo","priority":"9"}`, "", 400},
		{"huge number", `{"task_type":"echo","delay_seconds":1e400}`, "", 400},
		{"invalid UTF-8", "{\"task_type\":\"\xc3\x28\"}", "", 400},
		{"unknown field", `{"task_type":"echo","surprise":1}`, "", 400},
		{"deep nesting", `{"task_type":"echo","payload":` + strings.Repeat(`{"a":`, 100) + "1" + strings.Repeat("}", 100) + `}`, "", 400},
		{"trailing data", `{"task_type":"echo"}garbage`, "", 400},
		{"not JSON content type", `{"task_type":"echo"}`, "application/x-www-form-urlencoded", 415},
		{"null body", `null`, "", 400},
	}
	for _, c := range cases {
		h := []string{}
		if c.ctype != "" {
			h = []string{"Content-Type", c.ctype}
		}
		r := p.Do("POST", "/api/v1/tasks", c.body, h...)
		if r.Status != c.status || r.ErrCode() == "" {
			t.Errorf("%s: status %d, want %d with an error code: %.300s", c.name, r.Status, c.status, r.Raw)
		}
	}

	// Huge headers: 431 from the server's header cap.
	req, _ := http.NewRequest("GET", p.URL+"/health", nil)
	req.Header.Set("X-Big", strings.Repeat("h", 100<<10))
	if r := p.Send(req); r.Status != http.StatusRequestHeaderFieldsTooLarge {
		t.Errorf("huge headers: status %d, want 431", r.Status)
	}

	// A slow client (headers never finished) is cut off by the header
	// timeout, while others are served meanwhile.
	conn, err := net.Dial("tcp", strings.TrimPrefix(p.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "POST /api/v1/tasks HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n")
	p.Must(http.StatusCreated, "POST", "/api/v1/tasks", `{"task_type":"echo"}`)
	conn.SetReadDeadline(time.Now().Add(30 * time.Second))
	start := time.Now()
	line, err := bufio.NewReader(conn).ReadString('\n')
	if err == nil && !strings.Contains(line, "408") {
		t.Errorf("slow client got %q, want the connection closed or a 408", line)
	}
	if time.Since(start) > 20*time.Second {
		t.Errorf("slow client held its connection for %v", time.Since(start))
	}

	// A slow body (headers sent, body trickling) is cut off too.
	conn2, err := net.Dial("tcp", strings.TrimPrefix(p.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn2.Close()
	fmt.Fprintf(conn2, "POST /api/v1/tasks HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{")
	conn2.SetReadDeadline(time.Now().Add(60 * time.Second))
	line, err = bufio.NewReader(conn2).ReadString('\n')
	if err == nil && (strings.Contains(line, " 5") || strings.Contains(line, "201")) {
		t.Errorf("slow body got %q", line)
	}

	p.Must(http.StatusOK, "GET", "/health", "")
	if l := p.Must(http.StatusOK, "GET", "/api/v1/tasks?limit=100", ""); len(l.Body["tasks"].([]any)) != 1 {
		t.Fatalf("bad input created tasks: %s", l.Raw)
	}
	p.CheckNoPanic()
}

// With Redis gone: /ready and the API answer 503, /health stays 200, and
// the API recovers when Redis is back.
func TestRedisDown(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t, nil)
	p := start(t, []string{"DTQ_REDIS_URL=redis://" + srv.Addr}, "api", "--addr", "127.0.0.1:0")
	p.Must(http.StatusCreated, "POST", "/api/v1/tasks", `{"task_type":"echo"}`)
	if err := srv.Pause(); err != nil {
		t.Fatal(err)
	}
	defer srv.Resume()
	p.Must(http.StatusOK, "GET", "/health", "")
	p.Must(http.StatusServiceUnavailable, "GET", "/ready", "")
	if r := p.Must(http.StatusServiceUnavailable, "POST", "/api/v1/tasks", `{"task_type":"echo"}`); r.ErrCode() != "unavailable" {
		t.Fatalf("submit with Redis paused: %s", r.Raw)
	}
	if err := srv.Resume(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for p.Do("GET", "/ready", "").Status != http.StatusOK {
		if time.Now().After(deadline) {
			t.Fatal("not ready 30s after Redis came back")
		}
		time.Sleep(50 * time.Millisecond)
	}
	p.Must(http.StatusCreated, "POST", "/api/v1/tasks", `{"task_type":"echo"}`)
	p.CheckNoPanic()
}

// The rest of the documented answers: the OpenAPI document, the events
// route's refusals, and the 410 of an idempotent replay whose task expired.
func TestDocumentAndRefusals(t *testing.T) {
	t.Parallel()
	p := start(t, nil, "serve", "--addr", "127.0.0.1:0", "--retention", "100ms")
	doc := p.Must(http.StatusOK, "GET", "/api/v1/openapi.json", "")
	if v, _ := doc.Body["openapi"].(string); !strings.HasPrefix(v, "3.1") {
		t.Fatalf("openapi.json: %.200s", doc.Raw)
	}
	if r := p.Must(http.StatusUpgradeRequired, "GET", "/ws/events", ""); r.ErrCode() != "upgrade_required" {
		t.Fatalf("events without an upgrade: %s", r.Raw)
	}
	ws := []string{"Connection", "Upgrade", "Upgrade", "websocket", "Sec-WebSocket-Version", "13", "Sec-WebSocket-Key", "dGhlIHNhbXBsZSBub25jZQ=="}
	if r := p.Must(http.StatusForbidden, "GET", "/ws/events", "", append(ws, "Origin", "https://evil.example")...); r.ErrCode() != "forbidden_origin" {
		t.Fatalf("foreign origin: %s", r.Raw)
	}
	p.Must(http.StatusBadRequest, "GET", "/ws/events?queue=a%20b", "", ws...)

	body := `{"task_type":"echo","payload":"once"}`
	id := p.Must(http.StatusCreated, "POST", "/api/v1/tasks", body, "Idempotency-Key", "k").Str("id")
	// A task expires only after it finished: wait for it to be gone (its
	// SUCCEEDED state lasts 100 ms, too short to poll for reliably).
	deadline := time.Now().Add(30 * time.Second)
	for p.Do("GET", "/api/v1/tasks/"+id, "").Status != http.StatusNotFound {
		if time.Now().After(deadline) {
			t.Fatal("the task did not expire after its 100ms retention")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if r := p.Must(http.StatusGone, "POST", "/api/v1/tasks", body, "Idempotency-Key", "k"); r.ErrCode() != "expired" || r.Body["error"].(map[string]any)["task_id"] != id {
		t.Fatalf("replay after expiry: %s", r.Raw)
	}
	p.CheckNoPanic()
}
