package browsertest

import (
	"net/http"
	"testing"
	"time"

	"github.com/dtq-dev/dtq/internal/redistest"
)

// redisEnv is the environment of a process on the shared redis-server in a
// namespace of the test's own.
func redisEnv(t *testing.T) []string {
	return []string{"DTQ_REDIS_URL=redis://" + redistest.Shared(t).Addr, "DTQ_NAMESPACE=" + redistest.Namespace(t)}
}

// Run now on a delayed task's page asks for confirmation, then the task
// runs at once and the page shows it SUCCEEDED; a task not SCHEDULED has
// no Run now button.
func TestRunNowFromTaskPage(t *testing.T) {
	bothBackends(t, func(t *testing.T, env []string) {
		p := start(t, env, "serve", "--addr", "127.0.0.1:0")
		id := p.Submit(`{"task_type":"echo","delay_seconds":3600}`)
		tb := newTab(t, 1280, 800)
		tb.open(p.URL + "/#/tasks/" + id)
		tb.waitFor("SCHEDULED on the page", `(document.getElementById('task-status') || {}).textContent === 'SCHEDULED'`)
		tb.click(`#run-now`)
		tb.waitFor("the confirmation", `document.getElementById('confirm-dialog').open`)
		tb.click(`#confirm-ok`)
		p.WaitStatus(id, "SUCCEEDED")
		tb.waitFor("the notice", `document.getElementById('notices').textContent.includes('Task queued')`)
		tb.waitFor("SUCCEEDED on the page", `(document.getElementById('task-status') || {}).textContent === 'SUCCEEDED'`)
		tb.waitFor("no Run now button any more", `document.getElementById('run-now') === null`)
		tb.noScriptRan("Task")
	})
}

// The tasks page's bulk actions: "select all matching the filter" and
// Cancel count first and name the count in the confirmation, then cancel
// exactly the tasks the filter matches; a selection of two for Delete
// deletes the finished one and says why it skipped the other.
func TestBulkActionsFromTasksPage(t *testing.T) {
	bothBackends(t, func(t *testing.T, env []string) {
		p := start(t, env, "serve", "--addr", "127.0.0.1:0")
		var echoes []string
		for range 3 {
			echoes = append(echoes, p.Submit(`{"task_type":"echo","delay_seconds":3600}`))
		}
		other := p.Submit(`{"task_type":"sleep","delay_seconds":3600}`)
		tb := newTab(t, 1280, 800)
		tb.open(p.URL + "/#/tasks?queue=default&type=echo")
		tb.waitFor("the three echo tasks", `document.querySelectorAll('table.tasks tbody tr').length === 3`)
		tb.click(`#bulk-all`)
		tb.waitFor("all matching selected", `document.getElementById('bulk-count').textContent === 'All tasks of default that match the filter' &&
			[...document.querySelectorAll('.bulk-pick')].every((b) => b.checked)`)
		tb.click(`#bulk-cancel`)
		tb.waitFor("the confirmation naming the count", `document.getElementById('confirm-dialog').open &&
			document.getElementById('confirm-title').textContent === 'Cancel 3 tasks?'`)
		tb.click(`#confirm-ok`)
		tb.waitFor("the result", `document.getElementById('bulk-result').textContent === 'Cancelled 3 of 3 tasks.'`)
		for _, id := range echoes {
			p.WaitStatus(id, "CANCELLED")
		}
		if got := p.Task(other).Body["status"]; got != "SCHEDULED" {
			t.Fatalf("a task the filter did not match is %v", got)
		}

		// A selection: the cancelled echo and the scheduled sleep; Delete
		// takes the first only.
		tb.open(p.URL + "/#/tasks?queue=default")
		for _, id := range []string{echoes[0], other} {
			sel := `tr[data-id=` + js(id) + `] .bulk-pick`
			tb.waitFor("the row of "+id, `document.querySelector(`+js(sel)+`) !== null`)
			tb.click(sel)
		}
		tb.waitFor("two selected", `document.getElementById('bulk-count').textContent === '2 selected'`)
		tb.click(`#bulk-delete`)
		tb.waitFor("the confirmation naming the count", `document.getElementById('confirm-dialog').open &&
			document.getElementById('confirm-title').textContent === 'Delete 1 task?'`)
		tb.click(`#confirm-ok`)
		tb.waitFor("the result", `document.getElementById('bulk-result').textContent === 'Deleted 1 of 2 tasks. Skipped: `+other+` (not finished).'`)
		p.Must(http.StatusNotFound, "GET", "/api/v1/tasks/"+echoes[0], "")
		tb.noScriptRan("Tasks")
	})
}

