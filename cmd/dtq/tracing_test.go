package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
)

// What the OTEL_* environment asks for, and the warnings about the values
// the dtq binary ignores (the specification: warn, then ignore).
func TestTraceExportOf(t *testing.T) {
	t.Parallel()
	var off traceExport
	for _, c := range []struct {
		env  map[string]string
		want traceExport
		warn []string // a substring of each warning, in order
	}{
		{nil, off, nil},
		{map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318"}, traceExport{otlp: true, protocol: protoProtobuf}, nil},
		{map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://c:4318/v1/traces"}, traceExport{otlp: true, protocol: protoProtobuf}, nil},
		{map[string]string{"OTEL_TRACES_EXPORTER": "otlp"}, traceExport{otlp: true, protocol: protoProtobuf}, nil},
		{map[string]string{"OTEL_TRACES_EXPORTER": "otlp", "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"}, traceExport{otlp: true, protocol: protoGRPC}, nil},
		{map[string]string{"OTEL_TRACES_EXPORTER": " OTLP ", "OTEL_EXPORTER_OTLP_PROTOCOL": "GRPC"}, traceExport{otlp: true, protocol: protoGRPC}, nil},
		// the signal's own variable wins over the general one
		{map[string]string{"OTEL_TRACES_EXPORTER": "otlp", "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL": "http/json"},
			traceExport{otlp: true, protocol: protoJSON}, nil},
		{map[string]string{"OTEL_TRACES_EXPORTER": "console"}, traceExport{console: true, protocol: protoProtobuf}, nil},
		{map[string]string{"OTEL_TRACES_EXPORTER": "otlp,console"}, traceExport{otlp: true, console: true, protocol: protoProtobuf}, nil},
		{map[string]string{"OTEL_TRACES_EXPORTER": "none", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318"}, off, nil},
		{map[string]string{"OTEL_SDK_DISABLED": "TRUE", "OTEL_TRACES_EXPORTER": "console"}, off, nil},
		// unknown values: warned about, then ignored
		{map[string]string{"OTEL_TRACES_EXPORTER": "jaeger"}, off, []string{`unknown exporter "jaeger"`}},
		{map[string]string{"OTEL_TRACES_EXPORTER": "zipkin", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318"},
			traceExport{otlp: true, protocol: protoProtobuf}, []string{`unknown exporter "zipkin"`}},
		{map[string]string{"OTEL_TRACES_EXPORTER": "console,bogus"}, traceExport{console: true, protocol: protoProtobuf}, []string{`"bogus"`}},
		{map[string]string{"OTEL_TRACES_EXPORTER": "none,console"}, off, []string{"none given with other exporters"}},
		{map[string]string{"OTEL_TRACES_EXPORTER": "otlp", "OTEL_EXPORTER_OTLP_PROTOCOL": "http"}, traceExport{otlp: true, protocol: protoProtobuf},
			[]string{`OTEL_EXPORTER_OTLP_PROTOCOL: unknown protocol "http"`}},
		{map[string]string{"OTEL_TRACES_EXPORTER": "otlp", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL": "thrift", "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"},
			traceExport{otlp: true, protocol: protoGRPC}, []string{`OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: unknown protocol "thrift"`}},
	} {
		got, warn := traceExportOf(func(k string) string { return c.env[k] })
		if !got.otlp && !got.console {
			got.protocol = "" // not used when nothing is exported
		}
		if got != c.want {
			t.Errorf("%v: %+v, want %+v", c.env, got, c.want)
		}
		if len(warn) != len(c.warn) {
			t.Errorf("%v: warnings %q, want %d", c.env, warn, len(c.warn))
			continue
		}
		for i := range warn {
			if !strings.Contains(warn[i], c.warn[i]) {
				t.Errorf("%v: warning %q does not say %q", c.env, warn[i], c.warn[i])
			}
		}
	}
}

// exportedSpan is what a test collector keeps of a span it received.
type exportedSpan struct {
	name    string
	attrs   map[string]string
	service string // its resource's service.name
}

// collector keeps the spans an OTLP exporter sent it.
type collector struct {
	mu    sync.Mutex
	spans []exportedSpan
}

func (c *collector) add(req *coltracepb.ExportTraceServiceRequest) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, rs := range req.GetResourceSpans() {
		service := ""
		for _, a := range rs.GetResource().GetAttributes() {
			if a.GetKey() == "service.name" {
				service = a.GetValue().GetStringValue()
			}
		}
		for _, ss := range rs.GetScopeSpans() {
			for _, s := range ss.GetSpans() {
				attrs := map[string]string{}
				for _, a := range s.GetAttributes() {
					attrs[a.GetKey()] = fmt.Sprint(a.GetValue().GetStringValue())
				}
				c.spans = append(c.spans, exportedSpan{name: s.GetName(), attrs: attrs, service: service})
			}
		}
	}
}

func (c *collector) all() []exportedSpan {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.spans)
}

// grpcCollector is an OTLP/gRPC trace receiver.
type grpcCollector struct {
	coltracepb.UnimplementedTraceServiceServer
	*collector
}

func (g grpcCollector) Export(_ context.Context, req *coltracepb.ExportTraceServiceRequest) (*coltracepb.ExportTraceServiceResponse, error) {
	g.add(req)
	return &coltracepb.ExportTraceServiceResponse{}, nil
}

// startGRPCCollector serves an OTLP/gRPC trace receiver on a loopback
// port until the test ends; it returns its endpoint URL.
func startGRPCCollector(t *testing.T, c *collector) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := grpc.NewServer()
	coltracepb.RegisterTraceServiceServer(s, grpcCollector{collector: c})
	go s.Serve(ln)
	t.Cleanup(s.Stop)
	return "http://" + ln.Addr().String()
}

// startHTTPCollector serves an OTLP/HTTP trace receiver (POST /v1/traces)
// that takes the media type ctype only, until the test ends; it returns
// its endpoint URL.
func startHTTPCollector(t *testing.T, c *collector, ctype string) string {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if r.Method != http.MethodPost || r.URL.Path != "/v1/traces" || r.Header.Get("Content-Type") != ctype || err != nil {
			t.Errorf("the collector got %s %s (%s), want POST /v1/traces (%s)", r.Method, r.URL.Path, r.Header.Get("Content-Type"), ctype)
			http.Error(w, "unexpected", http.StatusBadRequest)
			return
		}
		req := &coltracepb.ExportTraceServiceRequest{}
		if ctype == "application/json" {
			err = protojson.Unmarshal(body, req)
		} else {
			err = proto.Unmarshal(body, req)
		}
		if err != nil {
			t.Errorf("the collector could not decode the export: %v", err)
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		c.add(req)
		// an empty ExportTraceServiceResponse
		w.Header().Set("Content-Type", ctype)
		if ctype == "application/json" {
			w.Write([]byte("{}"))
		}
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// runTracedTask runs `dtq serve` on the embedded backend with the
// environment the test set, submits an echo task over HTTP and waits for
// it to succeed, then stops the process (which flushes its spans). It
// returns the task's id, the process's standard output and its log.
func runTracedTask(t *testing.T) (id, stdout, log string) {
	t.Helper()
	addr := freeAddr(t)
	stdout, log, err := runWhileOut(t, addr, func() {
		code, body := postJSON(t, "http://"+addr+"/api/v1/tasks", `{"task_type":"echo","payload":{"n":1}}`)
		var task struct{ ID, Status string }
		if err := json.Unmarshal(body, &task); err != nil || code != http.StatusCreated {
			t.Fatalf("submit: %d %s", code, body)
		}
		id = task.ID
		deadline := time.Now().Add(runTimeout)
		for task.Status != "SUCCEEDED" {
			if time.Now().After(deadline) {
				t.Fatalf("task %s is %s after %v", id, task.Status, runTimeout)
			}
			time.Sleep(20 * time.Millisecond)
			res, err := http.Get("http://" + addr + "/api/v1/tasks/" + id)
			if err != nil {
				t.Fatal(err)
			}
			err = json.NewDecoder(res.Body).Decode(&task)
			res.Body.Close()
			if err != nil {
				t.Fatal(err)
			}
		}
	}, "serve", "--addr", addr)
	if err != nil {
		t.Fatalf("dtq serve: %v\n%s", err, log)
	}
	return id, stdout, log
}

// The dtq binary exports a task's spans over each OTLP protocol the
// environment names — to an in-process collector of that protocol — and
// to the console (standard output), with the service the environment
// names. (Not parallel: the OTEL_* variables are the process's.)
func TestTracesExported(t *testing.T) {
	for _, c := range []struct {
		name  string
		env   map[string]string
		start func(*testing.T, *collector) string
	}{
		{"grpc", map[string]string{"OTEL_TRACES_EXPORTER": "otlp", "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"}, startGRPCCollector},
		// no OTEL_TRACES_EXPORTER: the endpoint switches OTLP on
		{"http/protobuf", nil, func(t *testing.T, c *collector) string {
			return startHTTPCollector(t, c, "application/x-protobuf")
		}},
		{"http/json", map[string]string{"OTEL_TRACES_EXPORTER": "otlp", "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc",
			"OTEL_EXPORTER_OTLP_TRACES_PROTOCOL": "http/json"}, func(t *testing.T, c *collector) string {
			return startHTTPCollector(t, c, "application/json")
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			col := &collector{}
			t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", c.start(t, col))
			t.Setenv("OTEL_SERVICE_NAME", "dtq-test")
			for k, v := range c.env {
				t.Setenv(k, v)
			}
			id, _, log := runTracedTask(t)
			var run *exportedSpan
			for _, s := range col.all() {
				if s.name == "dtq.run echo" && s.attrs["dtq.task.id"] == id {
					run = &s
				}
			}
			if run == nil {
				t.Fatalf("the collector got no dtq.run span of task %s: %v\n%s", id, col.all(), log)
			}
			if run.service != "dtq-test" || run.attrs["dtq.task.status"] != "SUCCEEDED" {
				t.Errorf("the run's span: service %q, attributes %v", run.service, run.attrs)
			}
			if !strings.Contains(log, "otlp "+c.name) {
				t.Errorf("the log does not say it exports over %s:\n%s", c.name, log)
			}
		})
	}

	t.Run("console", func(t *testing.T) {
		t.Setenv("OTEL_TRACES_EXPORTER", "Console,bogus")
		t.Setenv("OTEL_RESOURCE_ATTRIBUTES", "service.name=dtq-console,deployment.environment=test")
		id, stdout, log := runTracedTask(t)
		if !strings.Contains(log, `unknown exporter \"bogus\"`) {
			t.Errorf("no warning about the unknown exporter in the log:\n%s", log)
		}
		found := false
		for line := range strings.Lines(stdout) {
			var s struct {
				Name       string
				Attributes []struct {
					Key   string
					Value struct{ Value any }
				}
				Resource []struct {
					Key   string
					Value struct{ Value any }
				}
			}
			if err := json.Unmarshal([]byte(line), &s); err != nil {
				t.Fatalf("a line of standard output is not a span: %q: %v", line, err)
			}
			if s.Name != "dtq.run echo" {
				continue
			}
			ofTask, service := false, ""
			for _, a := range s.Attributes {
				ofTask = ofTask || (a.Key == "dtq.task.id" && a.Value.Value == id)
			}
			for _, a := range s.Resource {
				if a.Key == "service.name" {
					service, _ = a.Value.Value.(string)
				}
			}
			found = found || (ofTask && service == "dtq-console")
		}
		if !found {
			t.Fatalf("no dtq.run span of task %s (service dtq-console) on standard output:\n%s", id, stdout)
		}
	})

	// The SDK's sampler follows OTEL_TRACES_SAMPLER: always_off records
	// nothing.
	t.Run("sampler", func(t *testing.T) {
		t.Setenv("OTEL_TRACES_EXPORTER", "console")
		t.Setenv("OTEL_TRACES_SAMPLER", "always_off")
		if _, stdout, log := runTracedTask(t); stdout != "" {
			t.Fatalf("spans exported with OTEL_TRACES_SAMPLER=always_off:\n%s\n%s", stdout, log)
		}
	})
}

// --trace-url reaches the dashboard's page; a bad one stops the process
// at start, naming the flag.
func TestTraceURLFlag(t *testing.T) {
	t.Parallel()
	addr := freeAddr(t)
	var page string
	log, err := runWhile(t, addr, func() {
		res, err := http.Get("http://" + addr + "/")
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, err := io.ReadAll(res.Body)
		if err != nil {
			t.Fatal(err)
		}
		page = string(b)
	}, "serve", "--addr", addr, "--trace-url", "https://jaeger.example/trace/{trace_id}")
	if err != nil {
		t.Fatalf("dtq serve: %v\n%s", err, log)
	}
	if !strings.Contains(page, `<meta name="dtq-trace-url" content="https://jaeger.example/trace/{trace_id}">`) {
		t.Errorf("the dashboard's page does not carry the trace URL:\n%s", page)
	}

	var out, errOut strings.Builder
	root := newRootCmd(&out, &errOut)
	root.SetArgs([]string{"serve", "--addr", freeAddr(t), "--trace-url", "javascript:alert(1)//{trace_id}"})
	if err := root.ExecuteContext(t.Context()); err == nil || !strings.Contains(err.Error(), "--trace-url") {
		t.Errorf("dtq serve with a javascript: trace URL: %v, want an error naming --trace-url", err)
	}
}
