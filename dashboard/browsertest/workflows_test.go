package browsertest

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/dtq-dev/dtq"
	"github.com/dtq-dev/dtq/internal/proctest"
	"github.com/dtq-dev/dtq/internal/redisconn"
	"github.com/dtq-dev/dtq/internal/redistest"
)

// onRedis starts `dtq serve` (the example handlers' workers) on the shared
// redis-server in a namespace of its own, with the extra environment env,
// and returns it with a Go client of the same namespace.
func onRedis(t *testing.T, env ...string) (*proctest.Proc, *dtq.Client) {
	t.Helper()
	srv := redistest.Shared(t)
	ns := redistest.Namespace(t)
	env = append(env, "DTQ_REDIS_URL=redis://"+srv.Addr, "DTQ_NAMESPACE="+ns)
	p := start(t, env, "serve", "--addr", "127.0.0.1:0", "--shutdown-timeout", "1s")
	c, err := dtq.NewClient(redisconn.Wrap(redistest.Client(t, srv)), &dtq.Config{Namespace: ns})
	if err != nil {
		t.Fatal(err)
	}
	return p, c
}

// waitWorkflow polls workflow id until ok holds and returns it; after 30 s
// it fails the test, naming what was awaited.
func waitWorkflow(t *testing.T, c *dtq.Client, id, what string, ok func(w *dtq.Workflow) bool) *dtq.Workflow {
	t.Helper()
	deadline := time.Now().Add(waitTimeout)
	for {
		w, err := c.GetWorkflow(context.Background(), id)
		if err != nil {
			t.Fatalf("workflow %s: %v", id, err)
		}
		if ok(w) {
			return w
		}
		if time.Now().After(deadline) {
			t.Fatalf("workflow %s: not %s within %v: status %s, progress %+v", id, what, waitTimeout, w.Status, w.Progress)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// taskNodes returns the task nodes of a workflow's graph by node number.
func taskNodes(n *dtq.WorkflowNode, out map[int]*dtq.WorkflowNode) map[int]*dtq.WorkflowNode {
	if n == nil {
		return out
	}
	if n.Kind == "task" {
		out[n.Node] = n
	}
	for _, k := range append(append([]*dtq.WorkflowNode{}, n.Nodes...), n.Children...) {
		taskNodes(k, out)
	}
	taskNodes(n.OnSuccess, out)
	taskNodes(n.OnComplete, out)
	return out
}

// nodeBox is a task node's box as the workflow page draws it.
type nodeBox struct {
	Node     int    `json:"node"`
	Status   string `json:"status"`   // its data-status
	Type     string `json:"type"`     // the task type shown
	Badge    string `json:"badge"`    // the status badge's text
	Href     string `json:"href"`     // its link, "" when it is not one
	Err      string `json:"err"`      // the error line shown
	Callback string `json:"callback"` // the callback it is drawn as ("on_success", "on_complete"), or ""
	Label    string `json:"label"`    // that callback's label
	Parallel int    `json:"parallel"` // the node of the parallel node's panel it is drawn in, -1 for none
}

// nodeBoxesJS reads every task node's box of the drawing, in page order.
const nodeBoxesJS = `[...document.querySelectorAll('#wf-graph .wf-task')].map((b) => {
	const cb = b.closest('[data-callback]');
	const par = b.closest('.wf-parallel');
	const text = (sel) => ((b.querySelector(sel) || {}).textContent || '').trim();
	return {
		node: Number(b.dataset.node), status: b.dataset.status, type: text('.wf-type'), badge: text('.badge'),
		href: b.getAttribute('href') || '', err: text('.wf-err'),
		callback: cb ? cb.dataset.callback : '', label: cb ? cb.querySelector('.wf-cb-label').textContent : '',
		parallel: par ? Number(par.dataset.node) : -1,
	};
})`

// boxStatus is the JavaScript text of a node's box's data-status ("" when
// the box is not there).
func boxStatus(node int) string {
	return fmt.Sprintf(`((b) => b ? b.dataset.status : '')(document.querySelector('#wf-graph .wf-task[data-node="%d"]'))`, node)
}

// legendCount is the JavaScript text of a progress count in the legend.
func legendCount(key string) string {
	return fmt.Sprintf(`((li) => li ? li.querySelector('.legend-value').textContent : '')(document.querySelector('#wf-progress li[data-count=%q]'))`, key)
}

const wfStatusJS = `(document.getElementById('wf-status') || {}).textContent`

// A finished workflow (a chain of a task, a parallel node with a failing
// child and both callbacks, and a task) is drawn node by node with each
// node's status and error, the parallel node's children in its panel and
// the callbacks
// after it under their labels; a started node's box links to its task,
// whose page links back to the workflow and shows what the node before
// produced.
func TestWorkflowPage(t *testing.T) {
	t.Parallel()
	p, c := onRedis(t)
	fan := dtq.Parallel(dtq.Call("echo", 2, nil), dtq.Call("always_fail", map[string]bool{"permanent": true}, nil))
	onSuccess, onComplete := dtq.Call("echo", "all ok", nil), dtq.Call("echo", "done", nil)
	fan.OnSuccess, fan.OnComplete = &onSuccess, &onComplete
	wf, err := c.EnqueueWorkflow(context.Background(),
		dtq.Chain(dtq.Call("echo", 1, nil), fan, dtq.Call("echo", "after", nil)), &dtq.WorkflowOpts{Queue: "default"})
	if err != nil {
		t.Fatal(err)
	}
	done := waitWorkflow(t, c, wf.ID, "finished", func(w *dtq.Workflow) bool { return w.Status != dtq.WorkflowRunning })
	if done.Status != dtq.WorkflowFailed {
		t.Fatalf("the workflow ended %s, want FAILED: %+v", done.Status, done)
	}
	nodes := taskNodes(done.Root, map[int]*dtq.WorkflowNode{})
	// What the page must show, node by node (the numbers are the engine's:
	// depth first, a parallel node's callbacks after its children).
	want := []nodeBox{
		{Node: 1, Type: "echo", Status: "SUCCEEDED", Parallel: -1},
		{Node: 3, Type: "echo", Status: "SUCCEEDED", Parallel: 2},
		{Node: 4, Type: "always_fail", Status: "FAILED", Parallel: 2, Err: "always_fail: this task always fails"},
		{Node: 5, Type: "echo", Status: "SKIPPED", Parallel: -1, Callback: "on_success", Label: "on success", Err: "not run: child 4 ("},
		{Node: 6, Type: "echo", Status: "SUCCEEDED", Parallel: -1, Callback: "on_complete", Label: "on complete"},
		{Node: 7, Type: "echo", Status: "SKIPPED", Parallel: -1, Err: "not run: node 2 of 3 FAILED"},
	}
	if len(nodes) != len(want) {
		t.Fatalf("the workflow has %d task nodes, want %d", len(nodes), len(want))
	}
	for _, w := range want {
		if s := nodes[w.Node]; s == nil || s.Status != w.Status || s.TaskType != w.Type {
			t.Fatalf("the API's node %d: %+v, want %s %s", w.Node, s, w.Type, w.Status)
		}
	}

	tb := newTab(t, 1280, 900)
	tb.open(p.URL + "/#/workflows/" + wf.ID)
	tb.waitFor("the drawing of six task nodes", `document.querySelectorAll('#wf-graph .wf-task').length === 6 && `+wfStatusJS+` === 'FAILED'`)
	boxes := eval[[]nodeBox](tb, nodeBoxesJS)
	if len(boxes) != len(want) {
		t.Fatalf("%d boxes drawn, want %d: %+v", len(boxes), len(want), boxes)
	}
	for i, w := range want {
		b := boxes[i]
		wantHref := ""
		if id := nodes[w.Node].TaskID; id != "" {
			wantHref = "#/tasks/" + id
		}
		if b.Node != w.Node || b.Type != w.Type || b.Status != w.Status || b.Badge != w.Status || b.Href != wantHref ||
			b.Callback != w.Callback || b.Label != w.Label || b.Parallel != w.Parallel || !strings.HasPrefix(b.Err, w.Err) || (w.Err == "") != (b.Err == "") {
			t.Errorf("box %d: %+v\nwant %+v with href %q", i, b, w, wantHref)
		}
	}
	if boxes[4].Href == "" || boxes[3].Href != "" {
		t.Errorf("the succeeded callback must link to its task, the skipped one not: %+v, %+v", boxes[4], boxes[3])
	}
	// The parallel node's panel says what it is, and the header, progress
	// and error the workflow's state.
	if got := eval[string](tb, `document.querySelector('#wf-graph .wf-parallel[data-node="2"] .wf-parallel-head').textContent`); got != "parallel · node 2 · 2 branchesFAILED" {
		t.Errorf("the parallel node's head: %q", got)
	}
	if got := eval[string](tb, `document.querySelector('#wf-graph .wf-parallel[data-node="2"]').getAttribute('aria-label')`); got != "Parallel node of 2 branches, node 2, FAILED" {
		t.Errorf("the parallel node's label: %q", got)
	}
	for key, n := range map[string]string{"succeeded": "3", "failed": "1", "skipped": "2", "cancelled": "0", "active": "0", "pending": "0"} {
		if got := eval[string](tb, legendCount(key)); got != n {
			t.Errorf("progress %s: %q, want %q", key, got, n)
		}
	}
	if got := tb.text(`#wf-progress .wf-ended`); got != "6 of 6 task nodes ended" {
		t.Errorf("progress: %q", got)
	}
	if got := tb.text(`#wf-graph-h`); got != "Nodes" {
		t.Errorf("the drawing's heading: %q", got)
	}
	if got := tb.text(`#wf-error`); got != done.Error || !strings.Contains(got, "always_fail: this task always fails") {
		t.Errorf("the error shown: %q, want %q", got, done.Error)
	}
	if eval[bool](tb, `document.getElementById('cancel-workflow') !== null`) {
		t.Error("a finished workflow has a Cancel button")
	}
	tb.screenshot("workflow")
	tb.noScriptRan("Workflow")

	// The failed node's box opens its task, which links back.
	failed := nodes[4].TaskID
	tb.click(`#wf-graph .wf-task[data-node="4"]`)
	tb.waitFor("the failed node's task page", `location.hash === `+js("#/tasks/"+failed)+` && document.getElementById('task-workflow') !== null`)
	tb.waitFor("its status", `(document.getElementById('task-status') || {}).textContent === 'DEAD'`)
	if got := eval[string](tb, `document.getElementById('task-workflow').parentElement.textContent`); got != wf.ID+" (node 4)" {
		t.Errorf("the task's workflow row: %q", got)
	}
	if got := eval[string](tb, `document.getElementById('task-workflow').getAttribute('href')`); got != "#/workflows/"+wf.ID {
		t.Errorf("the task's workflow link: %q", got)
	}
	// A parallel node's child gets the parallel node's input: node 1's
	// result.
	if got := tb.text(`#previous pre`); !strings.Contains(got, `"echo": 1`) {
		t.Errorf("the failed node's previous: %q", got)
	}
	tb.noScriptRan("Task")
	tb.click(`#task-workflow`)
	tb.waitFor("the workflow page again", `location.hash === `+js("#/workflows/"+wf.ID)+` && document.querySelectorAll('#wf-graph .wf-task').length === 6`)

	// The on_complete callback's previous is the children's outcomes; the
	// first node has none.
	tb.open(p.URL + "/#/tasks/" + nodes[6].TaskID)
	tb.waitFor("the callback's previous: the outcomes", `((e) => e !== null && e.textContent.includes('always_fail: this task always fails') && e.textContent.includes(`+js(nodes[3].TaskID)+`))(document.querySelector('#previous pre'))`)
	tb.open(p.URL + "/#/tasks/" + nodes[1].TaskID)
	tb.waitFor("the first node: no previous", `document.getElementById('task-workflow') !== null && (document.getElementById('previous') || {textContent: ''}).textContent.includes('None')`)
	tb.open(p.URL + "/#/workflows/nope-01M8SJTZPPB632H4NP31YWFE4N")
	tb.waitFor("an unknown workflow", mainHas("No such workflow"))
	tb.noScriptRan("")
}

// Cancel on a running workflow's page (its first node's handler sleeps)
// asks first; declining changes nothing; confirming cancels it, and the
// page shows it CANCELLED, node by node, without a reload.
func TestCancelWorkflowFromPage(t *testing.T) {
	t.Parallel()
	p, c := onRedis(t)
	wf, err := c.EnqueueWorkflow(context.Background(), dtq.Chain(
		dtq.Call("sleep", map[string]int{"seconds": 600}, nil),
		dtq.Parallel(dtq.Call("echo", "a", nil), dtq.Call("echo", "b", nil)),
	), nil)
	if err != nil {
		t.Fatal(err)
	}
	w := waitWorkflow(t, c, wf.ID, "started", func(w *dtq.Workflow) bool { return w.Root.Nodes[0].TaskID != "" })
	p.WaitStatus(w.Root.Nodes[0].TaskID, "RUNNING")

	tb := newTab(t, 1280, 800)
	tb.open(p.URL + "/#/workflows/" + wf.ID)
	tb.waitFor("RUNNING, its first node active and the others pending", wfStatusJS+` === 'RUNNING' && `+boxStatus(1)+` === 'ACTIVE' && `+
		boxStatus(3)+` === 'PENDING' && `+boxStatus(4)+` === 'PENDING' && `+legendCount("active")+` === '1' && `+legendCount("pending")+` === '2'`)
	tb.screenshot("workflow-running")
	tb.click(`#cancel-workflow`)
	tb.waitFor("the confirmation", `document.getElementById('confirm-dialog').open && document.getElementById('confirm-text').textContent.includes(`+js(wf.ID)+`)`)
	tb.click(`#confirm-cancel`)
	tb.waitFor("the confirmation closed", `!document.getElementById('confirm-dialog').open`)
	if w, err := c.GetWorkflow(context.Background(), wf.ID); err != nil || w.Status != dtq.WorkflowRunning || w.CancelRequested {
		t.Fatalf("after declining the confirmation the workflow is %+v (%v)", w, err)
	}

	tb.click(`#cancel-workflow`)
	tb.waitFor("the confirmation", `document.getElementById('confirm-dialog').open`)
	tb.click(`#confirm-ok`)
	waitWorkflow(t, c, wf.ID, "CANCELLED", func(w *dtq.Workflow) bool { return w.Status == dtq.WorkflowCancelled })
	tb.waitFor("CANCELLED on the page, every node too", wfStatusJS+` === 'CANCELLED' && `+boxStatus(1)+` === 'CANCELLED' && `+
		boxStatus(3)+` === 'CANCELLED' && `+boxStatus(4)+` === 'CANCELLED' && `+legendCount("cancelled")+` === '3'`)
	tb.waitFor("no cancel button any more", `document.getElementById('cancel-workflow') === null`)
	if got := p.Task(w.Root.Nodes[0].TaskID).Str("status"); got != "CANCELLED" {
		t.Errorf("the sleeping node's task is %s", got)
	}
	tb.screenshot("workflow-cancelled")
	tb.noScriptRan("Workflow")

	// The audit log has the submission and the cancellation, each linking
	// to the workflow's page (its id is no task's), and the cancellation of
	// its running node, linking to that task's.
	tb.open(p.URL + "/#/audit")
	href, taskHref := js("#/workflows/"+wf.ID), js("#/tasks/"+w.Root.Nodes[0].TaskID)
	tb.waitFor("the actions in the audit log, linked to the workflow and its task", `((rows) => {
		const link = (action) => rows.filter((r) => r.children[1].textContent === action).map((r) => (r.children[3].querySelector('a') || {}).getAttribute('href')).join(' ');
		return rows.length === 3 && link('workflow') === `+href+` && link('cancel_workflow') === `+href+` && link('cancel') === `+taskHref+`;
	})([...document.querySelectorAll('table.audit tbody tr')])`)
	eval[any](tb, `[...document.querySelectorAll('table.audit tbody tr')].find((r) => r.children[1].textContent === 'workflow').children[3].querySelector('a').click()`)
	tb.waitFor("the workflow's page", `location.hash === `+href+` && `+wfStatusJS+` === 'CANCELLED'`)
	if strings.Contains(tb.text("main h1"), "No such") {
		tb.fail("the audit log's link leads to %q", tb.text("main h1"))
	}
	tb.noScriptRan("Workflow")
}

// With DTQ_API_KEY, Cancel on the page of a workflow whose queue has no
// worker asks for the key as every admin action does, then cancels it.
func TestCancelWorkflowNeedsKey(t *testing.T) {
	t.Parallel()
	const key = "s3cret-key"
	p, c := onRedis(t, "DTQ_API_KEY="+key)
	wf, err := c.EnqueueWorkflow(context.Background(), dtq.Parallel(dtq.Call("echo", 1, nil), dtq.Call("echo", 2, nil)), &dtq.WorkflowOpts{Queue: "idle"})
	if err != nil {
		t.Fatal(err)
	}
	tb := newTab(t, 1280, 800)
	tb.open(p.URL + "/#/workflows/" + wf.ID)
	tb.waitFor("RUNNING, both nodes active (queued)", wfStatusJS+` === 'RUNNING' && `+boxStatus(1)+` === 'ACTIVE' && `+boxStatus(2)+` === 'ACTIVE'`)
	tb.click(`#cancel-workflow`)
	tb.waitFor("the confirmation", `document.getElementById('confirm-dialog').open`)
	tb.click(`#confirm-ok`)
	tb.waitFor("the key dialog", `document.getElementById('key-dialog').open && document.getElementById('key-reason').textContent.includes('401 Unauthorized')`)
	if w := p.Must(http.StatusOK, "GET", "/api/v1/workflows/"+wf.ID, ""); w.Str("status") != "RUNNING" {
		t.Fatalf("before the key was given the workflow is %s", w.Str("status"))
	}
	tb.do(sendKeys(`#key-input`, key))
	tb.click(`#key-save`)
	tb.waitFor("CANCELLED on the page", wfStatusJS+` === 'CANCELLED' && `+boxStatus(1)+` === 'CANCELLED' && `+boxStatus(2)+` === 'CANCELLED'`)
	tb.waitFor("the notice", `document.getElementById('notices').textContent.includes('Workflow cancelled.')`)
	if w, err := c.GetWorkflow(context.Background(), wf.ID); err != nil || w.Status != dtq.WorkflowCancelled {
		t.Fatalf("the API says %+v (%v)", w, err)
	}
	tb.noScriptRan("Workflow")
}
