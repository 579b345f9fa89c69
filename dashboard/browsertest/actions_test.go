package browsertest

import (
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
