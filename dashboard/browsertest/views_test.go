package browsertest

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/dtq-dev/dtq/internal/proctest"
	"github.com/dtq-dev/dtq/internal/redistest"
)

// bothBackends runs fn on `dtq serve` with the embedded backend and with
// real Redis, in parallel.
func bothBackends(t *testing.T, fn func(t *testing.T, env []string)) {
	t.Parallel()
	t.Run("embedded", func(t *testing.T) { t.Parallel(); fn(t, nil) })
	t.Run("redis", func(t *testing.T) {
		t.Parallel()
		fn(t, []string{"DTQ_REDIS_URL=redis://" + redistest.Shared(t).Addr, "DTQ_NAMESPACE=" + redistest.Namespace(t)})
	})
}

// waitAPI polls GET path until field of its answer is want.
func waitAPI(t *testing.T, p *proctest.Proc, path, field, want string) {
	t.Helper()
	deadline := time.Now().Add(waitTimeout)
	for {
		r := p.Must(http.StatusOK, "GET", path, "")
		if fmt.Sprint(r.Body[field]) == want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("GET %s: %s is %v, want %s", path, field, r.Body[field], want)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// The workflows page lists a queue's workflows, newest first, with status
// and progress; the status filter (chosen from its menu) and the time
// filters are in the URL; a row links to the workflow's page.
func TestWorkflowsListPage(t *testing.T) {
	bothBackends(t, func(t *testing.T, env []string) {
		p := start(t, env, "serve", "--addr", "127.0.0.1:0", "--shutdown-timeout", "1s")
		submit := func(root string) string {
			t.Helper()
			return fmt.Sprint(p.Must(http.StatusCreated, "POST", "/api/v1/workflows", `{"root":`+root+`}`).Body["id"])
		}
		ok := submit(`{"chain":[{"task":{"task_type":"echo","payload":1}},{"task":{"task_type":"echo","payload":2}}]}`)
		failed := submit(`{"chain":[{"task":{"task_type":"always_fail","payload":{"permanent":true},"max_attempts":1}},{"task":{"task_type":"echo"}}]}`)
		running := submit(`{"parallel":[{"task":{"task_type":"sleep","payload":{"seconds":120}}},{"task":{"task_type":"echo"}}]}`)
		waitAPI(t, p, "/api/v1/workflows/"+ok, "status", "SUCCEEDED")
		waitAPI(t, p, "/api/v1/workflows/"+failed, "status", "FAILED")

		tb := newTab(t, 1280, 800)
		tb.open(p.URL + "/#/workflows")
		tb.waitFor("three workflows", `document.querySelectorAll('table.workflows tbody tr').length === 3`)
		order := eval[string](tb, `[...document.querySelectorAll('table.workflows tbody tr')].map((r) => r.dataset.id).join(' ')`)
		if order != running+" "+failed+" "+ok {
			t.Errorf("rows %s, want newest first: %s %s %s", order, running, failed, ok)
		}
		tb.waitFor("the running one's progress", rowCell("id", running, 3)+`.startsWith('1 / 2 succeeded')`)
		if got := eval[string](tb, rowCell("id", failed, 2)); got != "FAILED" {
			t.Errorf("the failed workflow's status cell: %q", got)
		}
		if got := eval[string](tb, rowCell("id", failed, 3)); got != "0 / 2 succeeded1 failed, 1 skipped" {
			t.Errorf("the failed workflow's progress cell: %q", got)
		}
		tb.screenshot("workflows")

		eval[bool](tb, `((s) => { s.value = 'FAILED'; s.dispatchEvent(new Event('change')); return true; })(document.getElementById('wf-status'))`)
		tb.waitFor("the status in the URL", `location.hash.includes('status=FAILED')`)
		tb.waitFor("only the failed one", `document.querySelectorAll('table.workflows tbody tr').length === 1 && `+
			fmt.Sprintf(`document.querySelector('table.workflows tbody tr').dataset.id === %q`, failed))

		future := time.Now().Add(time.Hour).UTC().Format(time.RFC3339)
		tb.open(p.URL + "/#/workflows?queue=default&created_after=" + future)
		tb.waitFor("none created in the future", `document.querySelector('main').textContent.includes('No workflows of queue default match these filters')`)
		tb.open(p.URL + "/#/workflows?queue=default&status=RUNNING&created_before=" + future)
		tb.waitFor("the running one", `document.querySelectorAll('table.workflows tbody tr').length === 1 && `+
			fmt.Sprintf(`document.querySelector('table.workflows tbody tr').dataset.id === %q`, running))
		if got := eval[string](tb, `document.getElementById('wf-status').value`); got != "RUNNING" {
			t.Errorf("the status menu shows %q, want the URL's RUNNING", got)
		}
		tb.click(`table.workflows tbody tr a`)
		tb.waitFor("the workflow's page", fmt.Sprintf(`location.hash === '#/workflows/' + encodeURIComponent(%q) && document.querySelector('main h1') !== null`, running))
		tb.waitFor("Workflows current in the menu", `document.querySelector('[data-nav="workflows"]').getAttribute('aria-current') === 'page'`)
		tb.noScriptRan("Workflow")
	})
}

// The messages page lists the message queues, the topics of the one
// chosen with their queued, in-flight and delayed counts, and its dead
// letters.
func TestMessagesPage(t *testing.T) {
	bothBackends(t, func(t *testing.T, env []string) {
		p := start(t, env, "serve", "--addr", "127.0.0.1:0", "--shutdown-timeout", "1s")
		tb := newTab(t, 1280, 800)
		tb.open(p.URL + "/#/messages")
		tb.waitFor("the empty state", `document.querySelector('main').textContent.includes('No message queues yet')`)

		base := "/api/v1/mq/orders"
		for _, body := range []string{`{"data":"order 1","key":"o-1"}`, `{"data":"order 2","key":"o-2"}`, `{"data":"order 3"}`} {
			p.Must(http.StatusCreated, "POST", base+"/topics/new/messages", body)
		}
		p.Must(http.StatusCreated, "POST", base+"/topics/later/messages", `{"data":"soon","delay_seconds":600}`)
		p.Must(http.StatusCreated, "POST", "/api/v1/mq/mail/topics/out/messages", `{"data":"hi"}`)
		lease := func() string {
			t.Helper()
			r := p.Must(http.StatusOK, "POST", base+"/leases", `{"worker":"w","topics":["new"],"max":1,"wait_seconds":1}`)
			ls, _ := r.Body["leases"].([]any)
			if len(ls) != 1 {
				t.Fatalf("lease: %v", r.Body)
			}
			return fmt.Sprint(ls[0].(map[string]any)["lease"])
		}
		p.Must(http.StatusOK, "POST", base+"/leases/"+lease()+"/term", `{"reason":"bad order"}`)
		lease() // held: in flight

		tb.open(p.URL + "/#/messages?queue=orders")
		tb.waitFor("orders' topics", `document.querySelectorAll('table.topics tbody tr').length === 2`)
		tb.waitFor("new: 1 queued, 1 in flight", rowCell("topic", "new", 2)+` === '1' && `+rowCell("topic", "new", 3)+` === '1' && `+rowCell("topic", "new", 4)+` === '0'`)
		if got := eval[string](tb, rowCell("topic", "later", 4)); got != "1" {
			t.Errorf("later's delayed cell: %q", got)
		}
		tb.waitFor("the dead letter", `document.querySelectorAll('table.mq-dead tbody tr').length === 1 && `+
			`document.querySelector('table.mq-dead tbody tr').textContent.includes('bad order') && `+
			`document.querySelector('table.mq-dead tbody tr').textContent.includes('order 1')`)
		if got := eval[string](tb, `[...document.getElementById('mq-queue').options].map((o) => o.value).join(' ')`); got != "mail orders" {
			t.Errorf("the queue menu: %q", got)
		}
		tb.screenshot("messages")

		eval[bool](tb, `((s) => { s.value = 'mail'; s.dispatchEvent(new Event('change')); return true; })(document.getElementById('mq-queue'))`)
		tb.waitFor("mail's topic", `location.hash.includes('queue=mail') && document.querySelectorAll('table.topics tbody tr').length === 1 && `+
			rowCell("topic", "out", 2)+` === '1'`)
		tb.waitFor("no dead letters in mail", `document.querySelector('#mq-dead').textContent.includes('No dead letters in mail')`)
		tb.noScriptRan("Messages")
	})
}
