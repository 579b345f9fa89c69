package dtq_test

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/dtq-dev/dtq"
	"github.com/dtq-dev/dtq/internal/redisconn"
	"github.com/dtq-dev/dtq/internal/redistest"
	"go.opentelemetry.io/otel/propagation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
)

// The tasks of a unique submission and of a workflow's nodes (started by
// the scripts) carry their submission's trace, and their handlers run in
// it; an untraced submission (no provider, no span) stores none.
func TestTraceOfUniqueAndWorkflowTasks(t *testing.T) {
	t.Parallel()
	redistest.ForEachBackend(t, func(t *testing.T, b *redistest.Backend) {
		e, _, tp := tracedEnv(t, b)
		traces := make(chan trace.TraceID, 8)
		nodes := make(chan string, 8)
		e.worker(nil, map[string]dtq.HandlerFunc{
			"node": func(ctx context.Context, t *dtq.Task) (any, error) {
				traces <- trace.SpanContextFromContext(ctx).TraceID()
				nodes <- t.ID
				return nil, nil
			},
		})
		ctx, root := tp.Tracer("test").Start(t.Context(), "caller")
		want := root.SpanContext().TraceID()
		traceOf := func(tp string) trace.TraceID {
			return trace.SpanContextFromContext(propagation.TraceContext{}.Extract(context.Background(),
				propagation.MapCarrier{"traceparent": tp})).TraceID()
		}
		res, err := e.c.Enqueue(ctx, "idle", nil, &dtq.EnqueueOpts{Queue: "parked", Unique: &dtq.UniqueOpts{Key: "u"}})
		if err != nil {
			t.Fatal(err)
		}
		if got, _ := e.c.Get(t.Context(), res.Task.ID); traceOf(got.TraceParent) != want || got.TraceID != want.String() {
			t.Fatalf("the unique task's traceparent %q, trace id %q, want trace %s", got.TraceParent, got.TraceID, want)
		}
		if _, err := e.c.EnqueueWorkflow(ctx, dtq.Chain(dtq.Call("node", nil, nil), dtq.Call("node", nil, nil)), nil); err != nil {
			t.Fatal(err)
		}
		for i := range 2 {
			select {
			case got := <-traces:
				if got != want {
					t.Fatalf("node %d ran in trace %s, want %s", i, got, want)
				}
			case <-time.After(10 * time.Second):
				t.Fatalf("node %d did not run", i)
			}
		}
		// A node that succeeded in its first execution keeps its trace in
		// its packed record (R6, a workflow's task's).
		first := <-nodes
		eventually(t, 10*time.Second, "the first node SUCCEEDED", func() bool {
			got, err := e.c.Get(t.Context(), first)
			return err == nil && got.Status == dtq.StatusSucceeded
		})
		if got, _ := e.c.Get(t.Context(), first); got.TraceID != want.String() {
			t.Fatalf("the succeeded node's trace id %q, want %s", got.TraceID, want)
		}
		// A client with no tracer provider (the global no-op one) and no
		// span in its ctx stores none.
		untraced, err := dtq.NewClient(redisconn.Wrap(b.Client), &dtq.Config{Namespace: b.Namespace})
		if err != nil {
			t.Fatal(err)
		}
		plain, err := untraced.Enqueue(t.Context(), "idle", nil, &dtq.EnqueueOpts{Queue: "parked"})
		if err != nil {
			t.Fatal(err)
		}
		if got, _ := e.c.Get(t.Context(), plain.Task.ID); got.TraceParent != "" || got.TraceID != "" {
			t.Fatalf("an untraced submission's task has traceparent %q, trace id %q", got.TraceParent, got.TraceID)
		}
	})
}

// tracedEnv is an env whose Client records spans in an in-memory
// exporter.
func tracedEnv(t *testing.T, b *redistest.Backend) (*env, *tracetest.InMemoryExporter, *sdktrace.TracerProvider) {
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	t.Cleanup(func() { tp.Shutdown(context.Background()) })
	return newEnv(t, b, &dtq.Config{TracerProvider: tp}), exp, tp
}

// A schedule's tick starts a trace of its own: the task it creates
// carries it, and its execution's span is a child of the tick's
// dtq.enqueue span, which names the schedule.
func TestTraceOfScheduleTicks(t *testing.T) {
	t.Parallel()
	redistest.ForEachBackend(t, func(t *testing.T, b *redistest.Backend) {
		e, exp, _ := tracedEnv(t, b)
		ran := make(chan trace.SpanContext, 8)
		e.worker(nil, map[string]dtq.HandlerFunc{
			"tick": func(ctx context.Context, _ *dtq.Task) (any, error) {
				ran <- trace.SpanContextFromContext(ctx)
				return nil, nil
			},
		})
		if _, err := e.a.UpsertSchedule(t.Context(), dtq.Schedule{Name: "every", Cron: "@every 1s", TaskType: "tick"}); err != nil {
			t.Fatal(err)
		}
		var run trace.SpanContext
		select {
		case run = <-ran:
		case <-time.After(10 * time.Second):
			t.Fatal("no tick ran")
		}
		if !run.IsValid() {
			t.Fatal("the tick's task ran outside any trace")
		}
		// The scheduler ends its span after the enqueue returns: the task
		// can run first.
		var enqueue *tracetest.SpanStub
		eventually(t, 5*time.Second, "the tick's dtq.enqueue span exported", func() bool {
			for _, s := range exp.GetSpans() {
				if s.Name == "dtq.enqueue tick" && s.SpanContext.TraceID() == run.TraceID() {
					enqueue = &s
				}
			}
			return enqueue != nil
		})
		if enqueue == nil || enqueue.Parent.IsValid() {
			t.Fatalf("no root dtq.enqueue span of the tick in trace %s: %v", run.TraceID(), exp.GetSpans().Snapshots())
		}
		named := false
		for _, a := range enqueue.Attributes {
			named = named || (a.Key == "dtq.schedule" && a.Value.AsString() == "every")
		}
		if !named {
			t.Fatalf("the tick's span does not name its schedule: %v", enqueue.Attributes)
		}
	})
}

