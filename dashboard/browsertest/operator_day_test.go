package browsertest

import (
	"fmt"
	"net/http"
	"net/url"
	"testing"
	"time"
)

// An operator's day from the dashboard alone (issue 35): the failed tasks
// of one type since 09:00 found on the tasks page, their trend on the
// history page, requeued in bulk, a worker quieted and a limit raised —
// on `dtq serve` with the embedded backend and with real Redis.
func TestOperatorsDay(t *testing.T) {
	t.Parallel()
	t.Run("embedded", func(t *testing.T) { t.Parallel(); operatorsDay(t, nil) })
	t.Run("redis", func(t *testing.T) { t.Parallel(); operatorsDay(t, redisEnv(t)) })
}

func operatorsDay(t *testing.T, env []string) {
	p := start(t, env, "serve", "--addr", "127.0.0.1:0", "--shutdown-timeout", "1s")
	var failed []string
	for range 3 {
		failed = append(failed, p.Submit(`{"task_type":"always_fail","payload":{"permanent":true}}`))
	}
	for range 2 {
		p.WaitStatus(p.Submit(`{"task_type":"echo","payload":{}}`), "SUCCEEDED")
	}
	for _, id := range failed {
		p.WaitStatus(id, "DEAD")
	}
	// Since 09:00 today (UTC), or yesterday's before then.
	now := time.Now().UTC()
	since := time.Date(now.Year(), now.Month(), now.Day(), 9, 0, 0, 0, time.UTC)
	if since.After(now) {
		since = since.AddDate(0, 0, -1)
	}
	tb := newTab(t, 1280, 900)

	// 1. The failed tasks of one type since 09:00.
	filter := "#/tasks?queue=default&status=DEAD&type=always_fail&created_after=" + url.QueryEscape(since.Format(time.RFC3339))
	tb.open(p.URL + "/" + filter)
	tb.waitFor("the three dead tasks", `document.querySelectorAll('table.tasks tbody tr').length === 3 &&
		[...document.querySelectorAll('table.tasks tbody tr')].every((r) => r.textContent.includes('always_fail') && r.textContent.includes('DEAD'))`)

	// 2. Their trend: the history of the type (counts reach Redis within
	// seconds; the page is opened once they are there).
	deadline := time.Now().Add(20 * time.Second)
	for {
		r := p.Must(http.StatusOK, "GET", "/api/v1/history?queue=default&type=always_fail&last=10m", "")
		dead := 0.0
		for _, b := range r.Body["buckets"].([]any) {
			dead += b.(map[string]any)["dead"].(float64)
		}
		if dead == 3 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("history: %v dead, want 3", dead)
		}
		time.Sleep(200 * time.Millisecond)
	}
	tb.open(p.URL + "/#/history?queue=default&type=always_fail&last=6h")
	tb.waitFor("the dead in the trend", `[...document.querySelectorAll('.tile')].some((t) => t.textContent === 'Dead3') &&
		document.querySelector('.chart li[data-series="failed"]').dataset.peak === '3'`)

	// 3. Requeued in bulk, from the same filter.
	tb.open(p.URL + "/" + filter)
	tb.waitFor("the three dead tasks again", `document.querySelectorAll('table.tasks tbody tr').length === 3`)
	tb.click(`#bulk-all`)
	tb.click(`#bulk-requeue`)
	tb.waitFor("the confirmation naming the count", `document.getElementById('confirm-dialog').open &&
		document.getElementById('confirm-title').textContent === 'Requeue 3 tasks?'`)
	tb.click(`#confirm-ok`)
	tb.waitFor("the result", `document.getElementById('bulk-result').textContent === 'Requeued 3 of 3 tasks.'`)
	for _, id := range failed {
		p.WaitTask(id, "ran again", func(task map[string]any) bool {
			h, _ := task["history"].([]any)
			return task["status"] == "DEAD" && len(h) == 2
		})
	}

	// 4. A worker quieted.
	row := `table.workers tbody tr:not([data-id^="http:"])`
	tb.open(p.URL + "/#/workers")
	tb.waitFor("the worker running", fmt.Sprintf(`((r) => r !== null && r.querySelector('.worker-state').textContent === 'running')(document.querySelector(%q))`, row))
	tb.click(row + ` button[aria-label^="Quiet"]`)
	tb.waitFor("the confirmation", `document.getElementById('confirm-dialog').open`)
	tb.click(`#confirm-ok`)
	tb.waitFor("the worker quiet", fmt.Sprintf(`((r) => r !== null && r.querySelector('.worker-state').textContent === 'quiet')(document.querySelector(%q))`, row))

	// 5. A limit raised: set at 2, then edited to 10.
	tb.open(p.URL + "/#/limits")
	tb.click(`#new-limit`)
	tb.fill("limit", "queue", "default")
	tb.fill("limit", "max_running", "2")
	tb.submitForm("limit")
	tb.waitFor("the limit's row", limitCell("default", 3)+`.endsWith(' / 2')`)
	tb.click(`tr[data-limit="default"] button[data-edit]`)
	tb.waitFor("the form prefilled", `document.querySelector('dialog[data-form=limit] [name=max_running]').value === '2'`)
	tb.fill("limit", "max_running", "10")
	tb.submitForm("limit")
	tb.waitFor("the limit raised", formClosed("limit")+` && `+limitCell("default", 3)+`.endsWith(' / 10')`)
	if r := p.Must(http.StatusOK, "GET", "/api/v1/limits/default", ""); r.Body["max_running"] != 10.0 {
		t.Errorf("the limit after the edit: %s", r.Raw)
	}
	// Each step is in the audit log.
	r := p.Must(http.StatusOK, "GET", "/api/v1/audit?limit=20", "")
	seen := map[string]bool{}
	for _, e := range r.Body["entries"].([]any) {
		seen[e.(map[string]any)["action"].(string)] = true
	}
	for _, a := range []string{"bulk-requeue", "worker-quiet", "limit-set"} {
		if !seen[a] {
			t.Errorf("audit log without %s: %s", a, r.Raw)
		}
	}
	tb.noScriptRan("")
}
