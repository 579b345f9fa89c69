package browsertest

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/dtq-dev/dtq/internal/proctest"
	"github.com/dtq-dev/dtq/internal/redistest"
)

// queueCell is the JavaScript text of a queue row's cell (1-based column)
// on the overview, "" when the row is not there.
func queueCell(queue string, col int) string {
	return fmt.Sprintf(`((r) => r ? r.children[%d].textContent.trim() : '')(document.querySelector('tr[data-queue=%q]'))`, col-1, queue)
}

// The overview starts with the queue its workers serve (and nothing in
// it), shows another queue once a task is submitted, and its counts and
// charts follow new submissions without a reload.
func TestOverviewShowsQueuesLive(t *testing.T) {
	t.Parallel()
	p := start(t, nil, "serve", "--addr", "127.0.0.1:0")
	tb := newTab(t, 1280, 800)
	tb.open(p.URL + "/")
	tb.waitFor("the served queue, empty", queueCell("default", 3)+` === '0' && !document.querySelector('tr[data-queue=parked]')`)
	tb.waitFor("the live connection", `document.getElementById('conn').textContent === 'live'`)
	if !eval[bool](tb, `document.querySelector('.outbox').hidden`) {
		t.Error("the outbox line shows on a process without --outbox")
	}
	// A reload would lose this.
	eval[any](tb, `window.__sameDocument = 42`)

	// No worker serves "parked": its tasks stay queued.
	p.Submit(`{"task_type":"echo","queue":"parked","priority":7}`)
	tb.waitFor("the parked queue with 1 queued", queueCell("parked", 3)+` === '1'`)
	for range 2 {
		p.Submit(`{"task_type":"echo","queue":"parked","priority":2}`)
	}
	tb.waitFor("3 queued", queueCell("parked", 3)+` === '3'`)
	bands := tb.text(`tr[data-queue="parked"] .bands + .sr-only`)
	if bands != "priority 7: 1, priority 2: 2" {
		t.Errorf("priority bands of parked: %q", bands)
	}
	tb.waitFor("the queued tile", `document.querySelector('.tile .tile-value').textContent === '3'`)

	// Tasks the workers run show up in the charts: submitted, succeeded
	// and a pickup latency.
	for range 5 {
		p.Submit(`{"task_type":"echo"}`)
	}
	tb.waitFor("submitted and succeeded in the throughput chart",
		`['submitted', 'succeeded'].every((k) => Number(document.querySelector('li[data-series=' + k + ']').dataset.peak) >= 1)`)
	tb.waitFor("a pickup latency", `document.querySelector('li[data-series=p50]').dataset.peak !== ''`)
	tb.waitFor("default's totals", `(`+queueCell("default", 8)+`).includes('succeeded 5')`)

	if got := eval[int](tb, `window.__sameDocument || 0`); got != 42 {
		t.Errorf("the page reloaded (marker %d)", got)
	}
	tb.noScriptRan("Overview")
}

// Pause and resume from the overview change the queue's state in the API
// and on the page, and land in the audit log.
func TestPauseAndResume(t *testing.T) {
	t.Parallel()
	p, tb := overviewWithDefault(t)

	tb.click(`tr[data-queue="default"] button`)
	tb.waitFor("default paused on the page", queueCell("default", 2)+` === 'paused'`)
	if q := p.Must(http.StatusOK, "GET", "/api/v1/queues/default", ""); q.Body["paused"] != true {
		t.Fatalf("after Pause the API says %v", q)
	}
	if got := tb.text(`tr[data-queue="default"] button`); got != "Resume" {
		t.Errorf("button after pausing: %q", got)
	}
	// A paused queue takes submissions but runs none of them.
	id := p.Submit(`{"task_type":"echo"}`)
	tb.waitFor("1 queued while paused", queueCell("default", 3)+` === '1'`)

	tb.click(`tr[data-queue="default"] button`)
	tb.waitFor("default active again", queueCell("default", 2)+` === 'active'`)
	if q := p.Must(http.StatusOK, "GET", "/api/v1/queues/default", ""); q.Body["paused"] != false {
		t.Fatalf("after Resume the API says %v", q)
	}
	p.WaitStatus(id, "SUCCEEDED")

	tb.open(p.URL + "/#/audit")
	tb.waitFor("pause and resume in the audit log",
		`[...document.querySelectorAll('table.audit tbody tr')].map((r) => r.children[1].textContent).join(',') === 'resume,pause'`)
}

