package api_test

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/dtq-dev/dtq"
	"github.com/dtq-dev/dtq/api"
)

func TestSubmitGetList(t *testing.T) {
	forEachBackend(t, nil, func(t *testing.T, e *env) {
		r := e.must(http.StatusCreated, "POST", "/api/v1/tasks", `{"task_type":"echo","payload":{"n":1},"priority":7}`)
		id := r.str("id")
		if r.header.Get("Location") != "/api/v1/tasks/"+id || r.str("queue") != "default" || r.body["priority"] != 7.0 {
			t.Fatalf("created: Location %q, %s", r.header.Get("Location"), r.raw)
		}
		done := e.waitStatus(id, "SUCCEEDED")
		if res, _ := done.body["result"].(map[string]any); res["n"] != 1.0 {
			t.Fatalf("result: %s", done.raw)
		}
		list := e.must(http.StatusOK, "GET", "/api/v1/tasks?status=SUCCEEDED&limit=10", "")
		tasks, _ := list.body["tasks"].([]any)
		if len(tasks) != 1 || tasks[0].(map[string]any)["id"] != id {
			t.Fatalf("list: %s", list.raw)
		}
		e.must(http.StatusNotFound, "GET", "/api/v1/tasks/01ARZ3NDEKTSV4RRFFQ69G5FAV", "")
		if r := e.must(http.StatusBadRequest, "GET", "/api/v1/tasks?limit=x", ""); !strings.Contains(r.errMessage(), "limit") {
			t.Fatalf("bad limit: %s", r.raw)
		}
		if r := e.must(http.StatusBadRequest, "GET", "/api/v1/tasks?status=NOPE", ""); r.errCode() != "invalid_field" {
			t.Fatalf("bad status: %s", r.raw)
		}
	})
}

func TestSubmitRejectsBadInput(t *testing.T) {
	forEachBackend(t, &opts{api: api.Config{MaxBodyBytes: 4096}, engine: dtq.Config{MaxPayloadBytes: 1024}}, func(t *testing.T, e *env) {
		cases := []struct {
			name, body, ctype string
			status            int
			mention           string // the message names this
		}{
			{"empty", " ", "", 400, "empty"},
			{"malformed", `{"task_type":`, "", 400, "malformed"},
			{"not an object", `[1,2]`, "", 400, "object"},
			{"trailing data", `{"task_type":"echo"} {}`, "", 400, "after the JSON"},
			{"invalid UTF-8", "{\"task_type\":\"e\xffcho\"}", "", 400, "UTF-8"},
			{"unknown field", `{"task_type":"echo","colour":"red"}`, "", 400, "colour"},
			{"deep nesting", `{"task_type":"echo","payload":` + strings.Repeat("[", 40) + strings.Repeat("]", 40) + `}`, "", 400, "nested"},
			{"missing type", `{"payload":1}`, "", 400, "task_type"},
			{"empty type", `{"task_type":""}`, "", 400, "task_type"},
			{"type not a string", `{"task_type":5}`, "", 400, "task_type"},
			{"priority too high", `{"task_type":"echo","priority":10}`, "", 400, "priority"},
			{"priority fractional", `{"task_type":"echo","priority":1.5}`, "", 400, "priority"},
			{"priority a string", `{"task_type":"echo","priority":"high"}`, "", 400, "priority"},
			{"negative delay", `{"task_type":"echo","delay_seconds":-1}`, "", 400, "delay_seconds"},
			{"zero attempts", `{"task_type":"echo","max_attempts":0}`, "", 400, "max_attempts"},
			{"zero timeout", `{"task_type":"echo","timeout_seconds":0}`, "", 400, "timeout_seconds"},
			{"bad queue name", `{"task_type":"echo","queue":"a b{c}"}`, "", 400, "queue"},
			{"debounce without key", `{"task_type":"echo","debounce":{"period_seconds":1}}`, "", 400, "debounce.key"},
			{"debounce without period", `{"task_type":"echo","debounce":{"key":"k"}}`, "", 400, "debounce.period_seconds"},
			{"debounce period 0", `{"task_type":"echo","debounce":{"key":"k","period_seconds":0}}`, "", 400, "debounce.period_seconds"},
			{"debounce period a string", `{"task_type":"echo","debounce":{"key":"k","period_seconds":"2s"}}`, "", 400, "debounce.period_seconds"},
			{"debounce max wait short", `{"task_type":"echo","debounce":{"key":"k","period_seconds":2,"max_wait_seconds":1}}`, "", 400, "debounce.max_wait_seconds"},
			{"debounce and delay", `{"task_type":"echo","delay_seconds":1,"debounce":{"key":"k","period_seconds":1}}`, "", 400, "debounce"},
			{"debounce and unique", `{"task_type":"echo","unique":{},"debounce":{"key":"k","period_seconds":1}}`, "", 400, "debounce"},
			{"debounce unknown field", `{"task_type":"echo","debounce":{"key":"k","period":"2s"}}`, "", 400, "debounce.period"},
			{"payload too large", `{"task_type":"echo","payload":"` + strings.Repeat("x", 2000) + `"}`, "", 413, "payload"},
			{"body too large", `{"task_type":"echo","payload":"` + strings.Repeat("x", 5000) + `"}`, "", 413, "body"},
			{"text content type", `{"task_type":"echo"}`, "text/plain", 415, "application/json"},
		}
		for _, c := range cases {
			var h []string
			if c.ctype != "" {
				h = []string{"Content-Type", c.ctype}
			}
			r := e.do("POST", "/api/v1/tasks", c.body, h...)
			if r.status != c.status || r.errCode() == "" || !strings.Contains(r.errMessage(), c.mention) {
				t.Errorf("%s: status %d, want %d naming %q: %s", c.name, r.status, c.status, c.mention, r.raw)
			}
		}
		// No Content-Type at all.
		req, _ := http.NewRequest("POST", e.srv.URL+"/api/v1/tasks", strings.NewReader(`{"task_type":"echo"}`))
		res, err := e.srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != http.StatusUnsupportedMediaType {
			t.Errorf("no content type: status %d", res.StatusCode)
		}
		// Nothing above was accepted.
		list := e.must(http.StatusOK, "GET", "/api/v1/tasks", "")
		if tasks, _ := list.body["tasks"].([]any); len(tasks) != 0 {
			t.Fatalf("bad input created tasks: %s", list.raw)
		}
		// A charset parameter is fine.
		e.must(http.StatusCreated, "POST", "/api/v1/tasks", `{"task_type":"echo"}`, "Content-Type", "application/json; charset=utf-8")
	})
}

