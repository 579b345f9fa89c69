package api_test

import (
	"net/http"
	"testing"
)

// GET /api/v1/tasks?suspended=true lists the suspended tasks only, each
// with what it waits for; the queue answers count them (part of
// scheduled); a suspended value that is not a boolean is refused.
func TestListAndCountSuspended(t *testing.T) {
	forEachBackend(t, nil, func(t *testing.T, e *env) {
		submit := func(body string) string {
			t.Helper()
			return e.must(http.StatusCreated, "POST", "/api/v1/tasks", body).str("id")
		}
		nap := submit(`{"task_type":"nap"}`)
		approve := submit(`{"task_type":"approve"}`)
		delayed := submit(`{"task_type":"echo","delay_seconds":3600}`)
		e.waitStatus(nap, "SCHEDULED")
		e.waitStatus(approve, "SCHEDULED")

		listed := func(query string) map[string]map[string]any {
			t.Helper()
			r := e.must(http.StatusOK, "GET", "/api/v1/tasks"+query, "")
			out := map[string]map[string]any{}
			for _, v := range r.body["tasks"].([]any) {
				task := v.(map[string]any)
				out[task["id"].(string)] = task
			}
			return out
		}
		for _, q := range []string{"?suspended=true", "?suspended=1&status=SCHEDULED"} {
			got := listed(q)
			if len(got) != 2 || got[nap] == nil || got[approve] == nil {
				t.Fatalf("GET /api/v1/tasks%s: %v, want %s and %s only", q, got, nap, approve)
			}
			s, _ := got[approve]["suspended"].(map[string]any)
			if s["for"] != "signal" || s["name"] != "approval" || s["until"] == nil {
				t.Errorf("GET /api/v1/tasks%s: the waiting task's suspended %v", q, got[approve]["suspended"])
			}
		}
		if got := listed("?suspended=false"); len(got) != 3 || got[delayed] == nil {
			t.Errorf("suspended=false: %d tasks, want all 3", len(got))
		}
		if got := listed("?suspended=true&status=QUEUED"); len(got) != 0 {
			t.Errorf("suspended and QUEUED: %v, want none", got)
		}
		r := e.must(http.StatusBadRequest, "GET", "/api/v1/tasks?suspended=maybe", "")
		if r.errCode() != "invalid_field" || r.errMessage() != `suspended must be true or false (got "maybe")` {
			t.Errorf("a bad suspended: %s", r.raw)
		}

		q := e.must(http.StatusOK, "GET", "/api/v1/queues/default", "")
		if q.body["scheduled"] != 3.0 || q.body["suspended"] != 2.0 {
			t.Errorf("queue: %s, want scheduled 3, suspended 2", q.raw)
		}
		all := e.must(http.StatusOK, "GET", "/api/v1/queues", "")
		if qs, _ := all.body["queues"].([]any); len(qs) != 1 || qs[0].(map[string]any)["suspended"] != 2.0 {
			t.Errorf("queues: %s", all.raw)
		}

		e.must(http.StatusOK, "POST", "/api/v1/tasks/"+approve+"/signals/approval", `{"payload":"yes"}`)
		e.waitStatus(approve, "SUCCEEDED")
		if got := listed("?suspended=true"); len(got) != 1 || got[nap] == nil {
			t.Errorf("suspended after the signal: %v, want %s only", got, nap)
		}
		if q := e.must(http.StatusOK, "GET", "/api/v1/queues/default", ""); q.body["suspended"] != 1.0 {
			t.Errorf("queue after the signal: %s, want suspended 1", q.raw)
		}
	})
}