// Every admin control on the overview is reachable with the keyboard: Tab
// gets to the Pause button and Enter presses it.
func TestKeyboardReachesActions(t *testing.T) {
	t.Parallel()
	_, tb := overviewWithDefault(t)
	tb.waitFor("the live connection", `document.getElementById('conn').textContent === 'live'`)
	focused := ""
	for i := 0; i < 40 && focused != "Pause queue default"; i++ {
		tb.do(keyTab())
		focused = eval[string](tb, `document.activeElement ? (document.activeElement.getAttribute('aria-label') || document.activeElement.textContent) : ''`)
	}
	if focused != "Pause queue default" {
		t.Fatalf("Tab never reached the Pause button (last focus %q)", focused)
	}
	tb.do(keyEnter())
	tb.waitFor("default paused by keyboard", queueCell("default", 2)+` === 'paused'`)
}

// When the server goes away the page says it is offline and counts down to
// the next attempt; when a server is back on the same address the page
// reconnects by itself, without a reload, and shows new events again.
func TestReconnectsAfterServerRestart(t *testing.T) {
	t.Parallel()
	env := []string{"DTQ_REDIS_URL=redis://" + redistest.Shared(t).Addr, "DTQ_NAMESPACE=" + redistest.Namespace(t)}
	p := start(t, env, "api", "--addr", "127.0.0.1:0")
	p.Submit(`{"task_type":"echo","queue":"parked"}`)
	tb := newTab(t, 1280, 800)
	tb.open(p.URL + "/")
	tb.waitFor("the parked queue", queueCell("parked", 3)+` === '1'`)
	tb.waitFor("the live connection", `document.getElementById('conn').textContent === 'live'`)
	eval[any](tb, `window.__sameDocument = 7`)

	p.Stop()
	tb.waitFor("the offline state", `document.getElementById('conn').textContent === 'offline'`)
	tb.waitFor("the disconnected banner", `((b) => !b.hidden && b.textContent.includes('Live updates are disconnected'))(document.getElementById('banner'))`)
	tb.screenshot("disconnected")

	p2 := start(t, env, "api", "--addr", strings.TrimPrefix(p.URL, "http://"))
	tb.waitFor("live again", `document.getElementById('conn').textContent === 'live'`)
	tb.waitFor("the banner gone", `document.getElementById('banner').hidden`)
	p2.Submit(`{"task_type":"echo","queue":"parked"}`)
	tb.waitFor("the new task counted", queueCell("parked", 3)+` === '2'`)
	tb.waitFor("its submission in the chart", `Number(document.querySelector('li[data-series=submitted]').dataset.peak) >= 1`)
	if got := eval[int](tb, `window.__sameDocument || 0`); got != 7 {
		t.Errorf("the page reloaded (marker %d)", got)
	}
}

// overviewWithDefault starts dtq serve, submits one task and opens the
// overview at 1280x800 once it shows the default queue, active.
func overviewWithDefault(t *testing.T) (*proctest.Proc, *tab) {
	t.Helper()
	p := start(t, nil, "serve", "--addr", "127.0.0.1:0")
	p.Submit(`{"task_type":"echo"}`)
	tb := newTab(t, 1280, 800)
	tb.open(p.URL + "/")
	tb.waitFor("the default queue", queueCell("default", 2)+` === 'active'`)
	return p, tb
}