// A debounced submission answers 201 when it created the task and 200
// with that task (debounced, its new payload) when it joined it; in a
// batch too.
func TestDebouncedSubmit(t *testing.T) {
	forEachBackend(t, nil, func(t *testing.T, e *env) {
		body := func(n int) string {
			return fmt.Sprintf(`{"task_type":"echo","queue":"idle","payload":%d,"debounce":{"key":"doc-7","period_seconds":3600,"keep_first":%v}}`, n, n == 3)
		}
		first := e.must(http.StatusCreated, "POST", "/api/v1/tasks", body(1))
		if first.body["debounced"] != nil || first.str("status") != "SCHEDULED" || first.header.Get("Location") == "" {
			t.Fatalf("created: %s", first.raw)
		}
		joined := e.must(http.StatusOK, "POST", "/api/v1/tasks", body(2))
		if joined.str("id") != first.str("id") || joined.body["debounced"] != true || joined.body["payload"] != 2.0 {
			t.Fatalf("joined: %s, want %s with payload 2", joined.raw, first.str("id"))
		}
		if kept := e.must(http.StatusOK, "POST", "/api/v1/tasks", body(3)); kept.body["payload"] != 2.0 {
			t.Fatalf("keep_first: %s, want payload 2", kept.raw)
		}
		r := e.must(http.StatusOK, "POST", "/api/v1/tasks/batch", `{"tasks":[`+body(4)+`,`+body(5)+`]}`)
		for _, it := range r.body["results"].([]any) {
			item := it.(map[string]any)
			if item["status"] != 200.0 || item["task"].(map[string]any)["id"] != first.str("id") {
				t.Errorf("batch item: %v, want 200 with %s", item, first.str("id"))
			}
		}
	})
}

func TestIdempotentSubmit(t *testing.T) {
	forEachBackend(t, nil, func(t *testing.T, e *env) {
		// No worker serves queue "idle": the task stays QUEUED.
		body := `{"task_type":"echo","queue":"idle","payload":{"a":1}}`
		first := e.must(http.StatusCreated, "POST", "/api/v1/tasks", body, "Idempotency-Key", "k1")
		dup := e.must(http.StatusConflict, "POST", "/api/v1/tasks", body, "Idempotency-Key", "k1")
		if dup.errCode() != "in_progress" || dup.body["error"].(map[string]any)["task_id"] != first.str("id") {
			t.Fatalf("duplicate in progress: %s", dup.raw)
		}
		if r := e.must(http.StatusUnprocessableEntity, "POST", "/api/v1/tasks", `{"task_type":"echo","queue":"idle","payload":{"a":2}}`, "Idempotency-Key", "k1"); r.errCode() != "idempotency_key_reused" {
			t.Fatalf("different body: %s", r.raw)
		}

		done := e.must(http.StatusCreated, "POST", "/api/v1/tasks", `{"task_type":"echo","payload":"x"}`, "Idempotency-Key", "k2")
		e.waitStatus(done.str("id"), "SUCCEEDED")
		replay := e.must(http.StatusOK, "POST", "/api/v1/tasks", `{"task_type":"echo","payload":"x"}`, "Idempotency-Key", "k2")
		if replay.str("id") != done.str("id") || replay.str("status") != "SUCCEEDED" {
			t.Fatalf("replay: %s", replay.raw)
		}
	})
}

