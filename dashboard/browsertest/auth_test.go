package browsertest

import (
	"net/http"
	"testing"
)

// With DTQ_API_KEY set, an admin action from the page without the key asks
// for it and shows the 401 message when none is given, changing nothing;
// a wrong key is refused; the right one makes the action go through and is
// kept for the next action.
func TestAdminActionNeedsKey(t *testing.T) {
	t.Parallel()
	const key = "s3cret-key"
	p := start(t, []string{"DTQ_API_KEY=" + key}, "serve", "--addr", "127.0.0.1:0")
	p.Submit(`{"task_type":"echo"}`, "X-API-Key", key)
	tb := newTab(t, 1280, 800)
	tb.open(p.URL + "/")
	tb.waitFor("the default queue", queueCell("default", 2)+` === 'active'`)
	dialogOpen := `document.getElementById('key-dialog').open`
	reason := `document.getElementById('key-reason').textContent`

	// No key: the dialog explains the 401; declining it shows the message.
	tb.click(`tr[data-queue="default"] button`)
	tb.waitFor("the key dialog", dialogOpen)
	tb.waitFor("the 401 reason", reason+`.includes('401 Unauthorized')`)
	tb.screenshot("api-key")
	tb.click(`#key-cancel`)
	tb.waitFor("the 401 message", `[...document.querySelectorAll('#notices .notice-error')].some((n) => n.textContent.includes('Unauthorized (401)') && n.textContent.includes('API key'))`)
	if q := p.Must(http.StatusOK, "GET", "/api/v1/queues/default", ""); q.Body["paused"] != false {
		t.Fatalf("a refused Pause paused the queue: %v", q)
	}
	tb.screenshot("unauthorized")

	// A wrong key is refused and asked for again; the right one works.
	tb.click(`tr[data-queue="default"] button`)
	tb.waitFor("the key dialog", dialogOpen)
	tb.do(sendKeys(`#key-input`, "wrong-key"))
	tb.click(`#key-save`)
	tb.waitFor("the refused reason", dialogOpen+` && `+reason+`.includes('refused that key')`)
	tb.do(sendKeys(`#key-input`, key))
	tb.click(`#key-save`)
	tb.waitFor("default paused on the page", queueCell("default", 2)+` === 'paused'`)
	if q := p.Must(http.StatusOK, "GET", "/api/v1/queues/default", ""); q.Body["paused"] != true {
		t.Fatalf("Pause with the key: the API says %v", q)
	}
	tb.waitFor("the key marked as set", `document.getElementById('key-button').textContent === 'API key ✓'`)

	// The key is kept for this tab: Resume needs no dialog.
	tb.click(`tr[data-queue="default"] button`)
	tb.waitFor("default active again", queueCell("default", 2)+` === 'active'`)
	if open := eval[bool](tb, dialogOpen); open {
		t.Error("the key dialog opened again although the key was given")
	}
	if q := p.Must(http.StatusOK, "GET", "/api/v1/queues/default", ""); q.Body["paused"] != false {
		t.Fatalf("Resume with the kept key: the API says %v", q)
	}
}
