package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/dtq-dev/dtq/internal/version"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/exporters/stdout/stdouttrace"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

// The OTLP protocols (OTEL_EXPORTER_OTLP_PROTOCOL): the values of the
// OpenTelemetry specification, all three of which Go's exporters speak.
const (
	protoGRPC     = "grpc"
	protoProtobuf = "http/protobuf"
	protoJSON     = "http/json"
)

// traceExport is what the standard OpenTelemetry environment asks a dtq
// process to export its spans to: nothing (both false), OTLP over
// protocol, the console, or both.
type traceExport struct {
	otlp     bool
	protocol string // protoGRPC, protoProtobuf or protoJSON
	console  bool
}

// traceExportOf reads the export the OTEL_* environment asks for through
// getenv, and the warnings about the values it ignored. As the
// OpenTelemetry specification says of enumerated settings, a value it does
// not recognise is warned about and ignored (values are case-insensitive,
// an empty one is unset):
//
//   - OTEL_SDK_DISABLED=true: nothing.
//   - OTEL_TRACES_EXPORTER: a comma-separated list of otlp, console and
//     none (which wins over the others). Unset, or naming nothing known,
//     it means otlp when OTEL_EXPORTER_OTLP_ENDPOINT or
//     OTEL_EXPORTER_OTLP_TRACES_ENDPOINT is set and none otherwise: unlike
//     the specification's default (otlp to localhost), dtq exports nothing
//     unless asked.
//   - OTEL_EXPORTER_OTLP_TRACES_PROTOCOL, else OTEL_EXPORTER_OTLP_PROTOCOL:
//     grpc, http/protobuf (the default) or http/json.
func traceExportOf(getenv func(string) string) (traceExport, []string) {
	var warn []string
	if strings.EqualFold(strings.TrimSpace(getenv("OTEL_SDK_DISABLED")), "true") {
		return traceExport{}, nil
	}
	var x traceExport
	none, known := false, false
	for _, name := range strings.Split(getenv("OTEL_TRACES_EXPORTER"), ",") {
		switch name = strings.ToLower(strings.TrimSpace(name)); name {
		case "":
		case "otlp":
			x.otlp, known = true, true
		case "console":
			x.console, known = true, true
		case "none":
			none, known = true, true
		default:
			warn = append(warn, fmt.Sprintf("OTEL_TRACES_EXPORTER: unknown exporter %q ignored (dtq knows otlp, console and none)", name))
		}
	}
	switch {
	case none:
		if x.otlp || x.console {
			warn = append(warn, "OTEL_TRACES_EXPORTER: none given with other exporters: nothing is exported")
		}
		return traceExport{}, warn
	case !known:
		x.otlp = getenv("OTEL_EXPORTER_OTLP_ENDPOINT") != "" || getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") != ""
	}
	x.protocol = protoProtobuf
	for _, env := range []string{"OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "OTEL_EXPORTER_OTLP_PROTOCOL"} {
		p := strings.ToLower(strings.TrimSpace(getenv(env)))
		if p == "" {
			continue
		}
		if p == protoGRPC || p == protoProtobuf || p == protoJSON {
			x.protocol = p
			break
		}
		warn = append(warn, fmt.Sprintf("%s: unknown protocol %q ignored (dtq knows grpc, http/protobuf and http/json)", env, p))
	}
	return x, warn
}

// newSpanExporter returns the OTLP exporter of protocol p. Its endpoint,
// headers, TLS, compression and timeout come from the standard
// OTEL_EXPORTER_OTLP_* variables, which the exporters read themselves.
func newSpanExporter(ctx context.Context, p string) (sdktrace.SpanExporter, error) {
	switch p {
	case protoGRPC:
		return otlptracegrpc.New(ctx)
	case protoJSON:
		return otlptracehttp.New(ctx, otlptracehttp.WithEncoding(otlptracehttp.EncodingJSON))
	default:
		return otlptracehttp.New(ctx, otlptracehttp.WithEncoding(otlptracehttp.EncodingProtobuf))
	}
}

// setupTracing returns the tracer provider the OTEL_* environment asks
// for (nil when it asks for none: spans are not recorded) and the shutdown
// that flushes its spans. Spans are batched (OTEL_BSP_* tune it) and
// exported over OTLP, or to the console: out, one JSON object per span. The
// sampler comes from OTEL_TRACES_SAMPLER and OTEL_TRACES_SAMPLER_ARG (the
// SDK reads them), the resource from OTEL_RESOURCE_ATTRIBUTES and
// OTEL_SERVICE_NAME — "dtq" unless they name the service. It logs what it
// exports, and a warning for each value it ignored (traceExportOf).
func setupTracing(ctx context.Context, log *slog.Logger, out io.Writer) (trace.TracerProvider, func(), error) {
	x, warnings := traceExportOf(os.Getenv)
	for _, w := range warnings {
		log.Warn("ignoring an OpenTelemetry setting", "problem", w)
	}
	if !x.otlp && !x.console {
		return nil, func() {}, nil
	}
	res, err := resource.New(ctx,
		resource.WithAttributes(attribute.String("service.name", "dtq"), attribute.String("service.version", version.String())),
		resource.WithTelemetrySDK(), resource.WithFromEnv())
	if err != nil {
		return nil, nil, fmt.Errorf("OpenTelemetry resource (OTEL_RESOURCE_ATTRIBUTES): %w", err)
	}
	opts := []sdktrace.TracerProviderOption{sdktrace.WithResource(res)}
	var to []string
	if x.otlp {
		exp, err := newSpanExporter(ctx, x.protocol)
		if err != nil {
			return nil, nil, fmt.Errorf("OTLP trace exporter (%s): %w", x.protocol, err)
		}
		opts = append(opts, sdktrace.WithBatcher(exp))
		to = append(to, "otlp "+x.protocol)
	}
	if x.console {
		exp, err := stdouttrace.New(stdouttrace.WithWriter(out))
		if err != nil {
			return nil, nil, fmt.Errorf("console trace exporter: %w", err)
		}
		opts = append(opts, sdktrace.WithBatcher(exp))
		to = append(to, "console (standard output)")
	}
	tp := sdktrace.NewTracerProvider(opts...)
	log.Info("exporting traces (the OTEL_* environment)", "exporters", strings.Join(to, ", "))
	return tp, func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := tp.Shutdown(ctx); err != nil {
			log.Warn("flushing traces failed", "error", err)
		}
	}, nil
}
