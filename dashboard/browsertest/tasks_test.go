package browsertest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/dtq-dev/dtq/internal/proctest"
	"github.com/dtq-dev/dtq/internal/redistest"
)

// js quotes s as a JavaScript string literal.
func js(s string) string {
	b, err := json.Marshal(s)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// mainHas is the JavaScript condition "the page's main element shows s".
func mainHas(s string) string {
	return `document.querySelector('main').textContent.includes(` + js(s) + `)`
}

// history returns the runs of a task.
func history(task map[string]any) []any {
	h, _ := task["history"].([]any)
	return h
}

// A task that fails for good shows under dead letters with its reason, and
// Requeue on that page runs it again: a second run lands in its history.
// The processes are `dtq api` and `dtq worker` on a redis-server, as in
// production.
func TestDeadLetterRequeue(t *testing.T) {
	t.Parallel()
	env := []string{"DTQ_REDIS_URL=redis://" + redistest.Shared(t).Addr, "DTQ_NAMESPACE=" + redistest.Namespace(t)}
	p := start(t, env, "api", "--addr", "127.0.0.1:0")
	start(t, env, "worker", "--addr", "127.0.0.1:0")

	id := p.Submit(`{"task_type":"always_fail","max_attempts":1}`)
	dead := p.WaitStatus(id, "DEAD")
	if n := len(history(dead.Body)); n != 1 {
		t.Fatalf("a dead task with max_attempts 1 has %d runs: %v", n, dead.Body)
	}

	tb := newTab(t, 1280, 800)
	tb.open(p.URL + "/#/dlq?queue=default")
	row := fmt.Sprintf(`tr[data-id=%q]`, id)
	tb.waitFor("the dead letter", fmt.Sprintf(`((r) => r !== null && r.textContent.includes('always_fail: this task always fails') && r.textContent.includes('1 / 1'))(document.querySelector(%s))`, js(row)))
	tb.waitFor("the count", mainHas("1 dead letter in default"))
	requeuedAt := time.Now()
	tb.click(row + ` button[aria-label^="Requeue"]`)
	tb.waitFor("the requeue notice", `document.getElementById('notices').textContent.includes('Requeued')`)

	again := p.WaitTask(id, "run again", func(task map[string]any) bool { return len(history(task)) >= 2 })
	run2 := history(again.Body)[1].(map[string]any)
	started, err := time.Parse(time.RFC3339Nano, run2["started_at"].(string))
	if err != nil || started.Before(requeuedAt.Add(-time.Second)) {
		t.Errorf("the second run started at %v (%v), before the requeue at %v", run2["started_at"], err, requeuedAt)
	}
	// It fails again and is back among the dead letters, its two runs in
	// the task page's attempt history.
	p.WaitStatus(id, "DEAD")
	tb.open(p.URL + "/#/tasks/" + id)
	tb.waitFor("two runs in the attempt history, both dead", `((rows) => rows.length === 2 && [...rows].every((r) =>
		(r.querySelector('.badge.b-dead') || {}).textContent === 'dead'))(document.querySelectorAll('table.attempts tbody tr'))`)
	tb.noScriptRan("Task")
}

// Cancel on a running task's page asks for confirmation, then the task
// ends CANCELLED, in the API and on the page without a reload; a question
// declined and asked again at once is answered by its second answer.
// While it runs, its first run is in the attempts table as running now.
func TestCancelFromTaskPage(t *testing.T) {
	t.Parallel()
	p := start(t, nil, "serve", "--addr", "127.0.0.1:0")
	id := p.Submit(`{"task_type":"sleep","payload":{"seconds":600}}`)
	p.WaitStatus(id, "RUNNING")

	tb := newTab(t, 1280, 800)
	tb.open(p.URL + "/#/tasks/" + id)
	tb.waitFor("RUNNING on the page", `(document.getElementById('task-status') || {}).textContent === 'RUNNING'`)
	tb.waitFor("the running first run in the attempts table", `((rows) => rows.length === 1 && rows[0].children[0].textContent === '1' &&
		rows[0].textContent.includes('running now') && rows[0].querySelector('.badge').textContent === 'RUNNING')(document.querySelectorAll('table.attempts tbody tr'))`)
	if strings.Contains(tb.text("main"), "Not run yet.") {
		tb.fail("a running task's attempts say it has not run yet")
	}
	tb.click(`#cancel-task`)
	tb.waitFor("the confirmation", `document.getElementById('confirm-dialog').open`)
	// Cancelling the confirmation changes nothing.
	tb.click(`#confirm-cancel`)
	tb.waitFor("the confirmation closed", `!document.getElementById('confirm-dialog').open`)
	if got := p.Task(id).Body["status"]; got != "RUNNING" {
		t.Fatalf("after declining the confirmation the task is %v", got)
	}

	// Declined and asked again at once: the first closing's close event
	// (dispatched later) must not answer the second question.
	eval[any](tb, `document.getElementById('cancel-task').click();
		document.getElementById('confirm-cancel').click();
		document.getElementById('cancel-task').click()`)
	tb.waitFor("the confirmation", `document.getElementById('confirm-dialog').open`)
	tb.click(`#confirm-ok`)
	tb.waitFor("the confirmation closed", `!document.getElementById('confirm-dialog').open`)
	p.WaitStatus(id, "CANCELLED")
	tb.waitFor("CANCELLED on the page", `(document.getElementById('task-status') || {}).textContent === 'CANCELLED'`)
	tb.waitFor("no cancel button any more", `document.getElementById('cancel-task') === null`)
	tb.waitFor("the run ended in the attempts table, cancelled", `((rows) => rows.length === 1 && !rows[0].textContent.includes('running now') &&
		(rows[0].querySelector('.badge.b-cancelled') || {}).textContent === 'cancelled')(document.querySelectorAll('table.attempts tbody tr'))`)
	// The timeline tells the cancellation once: as the run's end.
	tb.waitFor("the timeline's cancelled run", `((items) => items.some((e) => e.textContent.startsWith('Run 1 cancelled')) &&
		!items.some((e) => e.textContent === 'Cancelled'))([...document.querySelectorAll('ol.timeline .tl-what')])`)
	tb.noScriptRan("Task")
}

// markup is task data that would run or become elements if a page put it
// into innerHTML: every vector sets window.__xss or opens a dialog.
// (No double quote: JSON would show it escaped.)
const markup = `<img src=x onerror='window.__xss=1'><script>window.__xss=2</script><svg onload='alert(3)'><b>bold</b>`

// Payloads, results, task types and errors holding markup are shown as
// that text on every page, and nothing in them runs. The check is proven
// to catch markup: injecting the same text with innerHTML at the end makes
// it fail.
func TestTaskDataRendersAsText(t *testing.T) {
	t.Parallel()
	p := start(t, nil, "serve", "--addr", "127.0.0.1:0")
	payload, _ := json.Marshal(map[string]string{"note": markup, markup: "as a key"})
	echo := p.Submit(fmt.Sprintf(`{"task_type":"echo","payload":%s}`, payload))
	// A task of this type, run by a worker over HTTP that fails it for
	// good with an error quoting the type (the serve process's Go worker
	// leaves the type to it, CONTRACT 3.3.1c).
	odd := p.Submit(fmt.Sprintf(`{"task_type":%s,"payload":%s}`, js(markup), payload))
	failOverHTTP(t, p, markup, odd, "cannot run task type %q")
	p.WaitStatus(echo, "SUCCEEDED")
	p.WaitStatus(odd, "DEAD")
	// A workflow whose first node has that type: drawn with the type on its
	// box and the error quoting it.
	wf := p.Must(http.StatusCreated, "POST", "/api/v1/workflows",
		fmt.Sprintf(`{"root":{"chain":[{"task":{"task_type":%s,"payload":%s}},{"task":{"task_type":"echo"}}]}}`, js(markup), payload)).Str("id")
	failOverHTTP(t, p, markup, "", "cannot run task type %q")

	tb := newTab(t, 1280, 800)
	pages := []struct{ name, hash, want string }{
		{"task detail (payload and result)", "#/tasks/" + echo, `"note": "` + markup},
		{"task detail (type and error)", "#/tasks/" + odd, `cannot run task type "<img src=x`},
		{"tasks", "#/tasks?queue=default", markup},
		{"dead letters", "#/dlq?queue=default", markup},
		{"workflow (type and error)", "#/workflows/" + wf, `cannot run task type "<img src=x`},
		{"overview", "#/", "Queues"},
	}
	for _, pg := range pages {
		tb.open(p.URL + "/" + pg.hash)
		tb.waitFor(pg.name+" showing the markup as text", mainHas(pg.want)+" || "+dirtyJS)
		tb.noScriptRan("")
	}
	// The result echoes the payload: it is shown as text too.
	tb.open(p.URL + "/#/tasks/" + echo)
	tb.waitFor("the result as text", `document.getElementById('result').textContent.includes(`+js(markup)+`) || `+dirtyJS)
	if n := eval[int](tb, `document.querySelectorAll('main b').length`); n != 0 {
		t.Errorf("<b> in the payload became %d elements", n)
	}
	tb.noScriptRan("Task")

	// The detector works: the same text through innerHTML is caught.
	eval[any](tb, `document.getElementById('payload').insertAdjacentHTML('beforeend', `+js(markup)+`), null`)
	tb.waitFor("the CSP to report the injected handler", `window.__csp.length > 0`)
	if r := tb.report(); r.clean() || len(r.Foreign) == 0 {
		t.Fatalf("markup injected with innerHTML went unnoticed: %+v", r)
	}
}

// A task submitted with a group shows its group on its page, and while it
// waits for its group's turn (the group has its window of tasks in the
// bands), says so.
func TestTaskPageShowsGroup(t *testing.T) {
	t.Parallel()
	p := start(t, nil, "serve", "--addr", "127.0.0.1:0", "--concurrency", "2", "--shutdown-timeout", "1s")
	var ids []string
	for range 15 { // 2 running, 10 in the bands, 3 waiting
		ids = append(ids, p.Submit(`{"task_type":"sleep","payload":{"seconds":600},"group":"acme"}`))
	}
	last := ids[len(ids)-1]
	if w := p.Task(last).Body["group_waiting"]; w != true {
		t.Fatalf("the 15th task of the group: group_waiting %v, want true", w)
	}
	tb := newTab(t, 1280, 800)
	tb.open(p.URL + "/#/tasks/" + last)
	tb.waitFor("the group, waiting", mainHas("acme (waiting for its turn)"))
	tb.open(p.URL + "/#/tasks/" + ids[0])
	tb.waitFor("the group", mainHas("acme"))
	tb.waitFor("not waiting", `!`+mainHas("waiting for its turn"))
	tb.noScriptRan("Task")
}

// A running task's progress (here a lease's, from a worker over HTTP) is a
// bar on its task page, which follows the next report live.
func TestTaskPageShowsProgress(t *testing.T) {
	t.Parallel()
	p := start(t, nil, "serve", "--addr", "127.0.0.1:0")
	id := p.Submit(`{"task_type":"transcode","queue":"remote"}`)
	ls := p.Must(http.StatusOK, "POST", "/api/v1/leases", `{"worker":"py-1","queues":["remote"]}`).Body["leases"].([]any)
	token := ls[0].(map[string]any)["lease"].(string)
	p.Must(http.StatusNoContent, "POST", "/api/v1/leases/"+token+"/progress", `{"fraction":0.25,"note":"pass 1 of 4"}`)
	tb := newTab(t, 1280, 800)
	tb.open(p.URL + "/#/tasks/" + id)
	tb.waitFor("the progress bar", `(() => { const el = document.getElementById('task-progress');
		return el && el.textContent.includes('25% · pass 1 of 4') && el.querySelector('progress').value === 0.25; })()`)
	p.Must(http.StatusNoContent, "POST", "/api/v1/leases/"+token+"/progress", `{"fraction":0.75,"note":"pass 3 of 4"}`)
	tb.waitFor("the next report, live", `(() => { const el = document.getElementById('task-progress');
		return el && el.textContent.includes('75% · pass 3 of 4') && el.querySelector('progress').value === 0.75; })()`)
	p.Must(http.StatusOK, "POST", "/api/v1/leases/"+token+"/complete", `{"result":"ok"}`)
	tb.waitFor("no bar once it ended", `!document.getElementById('task-progress') && `+mainHas("SUCCEEDED"))
	tb.noScriptRan("Task")
}

// A task's durable steps (here a lease's, from a worker over HTTP) are a
// table on its task page, in the order they were recorded, their results
// shown as text.
func TestTaskPageShowsSteps(t *testing.T) {
	t.Parallel()
	p := start(t, nil, "serve", "--addr", "127.0.0.1:0")
	id := p.Submit(`{"task_type":"order","queue":"remote"}`)
	ls := p.Must(http.StatusOK, "POST", "/api/v1/leases", `{"worker":"py-1","queues":["remote"]}`).Body["leases"].([]any)
	token := ls[0].(map[string]any)["lease"].(string)
	p.Must(http.StatusOK, "PUT", "/api/v1/leases/"+token+"/steps/charge", `{"result":{"charge":"ch_42"}}`)
	p.Must(http.StatusOK, "PUT", "/api/v1/leases/"+token+"/steps/email", `{"result":"<img src=x onerror=alert(1)>"}`)
	p.Must(http.StatusOK, "POST", "/api/v1/leases/"+token+"/complete", `{"result":"ok"}`)
	tb := newTab(t, 1280, 800)
	tb.open(p.URL + "/#/tasks/" + id)
	tb.waitFor("the steps table", `(() => { const rows = document.querySelectorAll('#steps tbody tr');
		return rows.length === 2 && rows[0].dataset.step === 'charge' && rows[0].textContent.includes('ch_42') &&
			rows[1].dataset.step === 'email' && rows[1].textContent.includes('<img src=x onerror=alert(1)>'); })()`)
	if n := eval[int](tb, `document.querySelectorAll('#steps img').length`); n != 0 {
		t.Errorf("a step's result was rendered as HTML: %d img elements", n)
	}
	tb.noScriptRan("Task")
}

// The dead letters page's redrive counts the matching dead letters first,
// then, confirmed, requeues those only.
func TestRedriveFromDeadLetters(t *testing.T) {
	t.Parallel()
	p := start(t, nil, "serve", "--addr", "127.0.0.1:0", "--queues", "default")
	var fails []string
	for range 3 {
		fails = append(fails, p.Submit(`{"task_type":"always_fail","max_attempts":1}`))
	}
	// A dead letter of another error: a task its worker over HTTP failed.
	orphan := p.Submit(`{"task_type":"nobody_handles","max_attempts":1}`)
	failOverHTTP(t, p, "nobody_handles", orphan, "no worker runs %q")
	for _, id := range append(fails, orphan) {
		p.WaitStatus(id, "DEAD")
	}
	tb := newTab(t, 1280, 800)
	tb.open(p.URL + "/#/dlq?queue=default")
	tb.waitFor("the count", mainHas("4 dead letters in default"))
	tb.do(sendKeys(`#r-error`, "ALWAYS FAILS"))
	tb.click(`#redrive-count`)
	tb.waitFor("the dry run's count", `document.getElementById('redrive-result').textContent === 'Dry run: 3 dead letters match in default; nothing was requeued.'`)
	if got := p.Task(orphan).Body["status"]; got != "DEAD" {
		t.Fatalf("a dry run changed a task: %v", got)
	}
	tb.click(`#redrive`)
	tb.waitFor("the confirmation", `document.getElementById('confirm-dialog').open && document.getElementById('confirm-dialog').textContent.includes('Redrive 3 dead letters of default?')`)
	tb.click(`#confirm-ok`)
	tb.waitFor("the redrive's result", `document.getElementById('redrive-result').textContent === 'Requeued 3 of 3 dead letters match.'`)
	for _, id := range fails {
		p.WaitTask(id, "run again", func(task map[string]any) bool { return len(history(task)) >= 2 })
	}
	if got := p.Task(orphan).Body; got["status"] != "DEAD" || len(history(got)) != 1 {
		t.Fatalf("the filtered-out dead letter was requeued: %v", got)
	}
	audit := p.Must(http.StatusOK, "GET", "/api/v1/audit?limit=1", "")
	if !strings.Contains(string(audit.Raw), `"action":"redrive"`) {
		t.Fatalf("audit: %s", audit.Raw)
	}
	tb.noScriptRan("Dead letters")
}

// The tasks page searches by id prefix, error text and creation time (the
// filters land in the URL), and says when nothing matches.
func TestTaskSearch(t *testing.T) {
	t.Parallel()
	p := start(t, nil, "serve", "--addr", "127.0.0.1:0", "--queues", "default")
	dead := p.Submit(`{"task_type":"always_fail","max_attempts":1}`)
	ok := p.Submit(`{"task_type":"echo","payload":1}`)
	p.WaitStatus(dead, "DEAD")
	p.WaitStatus(ok, "SUCCEEDED")
	tb := newTab(t, 1280, 800)
	tb.open(p.URL + "/#/tasks?queue=default")
	tb.waitFor("both tasks", `document.querySelectorAll('table.tasks tbody tr').length === 2`)
	tb.do(sendKeys(`#f-error`, "ALWAYS fails"))
	tb.click(`form.filters button[type=submit]`)
	tb.waitFor("the failed one only", fmt.Sprintf(`location.hash.includes('error=ALWAYS+fails') && document.querySelectorAll('table.tasks tbody tr').length === 1 && document.querySelector('table.tasks tbody tr').dataset.id === %s`, js(dead)))
	tb.open(p.URL + "/#/tasks?queue=default&id_prefix=" + ok)
	tb.waitFor("the one by its id", fmt.Sprintf(`document.querySelectorAll('table.tasks tbody tr').length === 1 && document.querySelector('table.tasks tbody tr').dataset.id === %s && document.getElementById('f-prefix').value === %s`, js(ok), js(ok)))
	tb.open(p.URL + "/#/tasks?queue=default&created_before=2020-01-01T00:00:00.000Z")
	tb.waitFor("none created before 2020", mainHas("No tasks of queue default match these filters."))
	tb.noScriptRan("Tasks")
}

// failOverHTTP leases the next task of taskType (id, when not "") as a
// worker over HTTP and fails it for good with error text errText (%s: the
// task's type, quoted).
func failOverHTTP(t *testing.T, p *proctest.Proc, taskType, id, errText string) {
	t.Helper()
	typ, _ := json.Marshal(taskType)
	r := p.Must(http.StatusOK, "POST", "/api/v1/leases",
		fmt.Sprintf(`{"worker":"http-test","task_types":[%s],"wait_seconds":10}`, typ))
	leases, _ := r.Body["leases"].([]any)
	if len(leases) != 1 {
		t.Fatalf("leased %s, want the task of type %q", r.Raw, taskType)
	}
	l := leases[0].(map[string]any)
	task := l["task"].(map[string]any)
	if id != "" && task["id"] != id {
		t.Fatalf("leased %v, want %s", task["id"], id)
	}
	text, _ := json.Marshal(fmt.Sprintf(errText, task["task_type"]))
	p.Must(http.StatusOK, "POST", "/api/v1/leases/"+l["lease"].(string)+"/fail",
		fmt.Sprintf(`{"error":%s,"class":"permanent"}`, text))
}
