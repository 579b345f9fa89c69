package browsertest

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/dtq-dev/dtq/internal/proctest"
	"github.com/dtq-dev/dtq/internal/redistest"
)

// With keys of several roles, the dashboard learns the role of the key
// entered (GET /api/v1/whoami) and shows only the actions it allows: a
// read key no pause, cancel, requeue, discard, purge or redrive; a submit
// key Cancel (which works) but no admin action; the admin key everything;
// an unknown key is refused and forgotten. On both backends.
func TestRolesHideActions(t *testing.T) {
	t.Parallel()
	for _, backend := range []string{"embedded", "redis"} {
		t.Run(backend, func(t *testing.T) {
			t.Parallel()
			keys := []string{"DTQ_API_KEY=admin-key", "DTQ_API_KEYS=read:read-key,submit:submit-key"}
			var p *proctest.Proc
			if backend == "embedded" {
				p = start(t, keys, "serve", "--addr", "127.0.0.1:0")
			} else {
				env := []string{"DTQ_REDIS_URL=redis://" + redistest.Shared(t).Addr, "DTQ_NAMESPACE=" + redistest.Namespace(t)}
				p = start(t, append(env, keys...), "api", "--addr", "127.0.0.1:0")
				start(t, env, "worker", "--addr", "127.0.0.1:0")
			}
			dead := p.Submit(`{"task_type":"always_fail","max_attempts":1}`, "X-API-Key", "submit-key")
			p.WaitStatus(dead, "DEAD")
			idle := p.Submit(`{"task_type":"echo","queue":"idle"}`, "X-API-Key", "submit-key") // no worker serves idle
			rolesHideActions(t, p, idle, dead)
		})
	}
}

func rolesHideActions(t *testing.T, p *proctest.Proc, idle, dead string) {
	tb := newTab(t, 1280, 800)
	tb.open(p.URL + "/")
	pause := `tr[data-queue="default"] button`
	cancel, requeue := `#cancel-task`, `#requeue-task`
	row := fmt.Sprintf(`tr[data-id=%q] button`, dead)
	dlqActions := []string{row, `#purge`, `#requeue-all`, `section.redrive`}
	keyButton := `document.getElementById('key-button').textContent`
	setKey := func(key string) {
		tb.click(`#key-button`)
		tb.waitFor("the key dialog", `document.getElementById('key-dialog').open`)
		tb.do(sendKeys(`#key-input`, key))
		tb.click(`#key-save`)
	}
	page := func(hash, ready string) {
		tb.open(p.URL + "/#/" + hash)
		tb.waitFor(hash, `document.querySelector(`+js(ready)+`) !== null`)
	}

	// No key: every action is shown (a click asks for the key).
	tb.waitFor("the pause button", shown(pause))

	// A read key: no action at all.
	setKey("read-key")
	tb.waitFor("the read role", `document.documentElement.dataset.role === 'read' && `+keyButton+` === 'API key ✓ (read)'`)
	tb.waitFor("no pause button", hidden(pause))
	page("tasks/"+idle, cancel)
	tb.waitFor("no cancel button", hidden(cancel))
	page("tasks?queue=idle", `.bulk-pick`)
	tb.waitFor("no bulk actions, no checkboxes", hidden(`section.bulk`)+` && `+hidden(`td.pick`))
	page("workers", `table.workers td.actions`)
	tb.waitFor("no worker quiet or stop", hidden(`table.workers td.actions`))
	page("tasks/"+dead, requeue)
	tb.waitFor("no requeue button", hidden(requeue))
	page("dlq?queue=default", row)
	for _, sel := range dlqActions {
		tb.waitFor("no "+sel, hidden(sel))
	}
	tb.waitFor("the dead letter still listed", mainHas(dead))
	tb.screenshot("role-read")
	page("limits", "#new-limit")
	tb.waitFor("no New limit or Set a group weight", hidden(`#new-limit`)+` && `+hidden(`#new-group`))
	page("schedules", "#new-schedule")
	tb.waitFor("no New schedule", hidden(`#new-schedule`))
	page("dlq?queue=default", row)

	// A submit key: Cancel, which works; still no admin action.
	setKey("submit-key")
	tb.waitFor("the submit role", `document.documentElement.dataset.role === 'submit' && `+keyButton+` === 'API key ✓ (submit)'`)
	for _, sel := range dlqActions {
		tb.waitFor("no "+sel, hidden(sel))
	}
	page("tasks/"+idle, cancel)
	tb.waitFor("the cancel button", shown(cancel))
	tb.click(cancel)
	tb.click(`#confirm-ok`)
	p.WaitStatus(idle, "CANCELLED")
	tb.open(p.URL + "/")
	tb.waitFor("no pause button", hidden(pause))

	// The admin key: everything.
	setKey("admin-key")
	tb.waitFor("the admin role", `document.documentElement.dataset.role === undefined && `+keyButton+` === 'API key ✓'`)
	tb.waitFor("the pause button", shown(pause))
	page("tasks/"+dead, requeue)
	tb.waitFor("the requeue button", shown(requeue))
	page("tasks?queue=default", `.bulk-pick`)
	tb.waitFor("the bulk actions and checkboxes", shown(`section.bulk`)+` && `+shown(`td.pick`))
	page("workers", `table.workers td.actions`)
	tb.waitFor("worker quiet and stop", shown(`table.workers td.actions`))
	page("dlq?queue=default", row)
	for _, sel := range dlqActions {
		tb.waitFor(sel, shown(sel))
	}
	page("limits", "#new-limit")
	tb.waitFor("New limit and Set a group weight", shown(`#new-limit`)+` && `+shown(`#new-group`))

	// An unknown key is refused at once and forgotten.
	setKey("wrong-key")
	tb.waitFor("the refusal", `[...document.querySelectorAll('#notices .notice-error')].some((n) => n.textContent.includes('does not know that API key'))`)
	tb.waitFor("the key forgotten", keyButton+` === 'API key'`)
	if q := p.Must(http.StatusOK, "GET", "/api/v1/queues/default", ""); q.Body["paused"] != false {
		t.Fatalf("the queue was paused: %v", q.Body)
	}
}

// shown and hidden are the JavaScript conditions "the first element
// matching sel is there and rendered" and "… there and not rendered".
func shown(sel string) string {
	return `((e) => e !== null && getComputedStyle(e).display !== 'none')(document.querySelector(` + js(sel) + `))`
}

func hidden(sel string) string {
	return `((e) => e !== null && getComputedStyle(e).display === 'none')(document.querySelector(` + js(sel) + `))`
}
