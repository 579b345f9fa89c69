package browsertest

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/dtq-dev/dtq/internal/redistest"
)

// fill sets the field name of the open form dialog form to value (a
// checkbox: "true" or "false") and returns the JavaScript that does it.
func (tb *tab) fill(form, name, value string) {
	tb.t.Helper()
	tb.waitFor("form "+form+" open", fmt.Sprintf(`document.querySelector('dialog[data-form=%q][open]') !== null`, form))
	eval[bool](tb, fmt.Sprintf(`((el) => { if (el.type === 'checkbox') el.checked = %[3]q === 'true'; else el.value = %[3]q; return true; })(
		document.querySelector('dialog[data-form=%[1]q] [name=%[2]q]'))`, form, name, value))
}

// submitForm submits the open form dialog form.
func (tb *tab) submitForm(form string) {
	tb.t.Helper()
	tb.click(fmt.Sprintf(`dialog[data-form=%q] button[type=submit]`, form))
}

// fieldError is the JavaScript text of the message under field name of
// form dialog form ("" when hidden or none).
func fieldError(form, name string) string {
	return fmt.Sprintf(`((e) => e && !e.hidden ? e.textContent : '')(document.querySelector('dialog[data-form=%q] [data-field=%q] .field-error'))`, form, name)
}

// formClosed is the JavaScript condition that form dialog form is gone.
func formClosed(form string) string {
	return fmt.Sprintf(`document.querySelector('dialog[data-form=%q]') === null`, form)
}

// Limits, schedules and group weights are created and edited from the
// dashboard: the form sends what the API takes, shows the API's 400
// message under the field it names, and prefills an edit from the current
// value — on `dtq serve` with the embedded backend and with real Redis.
func TestEditForms(t *testing.T) {
	t.Parallel()
	t.Run("embedded", func(t *testing.T) { t.Parallel(); editForms(t, nil) })
	t.Run("redis", func(t *testing.T) {
		t.Parallel()
		editForms(t, []string{"DTQ_REDIS_URL=redis://" + redistest.Shared(t).Addr, "DTQ_NAMESPACE=" + redistest.Namespace(t)})
	})
}

