package browsertest

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/dtq-dev/dtq/internal/proctest"
)

// populate gives a `dtq serve` something to show: finished, retried, dead,
// running, scheduled and queued tasks in three queues (emails has no
// worker; reports is paused). It returns a task that died after three
// failed runs.
func populate(t *testing.T, p *proctest.Proc) string {
	t.Helper()
	for i := range 12 {
		p.Submit(fmt.Sprintf(`{"task_type":"send_email","queue":"emails","priority":%d,"payload":{"to":"user%d@example.com"}}`, []int{9, 5, 5, 2}[i%4], i))
	}
	for i := range 3 {
		p.Submit(fmt.Sprintf(`{"task_type":"monthly_report","queue":"reports","payload":{"month":%d}}`, i+1))
	}
	p.Must(http.StatusOK, "POST", "/api/v1/queues/reports/pause", "")
	for i := range 40 {
		// Due over 4 s, so the charts show a few seconds of work.
		p.Submit(fmt.Sprintf(`{"task_type":"echo","payload":{"n":%d},"delay_seconds":%g}`, i, float64(i%8)/2))
	}
	for range 2 {
		p.Submit(`{"task_type":"flaky","payload":{"fail_times":2}}`)
	}
	p.Submit(`{"task_type":"sleep","payload":{"seconds":600}}`)
	p.Submit(`{"task_type":"sleep","payload":{"seconds":600}}`)
	p.Submit(`{"task_type":"echo","payload":{"later":true},"delay_seconds":3600}`)
	cancelled := p.Submit(`{"task_type":"echo","payload":{"later":true},"delay_seconds":3600}`)
	p.Must(http.StatusOK, "POST", "/api/v1/tasks/"+cancelled+"/cancel", "")
	p.Submit(`{"task_type":"always_fail","payload":{"permanent":true}}`)
	dead := p.Submit(`{"task_type":"always_fail","payload":{"order":42},"max_attempts":3}`)
	// Schedules whose ticks do not come during the test.
	p.Must(http.StatusCreated, "PUT", "/api/v1/schedules/reports/monthly-report", `{"cron":"0 6 1 * *","time_zone":"Europe/Berlin","task_type":"monthly_report","missed":"catch_up","catch_up_max":3}`)
	p.Must(http.StatusCreated, "PUT", "/api/v1/schedules/default/cleanup", `{"cron":"0 */6 * * *","task_type":"echo","payload":{"cleanup":true}}`)
	p.Must(http.StatusCreated, "PUT", "/api/v1/schedules/emails/digest", `{"cron":"0 8 * * MON","time_zone":"America/New_York","task_type":"send_email","paused":true}`)
	p.WaitStatus(dead, "DEAD")
	return dead
}

