package dtq

import (
	"context"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// Tracing: a submission's span (the caller's ctx; over HTTP, the request's
// W3C traceparent) is the parent of a "dtq.enqueue <type>" span, whose
// context is stored with the task (its traceparent); the execution of the
// task — by a Go worker or a lease — is a "dtq.run <type>" span whose
// parent is that, and the handler's ctx carries it; recording its outcome
// is a "dtq.finish" span under it. Spans go to Config.TracerProvider, or
// OpenTelemetry's global one (a no-op unless the program sets one: the
// dtq binary does when the OTEL_* environment asks for an exporter).

const tracerName = "github.com/dtq-dev/dtq"

// w3c is the W3C trace context propagation: the traceparent header.
var w3c = propagation.TraceContext{}

// tracer returns the Client's tracer: made once (the global provider's
// follows a provider set later).
func (c *engine) tracer() trace.Tracer {
	c.tracerOnce.Do(func() {
		tp := c.cfg.TracerProvider
		if tp == nil {
			tp = otel.GetTracerProvider()
		}
		c.tr = tp.Tracer(tracerName)
	})
	return c.tr
}

// Span start options, made once.
var (
	producerSpan = []trace.SpanStartOption{trace.WithSpanKind(trace.SpanKindProducer)}
	systemAttr   = attribute.String("messaging.system", "dtq")
)

// traceparentOf returns the W3C traceparent of ctx's span, "" for none.
func traceparentOf(ctx context.Context) string {
	if !trace.SpanContextFromContext(ctx).IsValid() {
		return ""
	}
	carrier := propagation.MapCarrier{}
	w3c.Inject(ctx, carrier)
	return carrier["traceparent"]
}

// traceIDOf returns the trace id of the W3C traceparent tp ("" when tp is
// "" or malformed).
func traceIDOf(tp string) string {
	sc := trace.SpanContextFromContext(withTraceparent(context.Background(), tp))
	if !sc.IsValid() {
		return ""
	}
	return sc.TraceID().String()
}

// withTraceparent returns ctx with the remote span of traceparent tp as
// its parent (ctx when tp is "" or malformed).
func withTraceparent(ctx context.Context, tp string) context.Context {
	if tp == "" {
		return ctx
	}
	return w3c.Extract(ctx, propagation.MapCarrier{"traceparent": tp})
}

// TraceContext returns ctx with the W3C traceparent tp (a header's value)
// as its remote parent span: what the HTTP API does with a request's
// traceparent header before it submits.
func TraceContext(ctx context.Context, tp string) context.Context { return withTraceparent(ctx, tp) }

// startEnqueueSpan starts the span of a submission of taskType to queue.
// (Attributes are set only on a span that records: a submission with no
// tracing costs one no-op span.)
func (c *engine) startEnqueueSpan(ctx context.Context, taskType, queue string) (context.Context, trace.Span) {
	ctx, span := c.tracer().Start(ctx, "dtq.enqueue "+taskType, producerSpan...)
	if span.IsRecording() {
		span.SetAttributes(systemAttr, attribute.String("dtq.queue", queue), attribute.String("dtq.task.type", taskType))
	}
	return ctx, span
}

// tickSpan starts a schedule tick's span: a producer with no parent.
var tickSpan = []trace.SpanStartOption{trace.WithSpanKind(trace.SpanKindProducer), trace.WithNewRoot()}

// traceTick returns the scheduler hook that starts the trace of a task a
// schedule of queue creates: a root "dtq.enqueue <type>" span per tick,
// with the schedule and tick as attributes.
func (c *engine) traceTick(queue string) func(context.Context, string, string, time.Time) (string, func()) {
	return func(ctx context.Context, schedule, taskType string, tick time.Time) (string, func()) {
		ctx, span := c.tracer().Start(ctx, "dtq.enqueue "+taskType, tickSpan...)
		if span.IsRecording() {
			span.SetAttributes(systemAttr, attribute.String("dtq.queue", queue), attribute.String("dtq.task.type", taskType),
				attribute.String("dtq.schedule", schedule), attribute.Int64("dtq.schedule.tick", tick.UnixMilli()))
		}
		return traceparentOf(ctx), func() { span.End() }
	}
}

// endSpan ends span with err's status.
func endSpan(span trace.Span, err error, attrs ...attribute.KeyValue) {
	if len(attrs) > 0 && span.IsRecording() {
		span.SetAttributes(attrs...)
	}
	if err != nil {
		span.SetStatus(codes.Error, err.Error())
	}
	span.End()
}

// startRunSpan starts the span of an execution of t, under the span of its
// submission, at start (zero: now).
func (c *engine) startRunSpan(ctx context.Context, t *Task, start time.Time) (context.Context, trace.Span) {
	opts := []trace.SpanStartOption{trace.WithSpanKind(trace.SpanKindConsumer)}
	if !start.IsZero() {
		opts = append(opts, trace.WithTimestamp(start))
	}
	ctx, span := c.tracer().Start(withTraceparent(ctx, t.TraceParent), "dtq.run "+t.Type, opts...)
	if span.IsRecording() {
		span.SetAttributes(taskAttrs(t)...)
	}
	return ctx, span
}

// endRunSpan ends an execution's span with the status its outcome
// recorded ("" for none: lost).
func endRunSpan(span trace.Span, status, errText string) {
	if !span.IsRecording() {
		span.End()
		return
	}
	span.SetAttributes(attribute.String("dtq.task.status", status))
	switch Status(status) {
	case StatusSucceeded:
		span.SetStatus(codes.Ok, "")
	case "":
		span.SetStatus(codes.Error, "lost: the task was taken over")
	case StatusCancelled:
	default:
		span.SetStatus(codes.Error, errText)
	}
	span.End()
}

func taskAttrs(t *Task) []attribute.KeyValue {
	return []attribute.KeyValue{systemAttr, attribute.String("dtq.task.id", t.ID),
		attribute.String("dtq.queue", t.Queue), attribute.String("dtq.task.type", t.Type), attribute.Int("dtq.task.attempt", t.Attempt),
		attribute.String("dtq.worker", t.Worker)}
}