func editForms(t *testing.T, env []string) {
	p := start(t, env, "serve", "--addr", "127.0.0.1:0")
	tb := newTab(t, 1280, 900)

	// A limit: refused, then created, then edited.
	tb.open(p.URL + "/#/limits")
	tb.waitFor("the empty state", `document.querySelector('main').textContent.includes('No limits')`)
	tb.click(`#new-limit`)
	tb.fill("limit", "queue", "default")
	tb.fill("limit", "max_running", "-1")
	tb.submitForm("limit")
	tb.waitFor("the API's message under max_running", fieldError("limit", "max_running")+`.startsWith('max_running must be at least 1')`)
	tb.screenshot("limit-form")
	tb.fill("limit", "max_running", "abc")
	tb.submitForm("limit")
	tb.waitFor("a number asked for", fieldError("limit", "max_running")+`.startsWith('max_running must be a number')`)
	tb.fill("limit", "max_running", "3")
	tb.fill("limit", "rate", "10")
	tb.fill("limit", "per_seconds", "2")
	tb.submitForm("limit")
	tb.waitFor("the form closed", formClosed("limit"))
	tb.waitFor("the new limit's row", limitCell("default", 3)+`.endsWith(' / 3') && `+limitCell("default", 4)+` === '10 per 2 s'`)

	tb.click(`tr[data-limit="default"] button[data-edit]`)
	tb.waitFor("the form prefilled", `document.querySelector('dialog[data-form=limit] [name=max_running]').value === '3' && `+
		`document.querySelector('dialog[data-form=limit] [name=queue]').readOnly`)
	tb.fill("limit", "max_running", "4")
	tb.fill("limit", "rate", "")
	tb.submitForm("limit")
	tb.waitFor("the API's message under rate", fieldError("limit", "rate")+` === 'rate is required with per_seconds and burst'`)
	tb.fill("limit", "per_seconds", "")
	tb.submitForm("limit")
	tb.waitFor("the edited row", limitCell("default", 3)+`.endsWith(' / 4') && `+limitCell("default", 4)+` === 'no limit'`)
	if l := p.Must(http.StatusOK, "GET", "/api/v1/limits/default", ""); l.Body["max_running"] != 4.0 || l.Body["rate"] != nil {
		t.Fatalf("after the edit the API says %v", l.Body)
	}

	// A task type's limit with its on_full rule.
	tb.click(`#new-limit`)
	tb.fill("limit", "queue", "default")
	tb.fill("limit", "scope", "type")
	tb.submitForm("limit")
	tb.waitFor("a name asked for", fieldError("limit", "name")+`.startsWith('name is required')`)
	tb.fill("limit", "name", "resize")
	tb.fill("limit", "max_running", "2")
	tb.fill("limit", "on_full", "cancel_newest")
	tb.submitForm("limit")
	tb.waitFor("the type's row", limitCell("default type resize", 3)+`.includes(' / 2') && `+limitCell("default type resize", 3)+`.includes('cancel newest')`)

	// A group weight: set, refused, edited.
	tb.click(`#new-group`)
	tb.fill("group", "queue", "default")
	tb.fill("group", "group", "acme")
	tb.fill("group", "weight", "2")
	tb.submitForm("group")
	tb.waitFor("acme's row", rowCell("group", "default acme", 3)+` === '2'`)
	tb.click(`tr[data-group="default acme"] button[data-edit]`)
	tb.waitFor("the weight prefilled", `document.querySelector('dialog[data-form=group] [name=weight]').value === '2'`)
	tb.fill("group", "weight", "0")
	tb.submitForm("group")
	tb.waitFor("the API's message under weight", fieldError("group", "weight")+`.startsWith('weight must be from 1')`)
	tb.fill("group", "weight", "7")
	tb.submitForm("group")
	tb.waitFor("the edited weight", rowCell("group", "default acme", 3)+` === '7'`)
	if g := p.Must(http.StatusOK, "GET", "/api/v1/queues/default/groups", ""); fmt.Sprint(g.Body["groups"]) != "[map[group:acme waiting:0 weight:7]]" {
		t.Fatalf("after the edit the API says %v", g.Body)
	}

	// A schedule: a bad cron refused with the API's message, then created,
	// then edited.
	tb.open(p.URL + "/#/schedules")
	tb.waitFor("the empty state", `document.querySelector('main').textContent.includes('No schedules yet')`)
	tb.click(`#new-schedule`)
	tb.fill("schedule", "name", "nightly")
	tb.fill("schedule", "cron", "bad cron")
	tb.fill("schedule", "task_type", "report")
	tb.fill("schedule", "payload", `{"kind": "daily"}`)
	tb.submitForm("schedule")
	tb.waitFor("the API's message under cron", fieldError("schedule", "cron")+`.includes('expected 5 to 6 fields')`)
	tb.screenshot("schedule-form")
	tb.fill("schedule", "cron", "30 2 * * *")
	tb.fill("schedule", "payload", `{bad`)
	tb.submitForm("schedule")
	tb.waitFor("JSON asked for", fieldError("schedule", "payload")+`.startsWith('payload must be JSON')`)
	tb.fill("schedule", "payload", `{"kind": "daily"}`)
	tb.fill("schedule", "time_zone", "Europe/Berlin")
	tb.fill("schedule", "priority", "7")
	tb.submitForm("schedule")
	tb.waitFor("the form closed", formClosed("schedule"))
	tb.waitFor("the new schedule's row", schedCell("default/nightly", 2)+` === '30 2 * * *Europe/Berlin' && `+schedCell("default/nightly", 3)+` === 'report'`)
	s := p.Must(http.StatusOK, "GET", "/api/v1/schedules/default/nightly", "")
	if s.Body["priority"] != 7.0 || fmt.Sprint(s.Body["payload"]) != "map[kind:daily]" {
		t.Fatalf("the created schedule: %v", s.Body)
	}

	tb.click(`tr[data-schedule="default/nightly"] button[data-edit]`)
	tb.waitFor("the form prefilled", `document.querySelector('dialog[data-form=schedule] [name=cron]').value === '30 2 * * *' && `+
		`document.querySelector('dialog[data-form=schedule] [name=payload]').value === '{"kind":"daily"}'`)
	tb.fill("schedule", "cron", "0 4 * * *")
	tb.fill("schedule", "paused", "true")
	tb.submitForm("schedule")
	tb.waitFor("the edited row", schedCell("default/nightly", 2)+` === '0 4 * * *Europe/Berlin' && `+schedCell("default/nightly", 4)+` === 'paused'`)
	if s := p.Must(http.StatusOK, "GET", "/api/v1/schedules/default/nightly", ""); s.Body["priority"] != 7.0 || s.Body["paused"] != true {
		t.Fatalf("the edited schedule: %v", s.Body)
	}
	tb.noScriptRan("Schedules")
}
