package browsertest

import (
	"net/http"
	"testing"

	"github.com/dtq-dev/dtq/internal/redistest"
)

// A task of an order key shows the key in its details and the key's line
// in a card — the task in flight and the next waiting, linked, this one
// marked — which follows the key as it passes on; the limits page lists
// the order keys in use and a limit's rule for a full limit. On `dtq serve`
// with the embedded backend and with real Redis.
func TestOrderKeyPages(t *testing.T) {
	t.Parallel()
	t.Run("embedded", func(t *testing.T) { t.Parallel(); orderKeyPages(t, nil) })
	t.Run("redis", func(t *testing.T) {
		t.Parallel()
		orderKeyPages(t, []string{"DTQ_REDIS_URL=redis://" + redistest.Shared(t).Addr, "DTQ_NAMESPACE=" + redistest.Namespace(t)})
	})
}

func orderKeyPages(t *testing.T, env []string) {
	p := start(t, env, "serve", "--addr", "127.0.0.1:0", "--shutdown-timeout", "1s")
	// Queue "lined" has no worker: the key's first task stays in flight,
	// the others wait.
	var ids []string
	for range 3 {
		ids = append(ids, p.Submit(`{"task_type":"echo","queue":"lined","order_key":"acct-1"}`))
	}
	p.Submit(`{"task_type":"echo","queue":"lined","order_key":"acct-2"}`)
	p.Must(http.StatusOK, "PUT", "/api/v1/limits/default/keys/cust-1", `{"max_running":1,"on_full":"cancel_running"}`)

	tb := newTab(t, 1280, 800)
	tb.open(p.URL + "/#/tasks/" + ids[1])
	tb.waitFor("the order key in the details, waiting", `((d) => d !== null && d.textContent === "acct-1 (waiting for the key's earlier tasks)")(document.getElementById('task-order-key'))`)
	tb.waitFor("the key's line: the first in flight, this one and the third next", `((f, next) => f !== null &&
		f.querySelector('a').textContent === `+js(ids[0])+` && f.getAttribute('href') === null &&
		f.querySelector('a').getAttribute('href') === `+js("#/tasks/"+ids[0])+` && !f.textContent.includes('this task') &&
		next.length === 2 && next[0].dataset.task === `+js(ids[1])+` && next[0].textContent.includes('this task') &&
		next[1].dataset.task === `+js(ids[2])+` && !next[1].textContent.includes('this task') &&
		document.getElementById('order-waiting').textContent === '2' &&
		document.getElementById('order-h').textContent === 'Order key acct-1')(document.getElementById('order-in-flight'), document.querySelectorAll('#order-next li'))`)

	// The first task cancelled, the key passes to this one: the page follows.
	p.Must(http.StatusOK, "POST", "/api/v1/tasks/"+ids[0]+"/cancel", "")
	tb.waitFor("this task in flight, the third next", `((f, next) => f !== null && f.textContent === `+js(ids[1]+"this task")+` &&
		next.length === 1 && next[0].dataset.task === `+js(ids[2])+` &&
		document.getElementById('task-order-key').textContent === 'acct-1')(document.getElementById('order-in-flight'), document.querySelectorAll('#order-next li'))`)
	tb.noScriptRan("Task")

	tb.open(p.URL + "/#/limits")
	tb.waitFor("the order keys in use", `document.querySelectorAll('table.order-keys tbody tr').length === 2`)
	if got := eval[string](tb, rowCell("order", "lined acct-1", 3)); got != ids[1] {
		t.Errorf("acct-1's task in flight on the limits page: %q, want %s", got, ids[1])
	}
	if got := eval[string](tb, rowCell("order", "lined acct-1", 4)); got != "1" {
		t.Errorf("acct-1's waiting on the limits page: %q", got)
	}
	if got := eval[string](tb, rowCell("order", "lined acct-2", 4)); got != "0" {
		t.Errorf("acct-2's waiting on the limits page: %q", got)
	}
	if got := eval[string](tb, `document.querySelector('tr[data-limit="default limit key cust-1"] .on-full').textContent`); got != " · when full: cancel running" {
		t.Errorf("the limit's on_full rule: %q", got)
	}
	tb.noScriptRan("Limits")
}
