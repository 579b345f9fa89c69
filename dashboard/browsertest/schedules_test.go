package browsertest

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/dtq-dev/dtq/internal/redistest"
)

// rowCell is the JavaScript text of a table row's cell (1-based column),
// the row found by its data attribute (data-<attr>="key"); "" when the row
// is not there.
func rowCell(attr, key string, col int) string {
	return fmt.Sprintf(`((r) => r ? r.children[%d].textContent.trim() : '')(document.querySelector('tr[data-%s=%q]'))`, col-1, attr, key)
}

// schedCell is the text of a schedule row's cell.
func schedCell(key string, col int) string { return rowCell("schedule", key, col) }

// The schedules page lists a schedule with its next run, shows the task
// its tick fired with that task's status, and pauses and resumes it — on
// `dtq serve` with the embedded backend and with real Redis.
func TestSchedulesPage(t *testing.T) {
	t.Parallel()
	t.Run("embedded", func(t *testing.T) { t.Parallel(); schedulesPage(t, nil) })
	t.Run("redis", func(t *testing.T) {
		t.Parallel()
		schedulesPage(t, []string{"DTQ_REDIS_URL=redis://" + redistest.Shared(t).Addr, "DTQ_NAMESPACE=" + redistest.Namespace(t)})
	})
}

func schedulesPage(t *testing.T, env []string) {
	p := start(t, env, "serve", "--addr", "127.0.0.1:0")
	tb := newTab(t, 1280, 800)
	tb.open(p.URL + "/#/schedules")
	tb.waitFor("the empty state", `document.querySelector('main').textContent.includes('No schedules yet')`)

	p.Must(http.StatusCreated, "PUT", "/api/v1/schedules/default/beat", `{"cron":"@every 1s","task_type":"echo","payload":{"n":1}}`)
	p.Must(http.StatusCreated, "PUT", "/api/v1/schedules/reports/nightly", `{"cron":"30 2 * * *","time_zone":"Europe/Berlin","task_type":"report","paused":true}`)
	tb.waitFor("both schedules", `document.querySelectorAll('table.schedules tbody tr').length === 2`)
	if got := eval[string](tb, schedCell("reports/nightly", 2)); got != "30 2 * * *Europe/Berlin" {
		t.Errorf("nightly's cron cell: %q", got)
	}
	tb.waitFor("nightly paused, no next run", schedCell("reports/nightly", 4)+` === 'paused' && `+schedCell("reports/nightly", 5)+` === '–'`)
	tb.waitFor("beat's tick ran: its task SUCCEEDED", schedCell("default/beat", 6)+`.includes('SUCCEEDED')`)

	tb.click(`tr[data-schedule="default/beat"] button`)
	tb.waitFor("beat paused on the page", schedCell("default/beat", 4)+` === 'paused'`)
	if s := p.Must(http.StatusOK, "GET", "/api/v1/schedules/default/beat", ""); s.Body["paused"] != true {
		t.Fatalf("after Pause the API says %v", s.Body)
	}
	tb.click(`tr[data-schedule="default/beat"] button`)
	tb.waitFor("beat active again with a next run", schedCell("default/beat", 4)+` === 'active' && `+schedCell("default/beat", 5)+` !== '–'`)
	if s := p.Must(http.StatusOK, "GET", "/api/v1/schedules/default/beat", ""); s.Body["paused"] != false {
		t.Fatalf("after Resume the API says %v", s.Body)
	}
	tb.noScriptRan("Schedules")
	// The last task links to its page.
	tb.click(`tr[data-schedule="default/beat"] td:nth-child(6) a`)
	tb.waitFor("the task page of beat's task", `location.hash.startsWith('#/tasks/default-')`)
}