// The workers page shows a Go worker's state; Quiet (confirmed) makes it
// quiet, Stop (confirmed) stops it: `dtq worker` exits by itself, code 0.
// An HTTP worker has neither button. On Redis, with `dtq api` and `dtq
// worker` as in production.
func TestQuietAndStopFromWorkersPage(t *testing.T) {
	t.Parallel()
	env := redisEnv(t)
	p := start(t, env, "api", "--addr", "127.0.0.1:0")
	w := start(t, env, "worker", "--addr", "127.0.0.1:0")
	p.Must(http.StatusOK, "POST", "/api/v1/leases", `{"worker":"py-test","queues":["nowhere"]}`)
	tb := newTab(t, 1280, 800)
	tb.open(p.URL + "/#/workers")
	goRow := `table.workers tbody tr:not([data-id^="http:"])`
	tb.waitFor("the Go worker running", `((r) => r !== null && r.querySelector('.worker-state').textContent === 'running')(document.querySelector(`+js(goRow)+`))`)
	tb.waitFor("no buttons for the HTTP worker", `((r) => r !== null && r.querySelectorAll('button').length === 0 &&
		r.textContent.includes('stop its process'))(document.querySelector('tr[data-id="http:py-test"]'))`)
	tb.click(goRow + ` button[aria-label^="Quiet"]`)
	tb.waitFor("the confirmation", `document.getElementById('confirm-dialog').open && document.getElementById('confirm-title').textContent.startsWith('Quiet ')`)
	tb.click(`#confirm-ok`)
	tb.waitFor("the worker quiet", `((r) => r !== null && r.querySelector('.worker-state').textContent === 'quiet')(document.querySelector(`+js(goRow)+`))`)
	tb.click(goRow + ` button[aria-label^="Stop"]`)
	tb.waitFor("the confirmation", `document.getElementById('confirm-dialog').open && document.getElementById('confirm-title').textContent.startsWith('Stop ')`)
	tb.click(`#confirm-ok`)
	err, exited := w.Wait(30 * time.Second)
	if !exited || err != nil {
		t.Fatalf("dtq worker after Stop: exited %v, %v:\n%s", exited, err, w.Stderr())
	}
	tb.waitFor("the Go worker gone from the page", `document.querySelector(`+js(goRow)+`) === null`)
	tb.noScriptRan("Workers")
}

// On `dtq serve` (the embedded backend) Quiet makes its worker quiet: the
// page says so, and a task submitted after stays QUEUED.
func TestQuietFromWorkersPageEmbedded(t *testing.T) {
	t.Parallel()
	p := start(t, nil, "serve", "--addr", "127.0.0.1:0")
	tb := newTab(t, 1280, 800)
	tb.open(p.URL + "/#/workers")
	row := `table.workers tbody tr`
	tb.waitFor("the worker running", `((r) => r !== null && r.querySelector('.worker-state').textContent === 'running')(document.querySelector(`+js(row)+`))`)
	tb.click(row + ` button[aria-label^="Quiet"]`)
	tb.waitFor("the confirmation", `document.getElementById('confirm-dialog').open`)
	tb.click(`#confirm-ok`)
	tb.waitFor("the worker quiet", `((r) => r !== null && r.querySelector('.worker-state').textContent === 'quiet' &&
		r.querySelector('button[aria-label^="Quiet"]').disabled)(document.querySelector(`+js(row)+`))`)
	id := p.Submit(`{"task_type":"echo"}`)
	if got := p.Task(id).Body["status"]; got != "QUEUED" {
		t.Errorf("a task submitted to the quiet worker's queue is %v", got)
	}
	tb.noScriptRan("Workers")
}
