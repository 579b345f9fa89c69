package e2e

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/dtq-dev/dtq/internal/redistest"
)

// POST /api/v1/workers/{id}/stop stops `dtq worker` as SIGTERM does: its
// running task finishes within the shutdown timeout, then the process
// exits by itself with code 0.
func TestWorkerStoppedRemotely(t *testing.T) {
	t.Parallel()
	env := []string{"DTQ_REDIS_URL=" + redisURL(t), "DTQ_NAMESPACE=" + redistest.Namespace(t)}
	apiProc := start(t, env, "api", "--addr", "127.0.0.1:0")
	w := start(t, env, "worker", "--addr", "127.0.0.1:0", "--shutdown-timeout", "20s")
	running := apiProc.Must(http.StatusCreated, "POST", "/api/v1/tasks", `{"task_type":"sleep","payload":{"seconds":1}}`).Str("id")
	apiProc.WaitStatus(running, "RUNNING")
	var id string
	for deadline := time.Now().Add(20 * time.Second); id == ""; time.Sleep(20 * time.Millisecond) {
		ws, _ := apiProc.Must(http.StatusOK, "GET", "/api/v1/workers", "").Body["workers"].([]any)
		for _, x := range ws {
			if m, _ := x.(map[string]any); m["kind"] == "go" {
				id, _ = m["id"].(string)
			}
		}
		if time.Now().After(deadline) {
			t.Fatal("the worker is not listed")
		}
	}
	if r := apiProc.Must(http.StatusOK, "POST", "/api/v1/workers/"+id+"/stop", ""); r.Str("requested") != "stop" {
		t.Fatalf("stop: %s", r.Raw)
	}
	err, exited := w.Wait(30 * time.Second)
	if !exited {
		t.Fatalf("the worker did not exit after the stop:\n%s", w.Stderr())
	}
	if err != nil {
		t.Fatalf("the worker exited with %v, want code 0:\n%s", err, w.Stderr())
	}
	if !strings.Contains(w.Stderr(), "stop requested by an admin") {
		t.Errorf("no stop logged:\n%s", w.Stderr())
	}
	if s := apiProc.Must(http.StatusOK, "GET", "/api/v1/tasks/"+running, "").Str("status"); s != "SUCCEEDED" {
		t.Errorf("the running task, given the grace period, is %s", s)
	}
	w.CheckNoPanic()
}