// The worker's log lines about a task carry its trace: trace_id, and
// span_id — its execution's dtq.run span — when the worker's client records
// spans; trace_id alone when it does not (the task's, from its
// submission); neither for an untraced task.
func TestTaskLogLinesCarryTheTrace(t *testing.T) {
	t.Parallel()
	redistest.ForEachBackend(t, func(t *testing.T, b *redistest.Backend) {
		exp := tracetest.NewInMemoryExporter()
		tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
		t.Cleanup(func() { tp.Shutdown(context.Background()) })
		doomed := func(context.Context, *dtq.Task) (any, error) { return nil, errors.New("no") }
		// lineOf waits for the log line saying task id is dead (or msg).
		lineOf := func(buf *syncBuffer, id string, msg ...string) map[string]any {
			want := "task failed for good: it is dead"
			if len(msg) > 0 {
				want = msg[0]
			}
			var line map[string]any
			eventually(t, 10*time.Second, "the log line "+want+" of task "+id, func() bool {
				for l := range strings.Lines(buf.String()) {
					var m map[string]any
					if err := json.Unmarshal([]byte(l), &m); err != nil {
						t.Fatalf("log line %q: %v", l, err)
					}
					if m["task_id"] == id && m["msg"] == want {
						line = m
					}
				}
				return line != nil
			})
			return line
		}
		ctx, root := tp.Tracer("test").Start(t.Context(), "caller")
		defer root.End()

		// A worker whose client records spans (its debug line of the
		// task's start too).
		var recBuf syncBuffer
		recB, plainB := *b, *b
		recB.Namespace, plainB.Namespace = b.Namespace+"-rec", b.Namespace+"-plain"
		rec := newEnv(t, &recB,
			&dtq.Config{TracerProvider: tp, Logger: slog.New(slog.NewJSONHandler(&recBuf, &slog.HandlerOptions{Level: slog.LevelDebug}))})
		rec.worker(fast(dtq.WorkerConfig{}), map[string]dtq.HandlerFunc{"doomed": doomed})
		res, err := rec.c.Enqueue(ctx, "doomed", nil, &dtq.EnqueueOpts{MaxAttempts: 1})
		if err != nil {
			t.Fatal(err)
		}
		line := lineOf(&recBuf, res.Task.ID)
		var run tracetest.SpanStub
		for _, s := range exp.GetSpans() {
			if s.Name == "dtq.run doomed" {
				run = s
			}
		}
		if line["trace_id"] != root.SpanContext().TraceID().String() || line["span_id"] != run.SpanContext.SpanID().String() {
			t.Errorf("the log line %v, want trace_id %s, span_id %s (the dtq.run span's)", line, root.SpanContext().TraceID(), run.SpanContext.SpanID())
		}
		if start := lineOf(&recBuf, res.Task.ID, "task started"); start["trace_id"] != line["trace_id"] || start["span_id"] != line["span_id"] {
			t.Errorf("the task's start line %v", start)
		}

		// A worker whose client records nothing runs a task a traced
		// client submitted, and an untraced one.
		var plainBuf syncBuffer
		plain := newEnv(t, &plainB,
			&dtq.Config{Logger: slog.New(slog.NewJSONHandler(&plainBuf, nil))})
		plain.worker(fast(dtq.WorkerConfig{}), map[string]dtq.HandlerFunc{"doomed": doomed})
		submitter, err := dtq.NewClient(redisconn.Wrap(b.Client), &dtq.Config{Namespace: plainB.Namespace, TracerProvider: tp})
		if err != nil {
			t.Fatal(err)
		}
		traced, err := submitter.Enqueue(ctx, "doomed", nil, &dtq.EnqueueOpts{MaxAttempts: 1})
		if err != nil {
			t.Fatal(err)
		}
		untraced := plain.enqueue("doomed", nil, &dtq.EnqueueOpts{MaxAttempts: 1})
		if line := lineOf(&plainBuf, traced.Task.ID); line["trace_id"] != traced.Task.TraceID || traced.Task.TraceID == "" || line["span_id"] != nil {
			t.Errorf("the log line %v, want trace_id %q and no span_id", line, traced.Task.TraceID)
		}
		if line := lineOf(&plainBuf, untraced.ID); line["trace_id"] != nil || line["span_id"] != nil {
			t.Errorf("an untraced task's log line %v", line)
		}
	})
}
