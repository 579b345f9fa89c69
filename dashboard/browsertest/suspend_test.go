package browsertest

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/dtq-dev/dtq"
	"github.com/dtq-dev/dtq/internal/proctest"
)

// napWorker runs, in this process, a Go worker of queue "naps" on c's
// namespace, stopped at cleanup: "nap" sleeps durably for an hour,
// "approve" waits for signal "approval" (for its payload's milliseconds,
// default an hour) and returns its payload, or "timed out".
func napWorker(t *testing.T, c *dtq.Client) {
	t.Helper()
	w, err := dtq.NewWorker(c, &dtq.WorkerConfig{Queues: []string{"naps"}})
	if err != nil {
		t.Fatal(err)
	}
	w.Handle("nap", func(ctx context.Context, _ *dtq.Task) (any, error) { return nil, dtq.Sleep(ctx, "nap", time.Hour) })
	w.Handle("approve", func(ctx context.Context, task *dtq.Task) (any, error) {
		timeout := time.Hour
		var ms int64
		if json.Unmarshal(task.Payload, &ms) == nil && ms > 0 {
			timeout = time.Duration(ms) * time.Millisecond
		}
		got, err := dtq.WaitFor(ctx, "approval", timeout)
		if errors.Is(err, dtq.ErrWaitTimedOut) {
			return "timed out", nil
		}
		return got, err
	})
	if err := w.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		w.Stop(ctx)
	})
}

// suspendedUntil waits until task id is suspended and returns its
// suspension's until, as the API writes it.
func suspendedUntil(p *proctest.Proc, id string) string {
	r := p.WaitTask(id, "suspended", func(task map[string]any) bool { return task["suspended"] != nil })
	until, _ := r.Body["suspended"].(map[string]any)["until"].(string)
	return until
}

// A suspended task's page says, next to its status, what it waits for and
// until when; its run shows as suspended. A signal wakes a waiting task
// live, and the Steps card says the signal recorded its wait (or the
// timeout, for one no signal reached). The overview counts a queue's
// suspended tasks and links to the list of them.
func TestSuspendedTasks(t *testing.T) {
	t.Parallel()
	p, c := onRedis(t)
	napWorker(t, c)
	nap := p.Submit(`{"task_type":"nap","queue":"naps"}`)
	approve := p.Submit(`{"task_type":"approve","queue":"naps"}`)
	late := p.Submit(`{"task_type":"approve","queue":"naps","payload":200}`)
	napUntil := suspendedUntil(p, nap)
	suspendedUntil(p, approve)

	tb := newTab(t, 1280, 800)
	tb.open(p.URL + "/#/tasks/" + nap)
	tb.waitFor("the sleep next to the status", `((el) => el !== null && el.dataset.for === 'sleep' &&
		el.textContent.startsWith('Sleeping: step nap until ') && el.querySelector('time').getAttribute('datetime') === `+js(napUntil)+` &&
		document.getElementById('task-status').textContent === 'SCHEDULED')(document.getElementById('task-suspended'))`)
	tb.waitFor("the due time in the timeline", mainHas("Due to run: sleep nap ends"))
	tb.waitFor("the suspended run", `((r) => r !== null && r.textContent.includes('suspended') && r.textContent.includes('sleep nap'))(document.querySelector('table.attempts tbody tr'))`)
	tb.screenshot("suspended-task")

	tb.open(p.URL + "/#/tasks/" + approve)
	tb.waitFor("the wait", `((el) => el !== null && el.dataset.for === 'signal' &&
		el.textContent.startsWith('Waiting for signal approval until ') && el.textContent.endsWith(', then it times out'))(document.getElementById('task-suspended'))`)
	p.Must(http.StatusOK, "POST", "/api/v1/tasks/"+approve+"/signals/approval", `{"payload":{"by":"ann"}}`)
	tb.waitFor("the signal's record, live", `((r) => r !== null && r.dataset.by === 'signal' && r.querySelector('.step-by').textContent === 'signal' &&
		r.textContent.includes('ann') && document.getElementById('task-status').textContent === 'SUCCEEDED' &&
		document.getElementById('task-suspended') === null)(document.querySelector('#steps tr[data-step="approval"]'))`)

	p.WaitStatus(late, "SUCCEEDED")
	tb.open(p.URL + "/#/tasks/" + late)
	tb.waitFor("the timeout's record", `((r) => r !== null && r.dataset.by === 'timeout' &&
		r.querySelector('.step-by').textContent === 'timeout (no signal in time)')(document.querySelector('#steps tr[data-step="approval"]'))`)
	tb.noScriptRan("Task")

	tb.open(p.URL + "/")
	link := `document.querySelector('tr[data-queue="naps"] .suspended-link')`
	tb.waitFor("the suspended count of naps", `((a) => a !== null && !a.hidden && a.textContent === '1 suspended' &&
		a.getAttribute('href') === '#/tasks?queue=naps&suspended=true')(`+link+`)`)
	tb.waitFor("none shown for default", `document.querySelector('tr[data-queue="default"] .suspended-link').hidden`)
	tb.screenshot("suspended-overview")
	tb.click(`tr[data-queue="naps"] .suspended-link`)
	tb.waitFor("the suspended tasks of naps only", `((rows) => rows.length === 1 && rows[0].dataset.id === `+js(nap)+` &&
		rows[0].textContent.includes('sleeping') && document.getElementById('f-status').value === 'SUSPENDED')(document.querySelectorAll('table.tasks tbody tr'))`)
	tb.screenshot("suspended-tasks")
	tb.noScriptRan("Tasks")
}
