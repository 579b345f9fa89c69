package api_test

import (
	"bufio"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dtq-dev/dtq/api"
)

// The rules of strict input (CONTRACT §4.1.1, §2.1.1), each sent as raw
// bytes on a connection of its own to a real server: what a client writes
// is what the server reads, with no HTTP client in between to clean a
// path or set a header.

// raw sends req, the bytes of one HTTP/1.1 request, and returns the answer
// with its body decoded. An answer that does not come within 10 s (the
// server waiting for a body it should not read) fails the test.
func (e *env) raw(req string) *resp {
	e.t.Helper()
	conn, err := net.Dial("tcp", e.srv.Listener.Addr().String())
	if err != nil {
		e.t.Fatal(err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.WriteString(conn, req); err != nil {
		e.t.Fatal(err)
	}
	res, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		e.t.Fatalf("%.80q: no answer: %v", req, err)
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if err != nil {
		e.t.Fatalf("%.80q: reading the answer: %v", req, err)
	}
	r := &resp{status: res.StatusCode, header: res.Header, raw: body}
	if err := json.Unmarshal(body, &r.body); err != nil {
		e.t.Fatalf("%.80q: the answer is not a JSON object: %v: %s", req, err, body)
	}
	return r
}

// request is the text of a request with a JSON body and its length.
func request(method, path, body string) string {
	return method + " " + path + " HTTP/1.1\r\nHost: dtq.test\r\nContent-Type: application/json\r\n" +
		"Content-Length: " + strconv.Itoa(len(body)) + "\r\nConnection: close\r\n\r\n" + body
}

// refused checks that r is a 400 invalid_field whose message has each of
// mentions.
func refused(t *testing.T, what string, r *resp, mentions ...string) {
	t.Helper()
	if r.status != http.StatusBadRequest || r.errCode() != "invalid_field" {
		t.Errorf("%s: %d %s, want 400 invalid_field", what, r.status, r.raw)
		return
	}
	for _, m := range mentions {
		if !strings.Contains(r.errMessage(), m) {
			t.Errorf("%s: message %q does not say %s", what, r.errMessage(), m)
		}
	}
}

// noTasks checks that the refused requests created nothing.
func noTasks(t *testing.T, e *env) {
	t.Helper()
	for _, q := range []string{"default", "other"} {
		if r := e.must(http.StatusOK, "GET", "/api/v1/tasks?queue="+q, ""); len(r.body["tasks"].([]any)) != 0 {
			t.Errorf("refused requests created tasks in %s: %s", q, r.raw)
		}
	}
}

// named checks that r is a 400 invalid_field whose message begins with
// want: the field's path, then the problem.
func named(t *testing.T, what string, r *resp, want string) {
	t.Helper()
	if r.status != http.StatusBadRequest || r.errCode() != "invalid_field" || !strings.HasPrefix(r.errMessage(), want) {
		t.Errorf("%s: %d %s, want 400 invalid_field %q…", what, r.status, r.raw, want)
	}
}

// A field given twice is refused, at any level, naming its path: Go's
// decoder would take the last value, another parser the first. Payloads
// are included: a handler in another language reads them too.
func TestDuplicateFieldsAreRefused(t *testing.T) {
	forEachBackend(t, &opts{noWorker: true}, func(t *testing.T, e *env) {
		for _, c := range []struct{ path, body, want string }{
			{"/api/v1/tasks", `{"task_type":"echo","queue":"default","queue":"other"}`, "queue appears twice"},
			{"/api/v1/tasks", `{"task_type":"echo","task_type":"fail"}`, "task_type appears twice"},
			{"/api/v1/tasks", `{"task_type":"echo","priority":null,"priority":9}`, "priority appears twice"},
			// An escaped key is the same key.
			{"/api/v1/tasks", `{"task_type":"echo","queue":"default","\u0071ueue":"other"}`, "queue appears twice"},
			{"/api/v1/tasks", `{"task_type":"echo","unique":{"key":"a","key":"b"}}`, "unique.key appears twice"},
			{"/api/v1/tasks", `{"task_type":"echo","payload":{"a":1,"b":2,"a":3}}`, "payload.a appears twice"},
			{"/api/v1/tasks", `{"task_type":"echo","payload":{"x":[0,{"b":1,"b":1}]}}`, "payload.x[1].b appears twice"},
			{"/api/v1/tasks", `{"task_type":"echo","payload":{"":1,"":2}}`, `payload."" appears twice`},
			{"/api/v1/tasks", `{"task_type":"echo","payload":{"a b":{"c.d":1,"c.d":2}}}`, `payload."a b"."c.d" appears twice`},
			{"/api/v1/tasks", `{"task_type":"echo","payload":{` + manyKeys(40) + `,"k7":0}}`, "payload.k7 appears twice"},
			{"/api/v1/tasks/batch", `{"tasks":[{"task_type":"echo"},{"task_type":"echo","queue":"a","queue":"b"}]}`, "tasks[1].queue appears twice"},
			{"/api/v1/tasks/batch", `{"tasks":[{"task_type":"echo"}],"tasks":[]}`, "tasks appears twice"},
			{"/api/v1/tasks/batch", `{"tasks":[{"task_type":"echo","payload":{"a":{"a":1,"a":2}}}]}`, "tasks[0].payload.a.a appears twice"},
		} {
			named(t, c.body, e.raw(request("POST", c.path, c.body)), c.want)
		}
		sched := "/api/v1/schedules/default/nightly"
		named(t, "schedule", e.raw(request("PUT", sched, `{"cron":"@hourly","task_type":"echo","cron":"@daily"}`)), "cron appears twice")
		named(t, "schedule payload", e.raw(request("PUT", sched, `{"cron":"@hourly","task_type":"echo","payload":{"n":1,"n":2}}`)), "payload.n appears twice")
		// A long key is cut in the message.
		long := strings.Repeat("é", 100)
		r := e.raw(request("POST", "/api/v1/tasks", `{"task_type":"echo","payload":{"`+long+`":1,"`+long+`":2}}`))
		named(t, "long key", r, `payload."`+strings.Repeat("é", 20)+`…" appears twice`)
		noTasks(t, e)
		e.must(http.StatusNotFound, "GET", sched, "")

		// The same keys in different objects, and a large object of
		// distinct keys, are fine.
		r = e.raw(request("POST", "/api/v1/tasks", `{"task_type":"echo","payload":{"a":{"a":1},"b":[{"a":1},{"a":2}],"c":{`+manyKeys(40)+`}}}`))
		if r.status != http.StatusCreated {
			t.Fatalf("distinct keys: %d %s", r.status, r.raw)
		}
	})
}

// manyKeys is n distinct members "k0":0, "k1":1, ….
func manyKeys(n int) string {
	var b strings.Builder
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`"k` + strconv.Itoa(i) + `":` + strconv.Itoa(i))
	}
	return b.String()
}

