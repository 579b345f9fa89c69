package api_test

import (
	"net/http"
	"strings"
	"testing"
	"time"
)

// A workflow over HTTP: submitted as JSON, its graph and states read back,
// its nodes' results passed along; cancelled; bad ones refused naming the
// node.
func TestWorkflowOverHTTP(t *testing.T) {
	forEachBackend(t, nil, func(t *testing.T, e *env) {
		r := e.must(http.StatusCreated, "POST", "/api/v1/workflows", `{"root":{"chain":[
			{"task":{"task_type":"echo","payload":"first","priority":7}},
			{"parallel":[{"task":{"task_type":"echo","payload":1}},{"task":{"task_type":"echo","payload":2}}],
			 "on_success":{"task":{"task_type":"echo","payload":"callback"}}}]}}`)
		id := r.str("id")
		if r.header.Get("Location") != "/api/v1/workflows/"+id || r.str("status") != "RUNNING" || r.str("queue") != "default" {
			t.Fatalf("created: %s", r.raw)
		}
		deadline := time.Now().Add(10 * time.Second)
		for r.str("status") == "RUNNING" && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
			r = e.must(http.StatusOK, "GET", "/api/v1/workflows/"+id, "")
		}
		if r.str("status") != "SUCCEEDED" || r.body["result"] != "callback" {
			t.Fatalf("workflow: %s", r.raw)
		}
		root := r.body["root"].(map[string]any)
		nodes := root["nodes"].([]any)
		par := nodes[1].(map[string]any)
		if root["kind"] != "chain" || par["kind"] != "parallel" || len(par["children"].([]any)) != 2 ||
			par["on_success"].(map[string]any)["status"] != "SUCCEEDED" {
			t.Fatalf("graph: %s", r.raw)
		}
		first := nodes[0].(map[string]any)
		task := e.must(http.StatusOK, "GET", "/api/v1/tasks/"+first["task_id"].(string), "")
		if task.str("workflow") != id || task.body["priority"] != 7.0 || first["node"] != 1.0 || task.body["workflow_node"] != 1.0 {
			t.Fatalf("first node's task: %s", task.raw)
		}
		kid := par["children"].([]any)[0].(map[string]any)
		task = e.must(http.StatusOK, "GET", "/api/v1/tasks/"+kid["task_id"].(string), "")
		if task.body["previous"] != "first" {
			t.Fatalf("a parallel node's child's previous: %s", task.raw)
		}
		if p := r.body["progress"].(map[string]any); p["total"] != 4.0 || p["succeeded"] != 4.0 {
			t.Fatalf("progress: %s", r.raw)
		}

		// cancel: a workflow whose first node never runs (no handler)
		r = e.must(http.StatusCreated, "POST", "/api/v1/workflows", `{"queue":"idle","root":{"chain":[{"task":{"task_type":"x"}},{"task":{"task_type":"y"}}]}}`)
		c := e.must(http.StatusOK, "POST", "/api/v1/workflows/"+r.str("id")+"/cancel", "")
		if c.str("status") != "CANCELLED" || c.body["cancel_requested"] != true {
			t.Fatalf("cancelled: %s", c.raw)
		}
		e.must(http.StatusNotFound, "GET", "/api/v1/workflows/default-01ARZ3NDEKTSV4RRFFQ69G5FAV", "")
		e.must(http.StatusNotFound, "POST", "/api/v1/workflows/nope/cancel", "")

		for _, tc := range []struct{ body, mention string }{
			{`{}`, "root is required"},
			{`{"root":{}}`, "root must have exactly one of task, chain and parallel"},
			{`{"root":{"chain":[]}}`, "root.chain must have at least one node"},
			{`{"root":{"chain":[{"task":{"task_type":"echo","priority":"high"}}]}}`, "root.chain[0].task.priority"},
			{`{"root":{"parallel":[{"task":{"task_type":"echo","timeout_seconds":-1}}]}}`, "root.parallel[0].task.timeout_seconds"},
			{`{"root":{"group":[{"task":{"task_type":"echo"}}]}}`, "group"}, // a fan-out is "parallel"; "group" is a fairness group
			{`{"root":{"task":{"task_type":"echo","delay_seconds":5}}}`, "root.task.delay_seconds"},
			{`{"root":{"task":{"task_type":"echo","queue":"other"}}}`, "root.task.queue"},
			{`{"root":{"task":{"task_type":"echo"},"on_success":{"task":{"task_type":"echo"}}}}`, "only a parallel node takes"},
			{`{"root":{"chain":[{"task":{"task_type":"echo","colour":1}}]}}`, "colour"},
			{`{"queue":"bad queue!","root":{"task":{"task_type":"echo"}}}`, "queue"},
		} {
			r := e.must(http.StatusBadRequest, "POST", "/api/v1/workflows", tc.body)
			if !strings.Contains(r.errMessage(), tc.mention) {
				t.Errorf("%s: message %q, want it to mention %q", tc.body, r.errMessage(), tc.mention)
			}
		}
	})
}
