package browsertest

import (
	"net/http"
	"testing"

	"github.com/dtq-dev/dtq/internal/redistest"
)

// limitCell is the text of a limit row's cell.
func limitCell(queue string, col int) string { return rowCell("limit", queue, col) }

// The limits page lists each limited queue with its leases in use against
// its concurrency limit, its rate and its waiting tasks, and removes a
// queue's limits — on `dtq serve` with the embedded backend and with real
// Redis.
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
	p.Must(http.StatusOK, "PUT", "/api/v1/limits/default", `{"max_running":1}`)
	for range 3 {
		p.Must(http.StatusCreated, "POST", "/api/v1/tasks", `{"task_type":"sleep","payload":{"seconds":120}}`)
	}
	p.Must(http.StatusOK, "PUT", "/api/v1/limits/partner", `{"rate":50,"per_seconds":1,"burst":5}`)
	tb.waitFor("both limits", `document.querySelectorAll('table.limits tbody tr').length === 2`)
	tb.waitFor("default: 1 of 1 in use, 2 waiting", limitCell("default", 2)+` === '1 / 1' && `+limitCell("default", 4)+` === '2'`)
	if got := eval[string](tb, limitCell("partner", 3)); got != "50 per 1 s, bursts of 5" {
		t.Errorf("partner's rate cell: %q", got)
	}
	if got := eval[string](tb, limitCell("partner", 2)); got != "no limit" {
		t.Errorf("partner's concurrency cell: %q", got)
	}

	tb.click(`tr[data-limit="partner"] button`)
	tb.waitFor("partner's row gone", `document.querySelectorAll('table.limits tbody tr').length === 1`)
	if l := p.Must(http.StatusOK, "GET", "/api/v1/limits/partner", ""); l.Body["rate"] != nil {
		t.Fatalf("after Remove the API says %v", l.Body)
	}
	tb.noScriptRan("Limits")
}
