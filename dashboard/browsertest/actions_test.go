package browsertest

import (
	"net/http"
	"testing"

	"github.com/dtq-dev/dtq/internal/redistest"
)

// redisEnv is the environment of a process on the shared redis-server in a
// namespace of the test's own.
func redisEnv(t *testing.T) []string {
	return []string{"DTQ_REDIS_URL=redis://" + redistest.Shared(t).Addr, "DTQ_NAMESPACE=" + redistest.Namespace(t)}
}

// bothBackends runs fn on `dtq serve` with the embedded backend (env nil)
// and with real Redis.
func bothBackends(t *testing.T, fn func(t *testing.T, env []string)) {
	t.Parallel()
	t.Run("embedded", func(t *testing.T) { t.Parallel(); fn(t, nil) })
	t.Run("redis", func(t *testing.T) { t.Parallel(); fn(t, redisEnv(t)) })
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
