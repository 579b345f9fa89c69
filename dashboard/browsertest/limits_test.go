package browsertest

import (
	"net/http"
	"testing"

	"github.com/dtq-dev/dtq/internal/redistest"
)

// limitCell is the text of a limit row's cell.
func limitCell(queue string, col int) string { return rowCell("limit", queue, col) }

// The limits page lists each limit — a queue's, a task type's in it — with
// its leases in use against its concurrency limit, its rate and its
// waiting tasks, and removes one — on `dtq serve` with the embedded backend
// and with real Redis.
func TestLimitsPage(t *testing.T) {
	t.Parallel()
	t.Run("embedded", func(t *testing.T) { t.Parallel(); limitsPage(t, nil) })
	t.Run("redis", func(t *testing.T) {
		t.Parallel()
		limitsPage(t, []string{"DTQ_REDIS_URL=redis://" + redistest.Shared(t).Addr, "DTQ_NAMESPACE=" + redistest.Namespace(t)})
	})
}

func limitsPage(t *testing.T, env []string) {
	// The tasks below sleep far longer than the page's 5 s refresh; they are
	// cancelled at the stop.
	p := start(t, env, "serve", "--addr", "127.0.0.1:0", "--shutdown-timeout", "1s")
	tb := newTab(t, 1280, 800)
	tb.open(p.URL + "/#/limits")
	tb.waitFor("the empty state", `document.querySelector('main').textContent.includes('No limits')`)

	// One task that runs for a while holds the only slot; two more wait.
	// The type's limit has room: its row shows the running one.
	p.Must(http.StatusOK, "PUT", "/api/v1/limits/default/types/sleep", `{"max_running":5}`)
	p.Must(http.StatusOK, "PUT", "/api/v1/limits/default", `{"max_running":1}`)
	for range 3 {
		p.Must(http.StatusCreated, "POST", "/api/v1/tasks", `{"task_type":"sleep","payload":{"seconds":120}}`)
	}
	p.Must(http.StatusOK, "PUT", "/api/v1/limits/partner", `{"rate":50,"per_seconds":1,"burst":5}`)
	tb.waitFor("the three limits", `document.querySelectorAll('table.limits tbody tr').length === 3`)
	tb.waitFor("default: 1 of 1 in use, 2 waiting", limitCell("default", 3)+` === '1 / 1' && `+limitCell("default", 5)+` === '2'`)
	tb.waitFor("type sleep: 1 of 5 in use", limitCell("default type sleep", 3)+` === '1 / 5' && `+limitCell("default type sleep", 5)+` === '0'`)
	if got := eval[string](tb, limitCell("default type sleep", 2)); got != "type sleep" {
		t.Errorf("the type's row says it limits %q", got)
	}
	if got := eval[string](tb, limitCell("partner", 4)); got != "50 per 1 s, bursts of 5" {
		t.Errorf("partner's rate cell: %q", got)
	}
	if got := eval[string](tb, limitCell("partner", 3)); got != "no limit" {
		t.Errorf("partner's concurrency cell: %q", got)
	}

	tb.click(`tr[data-limit="default type sleep"] button`)
	tb.waitFor("the type's row gone", `document.querySelectorAll('table.limits tbody tr').length === 2`)
	if l := p.Must(http.StatusOK, "GET", "/api/v1/limits/default", ""); l.Body["scopes"] != nil || l.Body["max_running"] != 1.0 {
		t.Fatalf("after Remove of the type's limits the API says %v", l.Body)
	}

	tb.click(`tr[data-limit="partner"] button`)
	tb.waitFor("partner's row gone", `document.querySelectorAll('table.limits tbody tr').length === 1`)
	if l := p.Must(http.StatusOK, "GET", "/api/v1/limits/partner", ""); l.Body["rate"] != nil {
		t.Fatalf("after Remove the API says %v", l.Body)
	}
	tb.noScriptRan("Limits")
}
