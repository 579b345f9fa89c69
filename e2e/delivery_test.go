package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/dtq-dev/dtq/internal/proctest"
	"github.com/dtq-dev/dtq/internal/redistest"
)

// historyOf decodes a task answer's history.
func historyOf(t *testing.T, task *proctest.Response) []map[string]any {
	t.Helper()
	var body struct {
		History []map[string]any `json:"history"`
	}
	if err := json.Unmarshal(task.Raw, &body); err != nil {
		t.Fatal(err)
	}
	return body.History
}

// A task whose cancel was accepted while it ran on a worker that then
// stopped renewing it (frozen with SIGSTOP) is taken over by another worker
// after the visibility timeout and ends CANCELLED there without a new
// execution: the handler is not called again.
func TestCancelledTaskIsNotStartedAgain(t *testing.T) {
	t.Parallel()
	env := []string{"DTQ_REDIS_URL=" + redisURL(t), "DTQ_NAMESPACE=" + redistest.Namespace(t)}
	apiProc := start(t, env, "api", "--addr", "127.0.0.1:0")
	w1 := start(t, env, "worker", "--addr", "127.0.0.1:0", "--visibility-timeout", "1s")
	id := apiProc.Submit(`{"task_type":"sleep","payload":{"seconds":60}}`)
	running := apiProc.WaitStatus(id, "RUNNING")
	if err := w1.Freeze(); err != nil {
		t.Fatal(err)
	}
	defer w1.Signal(syscall.SIGCONT)
	c := apiProc.Must(http.StatusOK, "POST", "/api/v1/tasks/"+id+"/cancel", "")
	if c.Body["cancel_requested"] != true || c.Str("status") != "RUNNING" {
		t.Fatalf("cancel answered %s, want the running task with cancel_requested", c.Raw)
	}
	// Another worker takes the task over once w1's claim lapses.
	start(t, env, "worker", "--addr", "127.0.0.1:0", "--visibility-timeout", "1s")
	done := apiProc.WaitStatus(id, "CANCELLED")
	hist := historyOf(t, done)
	if len(hist) != 1 || hist[0]["outcome"] != "lost" || hist[0]["worker"] != running.Str("worker") {
		t.Fatalf("history %v: want only the frozen worker's execution, recorded as lost (no execution after the cancel)", hist)
	}
	if e := done.Str("last_error"); e != "cancelled" {
		t.Fatalf("last_error %q, want \"cancelled\"", e)
	}
	// The frozen worker, resumed, finds it lost the task: nothing changes.
	w1.Signal(syscall.SIGCONT)
	if err := w1.Stop(); err != nil {
		t.Fatalf("w1 exit: %v\n%s", err, w1.Stderr())
	}
	if again := apiProc.Task(id); again.Str("status") != "CANCELLED" || len(historyOf(t, again)) != 1 {
		t.Fatalf("after the frozen worker resumed: %s", again.Raw)
	}
}

// SIGTERM while Redis is down (for less than the visibility timeout): the
// handlers that finish meanwhile have their outcomes recorded once Redis is
// back, within the shutdown timeout, and nothing runs twice.
func TestStopDuringOutageRecordsOutcomes(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t, &redistest.Options{AppendFsync: "always"})
	env := []string{"DTQ_REDIS_URL=redis://" + srv.Addr, "DTQ_NAMESPACE=" + redistest.Namespace(t)}
	apiProc := start(t, env, "api", "--addr", "127.0.0.1:0")
	w1 := start(t, env, "worker", "--addr", "127.0.0.1:0", "--concurrency", "10",
		"--visibility-timeout", "4s", "--shutdown-timeout", "30s")
	var ids []string
	for i := range 10 {
		ids = append(ids, apiProc.Submit(fmt.Sprintf(`{"task_type":"sleep","payload":{"seconds":%.2f}}`, 1.5+0.02*float64(i))))
	}
	w1ID := ""
	for _, id := range ids {
		w1ID = apiProc.WaitStatus(id, "RUNNING").Str("worker")
	}
	// Redis goes down, the worker is asked to stop, its handlers finish
	// while Redis is down; Redis comes back (from its AOF) 3 s later.
	if err := srv.Kill(); err != nil {
		t.Fatal(err)
	}
	w1.Signal(syscall.SIGTERM)
	time.Sleep(3 * time.Second) // the outage's length, not a wait for work
	if err := srv.Restart(); err != nil {
		t.Fatal(err)
	}
	if err := w1.Stop(); err != nil {
		t.Fatalf("w1 exit: %v\n%s", err, w1.Stderr())
	}
	if strings.Contains(w1.Stderr(), "grace period ended before") {
		t.Errorf("w1 gave up recording outcomes:\n%s", w1.Stderr())
	}
	// A second worker would run anything w1 left unrecorded.
	start(t, env, "worker", "--addr", "127.0.0.1:0", "--visibility-timeout", "4s")
	for _, id := range ids {
		done := apiProc.WaitStatus(id, "SUCCEEDED")
		hist := historyOf(t, done)
		if len(hist) != 1 || hist[0]["worker"] != w1ID || hist[0]["outcome"] != "succeeded" {
			t.Errorf("task %s: history %v; want one execution, by the stopped worker", id, hist)
		}
	}
}
