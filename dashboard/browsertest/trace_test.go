package browsertest

import (
	"testing"

	"github.com/dtq-dev/dtq/internal/redistest"
)

// A traced task's page shows its trace id: a link to the operator's
// tracing UI when the server has a template (DTQ_TRACE_URL), text when it
// has none; an untraced task's page shows no trace. On `dtq serve` with the
// embedded backend and with real Redis; the traced task succeeded in its
// first run (its trace kept in its packed record).
func TestTaskPageLinksItsTrace(t *testing.T) {
	t.Parallel()
	t.Run("embedded", func(t *testing.T) {
		t.Parallel()
		taskTracePage(t, []string{"DTQ_TRACE_URL=https://jaeger.example/trace/{trace_id}?from=dtq"}, true)
	})
	t.Run("redis", func(t *testing.T) {
		t.Parallel()
		taskTracePage(t, []string{"DTQ_REDIS_URL=redis://" + redistest.Shared(t).Addr, "DTQ_NAMESPACE=" + redistest.Namespace(t)}, false)
	})
}

func taskTracePage(t *testing.T, env []string, linked bool) {
	const (
		traceID     = "4bf92f3577b34da6a3ce929d0e0e4736"
		traceparent = "00-" + traceID + "-00f067aa0ba902b7-01"
	)
	p := start(t, env, "serve", "--addr", "127.0.0.1:0")
	traced := p.Submit(`{"task_type":"echo","payload":1}`, "traceparent", traceparent)
	untraced := p.Submit(`{"task_type":"echo","payload":2}`)
	if got := p.WaitStatus(traced, "SUCCEEDED").Body["trace_id"]; got != traceID {
		t.Fatalf("the traced task's trace_id %v, want %s", got, traceID)
	}
	p.WaitStatus(untraced, "SUCCEEDED")

	tb := newTab(t, 1280, 800)
	tb.open(p.URL + "/#/tasks/" + traced)
	tb.waitFor("the trace id", `((el) => el !== null && el.textContent === `+js(traceID)+`)(document.getElementById('task-trace'))`)
	tag := eval[string](tb, `document.getElementById('task-trace').tagName`)
	href := eval[string](tb, `document.getElementById('task-trace').getAttribute('href') || ''`)
	switch {
	case linked && (tag != "A" || href != "https://jaeger.example/trace/"+traceID+"?from=dtq"):
		tb.fail("the trace id is a %s to %q, want a link to the template with the id", tag, href)
	case !linked && (tag != "SPAN" || href != ""):
		tb.fail("with no template the trace id is a %s to %q, want text", tag, href)
	}
	tb.noScriptRan("Task")

	tb.open(p.URL + "/#/tasks/" + untraced)
	tb.waitFor("the untraced task", mainHas(untraced)+` && `+mainHas("SUCCEEDED"))
	if eval[bool](tb, `document.getElementById('task-trace') !== null`) {
		tb.fail("an untraced task's page shows a trace")
	}
}
