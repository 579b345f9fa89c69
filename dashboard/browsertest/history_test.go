package browsertest

import (
	"net/http"
	"testing"
	"time"

	"github.com/dtq-dev/dtq/internal/redistest"
)

// The history page shows the stored history: the range's totals, a chart
// per count and percentile, the task types seen, and a queue, type and
// range chosen from its menus (kept in the URL) — on `dtq serve` with the
// embedded backend and with real Redis.
func TestHistoryPage(t *testing.T) {
	t.Parallel()
	t.Run("embedded", func(t *testing.T) { t.Parallel(); historyPage(t, nil) })
	t.Run("redis", func(t *testing.T) {
		t.Parallel()
		historyPage(t, []string{"DTQ_REDIS_URL=redis://" + redistest.Shared(t).Addr, "DTQ_NAMESPACE=" + redistest.Namespace(t)})
	})
}

func historyPage(t *testing.T, env []string) {
	p := start(t, env, "serve", "--addr", "127.0.0.1:0", "--shutdown-timeout", "1s")
	for range 4 {
		p.WaitStatus(p.Submit(`{"task_type":"echo","payload":{"n":1}}`), "SUCCEEDED")
	}
	p.WaitStatus(p.Submit(`{"task_type":"sleep","payload":{"seconds":0.01}}`), "SUCCEEDED")
	// The counts reach Redis within seconds (the server's flush).
	deadline := time.Now().Add(20 * time.Second)
	for {
		r := p.Must(http.StatusOK, "GET", "/api/v1/history?queue=default&last=10m", "")
		n := 0.0
		for _, b := range r.Body["buckets"].([]any) {
			n += b.(map[string]any)["succeeded"].(float64)
		}
		if n == 5 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("history: %v succeeded, want 5: %s", n, r.Raw)
		}
		time.Sleep(200 * time.Millisecond)
	}
	tb := newTab(t, 1280, 900)
	tb.open(p.URL + "/#/history?queue=default")
	tb.waitFor("the totals", `[...document.querySelectorAll('.tile')].some((t) => t.textContent === 'Submitted5')`)
	tb.waitFor("the succeeded count drawn", `document.querySelector('.chart li[data-series="succeeded"]').dataset.peak !== ''`)
	tb.waitFor("a run-time line", `document.querySelectorAll('.chart path.line.s-p50').length === 2`)
	tb.waitFor("the types seen", `[...document.querySelectorAll('#h-type option')].map((o) => o.value).join() === ',echo,sleep'`)
	if got := tb.text(`nav a[aria-current="page"]`); got != "History" {
		t.Errorf("current nav item: %q", got)
	}
	tb.screenshot("history")
	// A type chosen: the URL keeps it, the totals are that type's.
	choose(tb, "#h-type", "sleep")
	tb.waitFor("the type's totals", `location.hash.includes('type=sleep') &&
		[...document.querySelectorAll('.tile')].some((t) => t.textContent === 'Submitted1')`)
	choose(tb, "#h-range", "720h")
	tb.waitFor("30 days of hours", `location.hash.includes('last=720h') && document.querySelector('main p.muted').textContent.includes('per hour')`)
	tb.noScriptRan("History")
}

// choose picks value in the select at sel, as a user's change does.
func choose(tb *tab, sel, value string) {
	tb.t.Helper()
	if !eval[bool](tb, `((s) => { s.value = '`+value+`'; s.dispatchEvent(new Event('change')); return s.value === '`+value+`'; })(document.querySelector('`+sel+`'))`) {
		tb.fail("%s has no option %q", sel, value)
	}
}