// A field name is matched exactly: Go's decoder matches names regardless of
// letter case, another reads "Queue" as an unknown field. The answer names
// the field and the one meant. A payload's keys are the client's own.
func TestFieldNamesAreCaseSensitive(t *testing.T) {
	forEachBackend(t, &opts{noWorker: true}, func(t *testing.T, e *env) {
		const cs = " is not a known field (field names are case-sensitive: did you mean "
		for _, c := range []struct{ method, path, body, want string }{
			{"POST", "/api/v1/tasks", `{"task_type":"echo","Queue":"other"}`, `Queue` + cs + `"queue"?)`},
			{"POST", "/api/v1/tasks", `{"TASK_TYPE":"echo"}`, `TASK_TYPE` + cs + `"task_type"?)`},
			{"POST", "/api/v1/tasks", `{"task_type":"echo","Payload":1,"payload":2}`, `Payload` + cs + `"payload"?)`},
			{"POST", "/api/v1/tasks", `{"task_type":"echo","unique":{"Key":"k"}}`, `unique.Key` + cs + `"key"?)`},
			// U+212A KELVIN SIGN: Go's decoder takes it for k.
			{"POST", "/api/v1/tasks", `{"task_type":"echo","unique":{"\u212aey":"k"}}`, "unique.\"\u212aey\"" + cs + `"key"?)`},
			{"POST", "/api/v1/tasks/batch", `{"Tasks":[{"task_type":"echo"}]}`, `Tasks` + cs + `"tasks"?)`},
			{"POST", "/api/v1/tasks/batch", `{"tasks":[{"task_type":"echo"},{"task_type":"echo","Priority":9}]}`, `tasks[1].Priority` + cs + `"priority"?)`},
			{"PUT", "/api/v1/schedules/default/nightly", `{"Cron":"@hourly","task_type":"echo"}`, `Cron` + cs + `"cron"?)`},
			// Unknown fields, as before, name the field.
			{"POST", "/api/v1/tasks", `{"task_type":"echo","colour":"red"}`, `colour is not a known field`},
			{"POST", "/api/v1/tasks", `{"task_type":"echo","unique":{"keys":"k"}}`, `unique.keys is not a known field`},
		} {
			named(t, c.body, e.raw(request(c.method, c.path, c.body)), c.want)
		}
		noTasks(t, e)
		e.must(http.StatusNotFound, "GET", "/api/v1/schedules/default/nightly", "")

		// Payload keys are free: both letter cases, as sent.
		r := e.raw(request("POST", "/api/v1/tasks", `{"task_type":"echo","payload":{"a":1,"A":2,"Queue":3}}`))
		if r.status != http.StatusCreated {
			t.Fatalf("payload keys in two cases: %d %s", r.status, r.raw)
		}
		if p, _ := r.body["payload"].(map[string]any); len(p) != 3 || p["a"] != 1.0 || p["A"] != 2.0 || p["Queue"] != 3.0 {
			t.Fatalf("payload: %s", r.raw)
		}
	})
}