// TestScreenshots takes a screenshot of every page with data in it, at
// 1280×800, on a narrow (390 px) phone screen, and in dark mode; it logs
// where they are. DTQ_UPDATE_DOCS=1 also refreshes the ones
// docs/dashboard.md shows. Each page must render its data first, and no
// page may have anything wider than the screen.
func TestScreenshots(t *testing.T) {
	t.Parallel()
	// Two tasks sleep for 10 minutes: they are handed back at shutdown.
	p := start(t, nil, "serve", "--addr", "127.0.0.1:0", "--shutdown-timeout", "1s")
	tb := newTab(t, 1280, 800)
	tb.open(p.URL + "/")
	tb.waitFor("the live connection", `document.getElementById('conn').textContent === 'live'`)
	dead := populate(t, p)
	// A workflow: a chain of a task, a parallel node of three (one fails)
	// with both callbacks, and a task that the failure skips.
	wf := p.Must(http.StatusCreated, "POST", "/api/v1/workflows", `{"root":{"chain":[
		{"task":{"task_type":"echo","payload":{"url":"https://example.com/a.mp4"}}},
		{"parallel":[{"task":{"task_type":"echo","payload":"720p"}},
			{"chain":[{"task":{"task_type":"echo","payload":"1080p"}},{"task":{"task_type":"echo","payload":"thumbnail"}}]},
			{"task":{"task_type":"always_fail","payload":{"permanent":true}}}],
		 "on_success":{"task":{"task_type":"echo","payload":"publish"}},
		 "on_complete":{"task":{"task_type":"echo","payload":"notify"}}},
		{"task":{"task_type":"echo","payload":"archive"}}]}}`).Str("id")

	p.Must(http.StatusCreated, "POST", "/api/v1/mq/orders/topics/new/messages", `{"data":"order 1","key":"o-1"}`)

	tb.waitFor("40 echo tasks, 2 flaky ones and the workflow's 5 succeeded", `(`+queueCell("default", 8)+`).includes('succeeded 47')`)
	tb.waitFor("the charts", `['submitted', 'succeeded', 'failed', 'p50'].every((k) => document.querySelector('li[data-series=' + k + ']').dataset.peak !== '')`)
	tb.waitFor("the emails queue", queueCell("emails", 3)+` === '12'`)
	tb.waitFor("reports paused", queueCell("reports", 2)+` === 'paused'`)

	// pages are the dashboard's pages, each with a condition that holds
	// once it shows its data.
	pages := []struct{ name, hash, ready string }{
		{"overview", "#/", queueCell("emails", 3) + ` === '12'`},
		{"tasks", "#/tasks?queue=default", `document.querySelectorAll('table.tasks tbody tr').length >= 40`},
		{"task", "#/tasks/" + dead, `document.querySelectorAll('table.attempts tbody tr').length === 3`},
		{"workflow", "#/workflows/" + wf, `document.querySelectorAll('#wf-graph .wf-task').length === 8 && document.getElementById('wf-status').textContent === 'FAILED'`},
		// Two always_fail tasks and the workflow's failed node.
		{"dead-letters", "#/dlq?queue=default", `document.querySelectorAll('table.dlq tbody tr').length === 3`},
		{"workers", "#/workers", `document.querySelectorAll('table.workers tbody tr').length === 1`},
		{"schedules", "#/schedules", `document.querySelectorAll('table.schedules tbody tr').length === 3`},
		// populate's five admin actions and the workflow's submission.
		{"audit", "#/audit", `document.querySelectorAll('table.audit tbody tr').length === 6`},
		// (its counts may not have reached Redis yet: drawn is enough)
		{"history-page", "#/history?queue=default", `document.querySelectorAll('.chart-svg path.line').length >= 4`},
		{"workflows-page", "#/workflows?queue=default", `document.querySelectorAll('table.workflows tbody tr').length === 1`},
		{"messages-page", "#/messages?queue=orders", `document.querySelectorAll('table.topics tbody tr').length === 1`},
	}
	shoot := func(tb *tab, prefix string) {
		for _, pg := range pages {
			tb.open(p.URL + "/" + pg.hash)
			tb.waitFor(pg.name, pg.ready)
			tb.screenshot(prefix + pg.name)
			if prefix == "mobile-" {
				tb.fullScreenshot(prefix + pg.name + "-full")
			}
			tb.noScriptRan("")
			if wide := eval[[]string](tb, overflowJS); len(wide) > 0 {
				t.Errorf("%s%s: wider than the %d px screen: %v", prefix, pg.name, eval[int](tb, `window.innerWidth`), wide)
			}
		}
	}
	shoot(tb, "")

	phone := newTab(t, 390, 844, mobile)
	shoot(phone, "mobile-")

	dark := newTab(t, 1280, 800)
	dark.darkMode()
	shoot(dark, "dark-")
	if bg := eval[string](dark, `getComputedStyle(document.body).backgroundColor`); bg == "rgb(255, 255, 255)" {
		t.Errorf("dark mode: the page background is %s", bg)
	}
}

// overflowJS lists the elements that stick out of the viewport on the
// right (content wider than the screen makes the whole page scroll
// sideways, or is cut off); elements inside a container that scrolls or
// clips on its own are left to it.
const overflowJS = `(() => {
	const out = [];
	const vw = document.documentElement.clientWidth;
	const contained = (el) => {
		for (let a = el.parentElement; a && a !== document.body; a = a.parentElement) {
			if (getComputedStyle(a).overflowX !== 'visible') return true;
		}
		return false;
	};
	for (const el of document.querySelectorAll('body *')) {
		if (el.closest('dialog:not([open])') || contained(el)) continue;
		const r = el.getBoundingClientRect();
		if (r.width > 0 && r.right > vw + 1) out.push(el.tagName.toLowerCase() + (el.id ? '#' + el.id : '') + (el.className && typeof el.className === 'string' ? '.' + el.className.split(' ').join('.') : '') + ' ' + Math.round(r.right));
		if (out.length >= 5) break;
	}
	// On a phone, tables are stacked cards: they must fit without a
	// sideways scroll.
	if (vw <= 760) {
		for (const w of document.querySelectorAll('.table-wrap')) {
			if (w.scrollWidth > w.clientWidth + 1) out.push('.table-wrap scrolls sideways: ' + w.scrollWidth + ' > ' + w.clientWidth);
		}
	}
	return out;
})()`