func TestBatchSubmit(t *testing.T) {
	forEachBackend(t, &opts{api: api.Config{MaxBatch: 5}}, func(t *testing.T, e *env) {
		r := e.must(http.StatusOK, "POST", "/api/v1/tasks/batch",
			`{"tasks":[{"task_type":"echo","payload":1},{"task_type":"echo","priority":11},{"task_type":"echo","payload":3,"queue":"other"}]}`)
		results, _ := r.body["results"].([]any)
		if len(results) != 3 {
			t.Fatalf("results: %s", r.raw)
		}
		want := []float64{201, 400, 201}
		for i, x := range results {
			item := x.(map[string]any)
			if item["status"] != want[i] {
				t.Fatalf("item %d: %v, want status %v", i, item, want[i])
			}
		}
		bad := results[1].(map[string]any)["error"].(map[string]any)
		if !strings.Contains(bad["message"].(string), "priority") {
			t.Fatalf("item error: %v", bad)
		}
		id := results[0].(map[string]any)["task"].(map[string]any)["id"].(string)
		e.waitStatus(id, "SUCCEEDED")
		other := e.must(http.StatusOK, "GET", "/api/v1/tasks?queue=other", "")
		if tasks, _ := other.body["tasks"].([]any); len(tasks) != 1 {
			t.Fatalf("queue other: %s", other.raw)
		}

		six := `{"tasks":[` + strings.Repeat(`{"task_type":"echo"},`, 5) + `{"task_type":"echo"}]}`
		if r := e.must(http.StatusRequestEntityTooLarge, "POST", "/api/v1/tasks/batch", six); !strings.Contains(r.errMessage(), "at most 5") {
			t.Fatalf("oversized batch: %s", r.raw)
		}
		e.must(http.StatusBadRequest, "POST", "/api/v1/tasks/batch", `{}`)
		e.must(http.StatusBadRequest, "POST", "/api/v1/tasks/batch", `{"tasks":{}}`)
		empty := e.must(http.StatusOK, "POST", "/api/v1/tasks/batch", `{"tasks":[]}`)
		if results, _ := empty.body["results"].([]any); results == nil || len(results) != 0 {
			t.Fatalf("empty batch: %s", empty.raw)
		}
	})
}

func TestCancel(t *testing.T) {
	forEachBackend(t, nil, func(t *testing.T, e *env) {
		r := e.must(http.StatusCreated, "POST", "/api/v1/tasks", `{"task_type":"echo","delay_seconds":3600}`)
		if r.str("status") != "SCHEDULED" {
			t.Fatalf("delayed: %s", r.raw)
		}
		id := r.str("id")
		c := e.must(http.StatusOK, "POST", "/api/v1/tasks/"+id+"/cancel", "")
		if c.str("status") != "CANCELLED" {
			t.Fatalf("cancelled: %s", c.raw)
		}
		if again := e.must(http.StatusOK, "POST", "/api/v1/tasks/"+id+"/cancel", ""); again.str("status") != "CANCELLED" {
			t.Fatalf("cancel twice: %s", again.raw)
		}
		done := e.must(http.StatusCreated, "POST", "/api/v1/tasks", `{"task_type":"echo"}`)
		e.waitStatus(done.str("id"), "SUCCEEDED")
		if r := e.must(http.StatusConflict, "POST", "/api/v1/tasks/"+done.str("id")+"/cancel", ""); r.errCode() != "not_cancellable" {
			t.Fatalf("cancel a finished task: %s", r.raw)
		}
		e.must(http.StatusNotFound, "POST", "/api/v1/tasks/nope/cancel", "")
	})
}