// A body that Content-Length says is over the limit is refused with 413
// at once, before any of it is read: the client sends the headers and no
// body, and the answer comes (a server that waited for the body would
// hit the read deadline of raw). A body of unknown length (chunked) is cut
// at the limit.
func TestBodyOverTheLimit(t *testing.T) {
	forEachBackend(t, &opts{noWorker: true, api: api.Config{MaxBodyBytes: 4096}}, func(t *testing.T, e *env) {
		const empty = `{"task_type":"echo","payload":""}`
		for _, route := range []string{"POST /api/v1/tasks", "POST /api/v1/tasks/batch", "PUT /api/v1/schedules/default/nightly"} {
			for _, expect := range []string{"", "Expect: 100-continue\r\n"} {
				r := e.raw(route + " HTTP/1.1\r\nHost: dtq.test\r\nContent-Type: application/json\r\n" + expect +
					"Content-Length: 1000000000000\r\n\r\n")
				if r.status != http.StatusRequestEntityTooLarge || r.errCode() != "too_large" || !strings.Contains(r.errMessage(), "4096 bytes") {
					t.Errorf("%s %q, Content-Length 10^12 and no body: %d %s, want 413 too_large at once", route, expect, r.status, r.raw)
				}
			}
			// One byte over.
			body := `{"task_type":"echo","payload":"` + strings.Repeat("x", 4097-len(empty)) + `"}`
			method, path, _ := strings.Cut(route, " ")
			if r := e.raw(request(method, path, body)); r.status != http.StatusRequestEntityTooLarge {
				t.Errorf("%s, 4097 bytes: %d %s, want 413", route, r.status, r.raw)
			}
		}
		chunk := `{"task_type":"echo","payload":"` + strings.Repeat("x", 5000) + `"}`
		r := e.raw("POST /api/v1/tasks HTTP/1.1\r\nHost: dtq.test\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n" +
			strconv.FormatInt(int64(len(chunk)), 16) + "\r\n" + chunk + "\r\n0\r\n\r\n")
		if r.status != http.StatusRequestEntityTooLarge || r.errCode() != "too_large" {
			t.Errorf("chunked body over the limit: %d %s, want 413", r.status, r.raw)
		}
		noTasks(t, e)
		e.must(http.StatusNotFound, "GET", "/api/v1/schedules/default/nightly", "")
		// At the limit: accepted.
		body := `{"task_type":"echo","payload":"` + strings.Repeat("x", 4096-len(empty)) + `"}`
		if r := e.raw(request("POST", "/api/v1/tasks", body)); r.status != http.StatusCreated {
			t.Errorf("a body of exactly the limit: %d %s, want 201", r.status, r.raw)
		}
	})
}

