package api_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/dtq-dev/dtq"
	"github.com/dtq-dev/dtq/internal/redistest"
	"go.opentelemetry.io/otel/propagation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
)

// One trace from an HTTP submit (its traceparent header) through a Go
// handler, whose ctx carries the run's span, and through a worker over
// HTTP (a lease: the task carries its traceparent, its execution is a
// span under it), exported in memory.
func TestTraceAcrossTheHop(t *testing.T) {
	redistest.ForEachBackend(t, func(t *testing.T, b *redistest.Backend) {
		exp := tracetest.NewInMemoryExporter()
		tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
		t.Cleanup(func() { tp.Shutdown(context.Background()) })
		handlerSpan := make(chan trace.SpanContext, 1)
		e := newEnv(t, b, &opts{engine: dtq.Config{TracerProvider: tp}, noWorker: true})
		w, err := dtq.NewWorker(e.c, nil)
		if err != nil {
			t.Fatal(err)
		}
		w.Handle("traced", func(ctx context.Context, _ *dtq.Task) (any, error) {
			handlerSpan <- trace.SpanContextFromContext(ctx)
			return nil, nil
		})
		if err := w.Start(context.Background()); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { w.Stop(context.Background()) })

		// the caller's span, sent as a traceparent header
		ctx, root := tp.Tracer("caller").Start(context.Background(), "checkout")
		hdr := http.Header{}
		propagation.TraceContext{}.Inject(ctx, propagation.HeaderCarrier(hdr))
		traceID := root.SpanContext().TraceID()

		id := e.must(http.StatusCreated, "POST", "/api/v1/tasks", `{"task_type":"traced"}`, "traceparent", hdr.Get("traceparent")).str("id")
		var hs trace.SpanContext
		select {
		case hs = <-handlerSpan:
		case <-time.After(10 * time.Second):
			t.Fatal("the handler did not run")
		}
		if hs.TraceID() != traceID {
			t.Fatalf("the handler's span is of trace %s, want %s", hs.TraceID(), traceID)
		}
		e.waitStatus(id, "SUCCEEDED")
		// the task's answer names its trace, as a tracing UI finds it
		if got := e.must(http.StatusOK, "GET", "/api/v1/tasks/"+id, "").str("trace_id"); got != traceID.String() {
			t.Errorf("GET the task: trace_id %q, want %s", got, traceID)
		}

		remote := e.must(http.StatusCreated, "POST", "/api/v1/tasks", `{"task_type":"py","queue":"remote"}`, "traceparent",
			hdr.Get("traceparent")).str("id")
		r := e.must(http.StatusOK, "POST", "/api/v1/leases", `{"worker":"py-1","queues":["remote"]}`)
		lease := r.body["leases"].([]any)[0].(map[string]any)
		task := lease["task"].(map[string]any)
		sc := trace.SpanContextFromContext(propagation.TraceContext{}.Extract(context.Background(),
			propagation.MapCarrier{"traceparent": task["traceparent"].(string)}))
		if task["id"] != remote || sc.TraceID() != traceID {
			t.Fatalf("the leased task's traceparent %v is not of trace %s", task["traceparent"], traceID)
		}
		e.must(http.StatusOK, "POST", "/api/v1/leases/"+lease["lease"].(string)+"/complete", `{"result":1}`)
		root.End()

		byName := map[string][]tracetest.SpanStub{}
		for _, s := range exp.GetSpans() {
			if s.SpanContext.TraceID() != traceID {
				t.Errorf("span %s is of another trace", s.Name)
			}
			byName[s.Name] = append(byName[s.Name], s)
		}
		for _, name := range []string{"checkout", "dtq.enqueue traced", "dtq.run traced", "dtq.finish", "dtq.enqueue py", "dtq.run py"} {
			if len(byName[name]) != 1 {
				t.Fatalf("spans named %q: %d (all: %v)", name, len(byName[name]), names(exp.GetSpans()))
			}
		}
		parent := func(child, of string) {
			if byName[child][0].Parent.SpanID() != byName[of][0].SpanContext.SpanID() {
				t.Errorf("%s is not a child of %s", child, of)
			}
		}
		parent("dtq.enqueue traced", "checkout")
		parent("dtq.run traced", "dtq.enqueue traced")
		parent("dtq.finish", "dtq.run traced")
		parent("dtq.enqueue py", "checkout")
		parent("dtq.run py", "dtq.enqueue py")
		if hs.SpanID() != byName["dtq.run traced"][0].SpanContext.SpanID() {
			t.Error("the handler's ctx does not carry the run's span")
		}
		run := byName["dtq.run py"][0]
		attrs := map[string]string{}
		for _, a := range run.Attributes {
			attrs[string(a.Key)] = a.Value.String()
		}
		if attrs["dtq.task.id"] != remote || attrs["dtq.worker"] != "http:py-1" || attrs["dtq.task.status"] != "SUCCEEDED" ||
			!run.StartTime.Before(run.EndTime) {
			t.Errorf("the lease's run span: %v, %v to %v", attrs, run.StartTime, run.EndTime)
		}
	})
}

func names(spans tracetest.SpanStubs) []string {
	var out []string
	for _, s := range spans {
		out = append(out, s.Name)
	}
	return out
}