func TestQueueFull(t *testing.T) {
	forEachBackend(t, &opts{engine: dtq.Config{MaxDepth: 2}, noWorker: true}, func(t *testing.T, e *env) {
		for i := range 2 {
			e.must(http.StatusCreated, "POST", "/api/v1/tasks", fmt.Sprintf(`{"task_type":"echo","payload":%d}`, i))
		}
		r := e.must(http.StatusTooManyRequests, "POST", "/api/v1/tasks", `{"task_type":"echo"}`)
		if r.errCode() != "queue_full" || r.header.Get("Retry-After") == "" {
			t.Fatalf("queue full: Retry-After %q, %s", r.header.Get("Retry-After"), r.raw)
		}
		batch := e.must(http.StatusOK, "POST", "/api/v1/tasks/batch", `{"tasks":[{"task_type":"echo"}]}`)
		if item := batch.body["results"].([]any)[0].(map[string]any); item["status"] != 429.0 {
			t.Fatalf("batch when full: %s", batch.raw)
		}
	})
}

func TestIdempotencyKeyTooLong(t *testing.T) {
	forEachBackend(t, &opts{noWorker: true}, func(t *testing.T, e *env) {
		r := e.must(http.StatusBadRequest, "POST", "/api/v1/tasks", `{"task_type":"echo"}`, "Idempotency-Key", strings.Repeat("k", 300))
		if !strings.Contains(r.errMessage(), "Idempotency-Key") {
			t.Fatalf("long key: %s", r.raw)
		}
	})
}

// State-changing requests a browser sends from another site are refused
// (CSRF); same-origin, trusted-origin and non-browser requests are not.
func TestCrossSiteRequests(t *testing.T) {
	forEachBackend(t, &opts{noWorker: true, api: api.Config{AllowedOrigins: []string{"https://ui.example.com"}}}, func(t *testing.T, e *env) {
		body := `{"task_type":"echo"}`
		for _, h := range [][]string{
			{"Sec-Fetch-Site", "cross-site"},
			{"Sec-Fetch-Site", "same-site"},
			{"Origin", "https://evil.example"},
		} {
			if r := e.must(http.StatusForbidden, "POST", "/api/v1/tasks", body, h...); r.errCode() != "forbidden_origin" {
				t.Fatalf("%v: %s", h, r.raw)
			}
		}
		if l := e.must(http.StatusOK, "GET", "/api/v1/tasks", "", "Sec-Fetch-Site", "cross-site"); len(l.body["tasks"].([]any)) != 0 {
			t.Fatalf("a refused request created a task: %s", l.raw)
		}
		e.must(http.StatusCreated, "POST", "/api/v1/tasks", body, "Sec-Fetch-Site", "same-origin")
		e.must(http.StatusCreated, "POST", "/api/v1/tasks", body, "Origin", "https://ui.example.com")
		e.must(http.StatusCreated, "POST", "/api/v1/tasks", body)
	})
}

// A submission is validated once, by the engine: the API refuses what the
// library refuses, with the engine's words (the API checked ranges of its
// own, with other limits: a delay of a year and a day passed the library
// and was refused over HTTP).
func TestSubmitLimitsAreTheEngines(t *testing.T) {
	forEachBackend(t, &opts{noWorker: true}, func(t *testing.T, e *env) {
		for _, c := range []struct {
			body string
			opts dtq.EnqueueOpts
		}{
			{`{"task_type":"echo","priority":12}`, dtq.EnqueueOpts{Priority: dtq.Ptr(12)}},
			{`{"task_type":"echo","max_attempts":5000}`, dtq.EnqueueOpts{MaxAttempts: 5000}},
			{`{"task_type":"echo","delay_seconds":31622400}`, dtq.EnqueueOpts{Delay: 366 * 24 * time.Hour}},
			{`{"task_type":"echo","delay_seconds":-1}`, dtq.EnqueueOpts{Delay: -time.Second}},
			{`{"task_type":"echo","timeout_seconds":604801}`, dtq.EnqueueOpts{Timeout: dtq.MaxTimeout + time.Second}},
			{`{"task_type":"echo","timeout_seconds":0.0001}`, dtq.EnqueueOpts{Timeout: 100 * time.Microsecond}},
		} {
			_, libErr := e.c.Enqueue(t.Context(), "echo", nil, &c.opts)
			var ve *dtq.ValidationError
			if !errors.As(libErr, &ve) {
				t.Fatalf("library accepted %+v: %v", c.opts, libErr)
			}
			r := e.do("POST", "/api/v1/tasks", c.body)
			if r.status != http.StatusBadRequest || !strings.HasSuffix(r.errMessage(), ve.Problem) {
				t.Errorf("POST %s: %d %q; want 400 with the library's %q", c.body, r.status, r.errMessage(), ve.Problem)
			}
		}
	})
}