// Queue and schedule names follow one rule wherever the API takes them: in
// a body, a query and a path. "" and names made only of dots ("." and "..",
// steps up a URL path) are not names; an explicit "" is not the default
// queue (the field or parameter left out is).
func TestNamesFollowOneRule(t *testing.T) {
	forEachBackend(t, &opts{noWorker: true}, func(t *testing.T, e *env) {
		get := func(path string) string {
			return "GET " + path + " HTTP/1.1\r\nHost: dtq.test\r\nConnection: close\r\n\r\n"
		}
		post := func(method, path string) string {
			return method + " " + path + " HTTP/1.1\r\nHost: dtq.test\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
		}
		const rule = "not only dots"
		for _, q := range []string{`""`, `"."`, `".."`, `"..."`} {
			body := `{"task_type":"echo","queue":` + q + `}`
			refused(t, body, e.raw(request("POST", "/api/v1/tasks", body)), "queue", rule)
			batch := e.raw(request("POST", "/api/v1/tasks/batch", `{"tasks":[`+body+`]}`))
			item, _ := batch.body["results"].([]any)
			if batch.status != http.StatusOK || len(item) != 1 || item[0].(map[string]any)["status"] != 400.0 ||
				!strings.Contains(item[0].(map[string]any)["error"].(map[string]any)["message"].(string), rule) {
				t.Errorf("batch item with queue %s: %d %s, want its item refused", q, batch.status, batch.raw)
			}
		}
		for _, g := range []string{`""`, `"."`, `"a|b"`, `"a b"`, `"` + strings.Repeat("g", 65) + `"`} {
			body := `{"task_type":"echo","group":` + g + `}`
			r := e.raw(request("POST", "/api/v1/tasks", body))
			refused(t, body, r, "group", rule)
			if strings.Contains(r.errMessage(), "group group") {
				t.Errorf("%s: message %q names the field twice", body, r.errMessage())
			}
		}
		if r := e.raw(request("POST", "/api/v1/tasks", `{"task_type":"echo","queue":""}`)); strings.Contains(r.errMessage(), "queue queue") {
			t.Errorf(`queue "": message %q names the field twice`, r.errMessage())
		}
		for _, name := range []string{"%2E", "%2E%2E", "%2e%2E", "...", "a%20b"} {
			refused(t, "queue "+name, e.raw(get("/api/v1/queues/"+name)), "queue")
			refused(t, "pause "+name, e.raw(post("POST", "/api/v1/queues/"+name+"/pause")), "queue")
			refused(t, "resume "+name, e.raw(post("POST", "/api/v1/queues/"+name+"/resume")), "queue")
			sched := `{"cron":"@hourly","task_type":"echo"}`
			refused(t, "schedule queue "+name, e.raw(request("PUT", "/api/v1/schedules/"+name+"/nightly", sched)), "queue")
			refused(t, "schedule name "+name, e.raw(request("PUT", "/api/v1/schedules/default/"+name, sched)), "name")
			refused(t, "get schedule "+name, e.raw(get("/api/v1/schedules/default/"+name)), "name")
			refused(t, "delete schedule "+name, e.raw(post("DELETE", "/api/v1/schedules/default/"+name)), "name")
			refused(t, "pause schedule "+name, e.raw(post("POST", "/api/v1/schedules/default/"+name+"/pause")), "name")
			refused(t, "resume schedule "+name, e.raw(post("POST", "/api/v1/schedules/"+name+"/x/resume")), "queue")
		}
		for _, q := range []string{"", ".", "..", "%2E%2E"} {
			for _, req := range []string{
				get("/api/v1/tasks?queue=" + q),
				get("/api/v1/dlq?queue=" + q),
				get("/api/v1/schedules?queue=" + q),
				post("POST", "/api/v1/dlq/requeue?queue="+q),
				post("DELETE", "/api/v1/dlq?queue="+q),
				"GET /ws/events?queue=" + q + " HTTP/1.1\r\nHost: dtq.test\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n" +
					"Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n",
			} {
				refused(t, req, e.raw(req), "queue", rule)
			}
		}
		noTasks(t, e)
		if r := e.must(http.StatusOK, "GET", "/api/v1/queues", ""); len(r.body["queues"].([]any)) != 0 {
			t.Errorf("refused names made queues: %s", r.raw)
		}
		// Left out or null: the default queue.
		for _, body := range []string{`{"task_type":"echo"}`, `{"task_type":"echo","queue":null}`} {
			if r := e.raw(request("POST", "/api/v1/tasks", body)); r.status != http.StatusCreated || r.str("queue") != "default" {
				t.Errorf("%s: %d %s, want 201 in default", body, r.status, r.raw)
			}
		}
		if r := e.raw(get("/api/v1/tasks")); r.status != http.StatusOK || len(r.body["tasks"].([]any)) != 2 {
			t.Errorf("list without ?queue=: %d %s, want the default queue's 2 tasks", r.status, r.raw)
		}
	})
}
