package main

import (
	"context"
	"log/slog"
	"os"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// otlpWanted reports whether the standard OpenTelemetry environment asks
// for traces to be exported over OTLP: an endpoint is set, or
// OTEL_TRACES_EXPORTER is "otlp". Off by default.
func otlpWanted() bool {
	switch os.Getenv("OTEL_TRACES_EXPORTER") {
	case "otlp":
		return true
	case "none":
		return false
	}
	return os.Getenv("OTEL_EXPORTER_OTLP_ENDPOINT") != "" || os.Getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") != ""
}

// setupTracing installs an OTLP/HTTP span exporter as OpenTelemetry's
// global tracer provider when the environment asks for one (its
// endpoint, headers, timeouts and sampling come from the standard
// OTEL_* variables; the service is named "dtq" unless OTEL_SERVICE_NAME
// says otherwise). It returns the shutdown that flushes the spans.
func setupTracing(ctx context.Context, log *slog.Logger) (func(), error) {
	if !otlpWanted() {
		return func() {}, nil
	}
	exp, err := otlptracehttp.New(ctx)
	if err != nil {
		return nil, err
	}
	res, err := resource.Merge(resource.NewSchemaless(attribute.String("service.name", "dtq")), resource.Environment())
	if err != nil {
		return nil, err
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res))
	otel.SetTracerProvider(tp)
	log.Info("exporting traces over OTLP/HTTP (the OTEL_* environment)")
	return func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := tp.Shutdown(ctx); err != nil {
			log.Warn("flushing traces failed", "error", err)
		}
	}, nil
}
