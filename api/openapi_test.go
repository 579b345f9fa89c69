package api_test

import (
	"bytes"
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/token"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/dtq-dev/dtq"
	"github.com/dtq-dev/dtq/api"
	"github.com/dtq-dev/dtq/api/wire"
	"github.com/dtq-dev/dtq/internal/redisconn"
	"github.com/dtq-dev/dtq/internal/redistest"
)

// TestOpenAPIDocument checks the document on its own: OpenAPI 3.1, every
// $ref resolves, every operation is complete, and the error codes are
// package wire's.
func TestOpenAPIDocument(t *testing.T) {
	t.Parallel()
	s := loadSpec(t)
	if v, _ := s.doc["openapi"].(string); !strings.HasPrefix(v, "3.1") {
		t.Fatalf("openapi is %q, want 3.1.x", v)
	}
	for _, ref := range s.danglingRefs() {
		t.Errorf("$ref %s does not resolve", ref)
	}
	ids := map[string]string{}
	pathParam := regexp.MustCompile(`\{([^}]+)\}`)
	for key, op := range s.operations() {
		id, _ := op["operationId"].(string)
		if id == "" || ids[id] != "" {
			t.Errorf("%s: operationId %q is missing or used twice", key, id)
		}
		ids[id] = key
		if _, ok := op["security"].([]any); !ok {
			t.Errorf("%s: no security requirement (use [] for an open route)", key)
		}
		declared := map[string]bool{}
		params, _ := op["parameters"].([]any)
		for _, p := range params {
			p := s.deref(p)
			if p["in"] == "path" {
				declared[p["name"].(string)] = true
			}
		}
		_, path, _ := strings.Cut(key, " ")
		for _, m := range pathParam.FindAllStringSubmatch(path, -1) {
			if !declared[m[1]] {
				t.Errorf("%s: path parameter %s is not declared", key, m[1])
			}
			delete(declared, m[1])
		}
		for name := range declared {
			t.Errorf("%s: parameter %s is not in the path", key, name)
		}
		responses, _ := op["responses"].(map[string]any)
		if len(responses) == 0 {
			t.Errorf("%s: no responses", key)
		}
		for status := range responses {
			r := s.response(op, status)
			if d, _ := r["description"].(string); d == "" {
				t.Errorf("%s %s: no description", key, status)
			}
			content, _ := r["content"].(map[string]any)
			for media, c := range content {
				if _, ok := c.(map[string]any)["schema"]; !ok {
					t.Errorf("%s %s %s: no schema", key, status, media)
				}
			}
			if n, _ := strconv.Atoi(status); n >= 400 {
				if c, _ := content["application/json"].(map[string]any); c == nil || c["schema"].(map[string]any)["$ref"] != "#/components/schemas/Error" {
					t.Errorf("%s %s: an error answer must be the Error schema", key, status)
				}
			}
		}
	}
	// Object schemas say which properties they allow: the answer checks
	// below rely on it.
	schemas, _ := s.doc["components"].(map[string]any)["schemas"].(map[string]any)
	for name, sc := range schemas {
		sc := sc.(map[string]any)
		if _, ok := sc["properties"]; ok && sc["additionalProperties"] != false {
			t.Errorf("schema %s: additionalProperties must be false", name)
		}
	}
	enum, _ := s.deref(map[string]any{"$ref": "#/components/schemas/ErrorCode"})["enum"].([]any)
	var documented []string
	for _, c := range enum {
		documented = append(documented, c.(string))
	}
	slices.Sort(documented)
	if codes := errorCodes(t); !slices.Equal(codes, documented) {
		t.Errorf("ErrorCode lists %v; package wire's Code constants are %v", documented, codes)
	}
}

// errorCodes returns the values of package wire's Code* constants.
func errorCodes(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob("wire/*.go")
	if err != nil {
		t.Fatal(err)
	}
	var codes []string
	fset := token.NewFileSet()
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			vs, ok := n.(*ast.ValueSpec)
			if !ok {
				return true
			}
			for i, id := range vs.Names {
				if len(id.Name) <= 4 || !strings.HasPrefix(id.Name, "Code") || id.Name[4] < 'A' || id.Name[4] > 'Z' || i >= len(vs.Values) {
					continue
				}
				if lit, ok := vs.Values[i].(*ast.BasicLit); ok && lit.Kind == token.STRING {
					v, _ := strconv.Unquote(lit.Value)
					codes = append(codes, v)
				}
			}
			return true
		})
	}
	slices.Sort(codes)
	return codes
}

// TestOpenAPIRoutes checks that the document's operations are exactly the
// routes the Server registers (besides those it marks as mounted by the
// process), and that the Server serves the document.
func TestOpenAPIRoutes(t *testing.T) {
	t.Parallel()
	s := loadSpec(t)
	b := redistest.Embedded(t)
	c, err := dtq.NewClient(redisconn.Wrap(b.Client), &dtq.Config{Namespace: redistest.Namespace(t)})
	if err != nil {
		t.Fatal(err)
	}
	srv := api.New(c, redisconn.Wrap(b.Client), nil)
	t.Cleanup(srv.Close)

	served := map[string]bool{}
	for _, p := range api.Routes(srv) {
		method, path, ok := strings.Cut(p, " ")
		if !ok || strings.ContainsAny(method, "/{") {
			t.Errorf("route %q has no method", p)
		}
		served[method+" "+path] = true
	}
	documented := map[string]bool{}
	for key, op := range s.operations() {
		if op["x-mounted-by"] == "process" {
			continue
		}
		documented[key] = true
	}
	for key := range served {
		if !documented[key] {
			t.Errorf("the server serves %s, which openapi.json does not document", key)
		}
	}
	for key := range documented {
		if !served[key] {
			t.Errorf("openapi.json documents %s, which the server does not serve", key)
		}
	}
	if len(served) < 20 {
		t.Errorf("only %d routes recorded: %v", len(served), api.Routes(srv))
	}
	if op := s.operations()["GET /metrics"]; op == nil || op["x-mounted-by"] != "process" {
		t.Errorf("GET /metrics must be documented and marked x-mounted-by: process")
	}

	rec := httptest.NewRecorder()
	srv.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/api/v1/openapi.json", nil))
	if rec.Code != http.StatusOK || rec.Header().Get("Content-Type") != "application/json" || !bytes.Equal(rec.Body.Bytes(), s.raw) {
		t.Errorf("GET /api/v1/openapi.json: %d %q, %d bytes (want the %d of openapi.json)",
			rec.Code, rec.Header().Get("Content-Type"), rec.Body.Len(), len(s.raw))
	}
}

// TestOpenAPIGoTypes checks the schemas against the Go types behind them,
// those of package wire: a value with every field set marshals to exactly
// the properties the schema declares, a zero value still has every
// required property, and every object schema has its type.
func TestOpenAPIGoTypes(t *testing.T) {
	t.Parallel()
	s := loadSpec(t)
	types := map[string]any{
		"Submission":            wire.Submission{},
		"BatchRequest":          wire.BatchRequest{},
		"BatchResult":           wire.BatchResult{},
		"BatchItem":             wire.BatchItem{},
		"Task":                  wire.Task{},
		"Execution":             wire.Execution{},
		"TaskProgress":          wire.TaskProgress{},
		"TaskPage":              wire.TaskPage{},
		"Event":                 wire.Event{},
		"Node":                  wire.Node{},
		"WorkflowBody":          wire.WorkflowBody{},
		"Workflow":              wire.Workflow{},
		"WorkflowNode":          wire.WorkflowNode{},
		"WorkflowProgress":      wire.WorkflowProgress{},
		"WorkflowSummary":       wire.WorkflowSummary{},
		"WorkflowPage":          wire.WorkflowPage{},
		"LeaseRequest":          wire.LeaseRequest{},
		"LeaseList":             wire.LeaseList{},
		"Lease":                 wire.Lease{},
		"LeaseExtended":         wire.LeaseExtended{},
		"LeaseCompletion":       wire.LeaseCompletion{},
		"LeaseFailure":          wire.LeaseFailure{},
		"LeaseOutcomes":         wire.LeaseOutcomes{},
		"LeaseOutcome":          wire.LeaseOutcome{},
		"LeaseOutcomesRecorded": wire.LeaseOutcomesRecorded{},
		"LeaseOutcomeRecorded":  wire.LeaseOutcomeRecorded{},
		"LeaseProgress":         wire.LeaseProgress{},
		"MQPut":                 wire.MQPut{},
		"MQPutAnswer":           wire.MQPutAnswer{},
		"MQLeaseRequest":        wire.MQLeaseRequest{},
		"MQLeaseList":           wire.MQLeaseList{},
		"MQLease":               wire.MQLease{},
		"MQSettled":             wire.MQSettled{},
		"MQExtended":            wire.MQExtended{},
		"MQRelease":             wire.MQRelease{},
		"MQNak":                 wire.MQNak{},
		"MQTerm":                wire.MQTerm{},
		"MQTopic":               wire.MQTopic{},
		"MQQueueList":           wire.MQQueueList{},
		"MQTopicList":           wire.MQTopicList{},
		"MQDeadList":            wire.MQDeadList{},
		"MQDead":                wire.MQDead{},
		"DeadLetter":            wire.DeadLetter{},
		"DeadLetterPage":        wire.DeadLetterPage{},
		"DiscardedTask":         wire.DiscardedTask{},
		"DiscardedCount":        wire.DiscardedCount{},
		"RequeuedCount":         wire.RequeuedCount{},
		"RedriveRequest":        wire.RedriveRequest{},
		"RedriveResult":         wire.RedriveResult{},
		"BulkRequest":           wire.BulkRequest{},
		"BulkFilter":            wire.BulkFilter{},
		"BulkResult":            wire.BulkResult{},
		"BulkSkip":              wire.BulkSkip{},
		"QueueStats":            wire.QueueStats{},
		"QueueList":             wire.QueueList{},
		"DeletedQueue":          wire.DeletedQueue{},
		"GroupWeight":           wire.GroupWeight{},
		"GroupList":             wire.GroupList{},
		"GroupRequest":          wire.GroupRequest{},
		"OrderKey":              wire.OrderKey{},
		"OrderKeyList":          wire.OrderKeyList{},
		"OrderKeyLine":          wire.OrderKeyLine{},
		"History":               wire.History{},
		"HistoryBucket":         wire.HistoryBucket{},
		"Percentiles":           wire.Percentiles{},
		"WorkerInfo":            wire.WorkerInfo{},
		"WorkerList":            wire.WorkerList{},
		"WorkerControl":         wire.WorkerControl{},
		"AuditEntry":            wire.AuditEntry{},
		"AuditList":             wire.AuditList{},
		"LimitRequest":          wire.LimitRequest{},
		"Limit":                 wire.Limit{},
		"ScopeLimit":            wire.ScopeLimit{},
		"LimitList":             wire.LimitList{},
		"ScheduleBody":          wire.ScheduleBody{},
		"Schedule":              wire.Schedule{},
		"ScheduleList":          wire.ScheduleList{},
		"ScheduleDeleted":       wire.ScheduleDeleted{},
		"TaskStep":              wire.TaskStep{},
		"Suspension":            wire.Suspension{},
		"Signal":                wire.Signal{},
		"SignalDelivered":       wire.SignalDelivered{},
		"LeaseSleep":            wire.LeaseSleep{},
		"LeaseWaitFor":          wire.LeaseWaitFor{},
		"LeaseWaited":           wire.LeaseWaited{},
		"LeaseChild":            wire.LeaseChild{},
		"LeaseChildEnd":         wire.LeaseChildEnd{},
		"LeaseSteps":            wire.LeaseSteps{},
		"LeaseStep":             wire.LeaseStep{},
		"LeaseStepRecorded":     wire.LeaseStepRecorded{},
		"Error":                 wire.Error{},
		"ErrorDetail":           wire.ErrorDetail{},
		"Whoami":                wire.Whoami{},
		"Health":                wire.Health{},
		"Ready":                 wire.Health{},
	}
	schemas, _ := s.doc["components"].(map[string]any)["schemas"].(map[string]any)
	for name, sc := range schemas {
		if _, object := sc.(map[string]any)["properties"]; object && types[name] == nil {
			t.Errorf("schema %s has no type in package wire", name)
		}
	}
	for name, zero := range types {
		schema := map[string]any{"$ref": "#/components/schemas/" + name}
		if s.deref(schema) == nil {
			t.Errorf("no schema %s", name)
			continue
		}
		full := filled(reflect.TypeOf(zero), 0)
		for _, p := range s.shapeProblems(schema, marshalled(t, full.Addr().Interface()), name) {
			t.Error(p)
		}
		z := marshalled(t, reflect.New(reflect.TypeOf(zero)).Interface())
		req, _ := s.deref(schema)["required"].([]any)
		for _, r := range req {
			if _, ok := z.(map[string]any)[r.(string)]; !ok {
				t.Errorf("%s: %s is required, but a zero %T omits it", name, r, zero)
			}
		}
	}
}

func marshalled(t *testing.T, v any) any {
	t.Helper()
	raw, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	d, err := decode(raw)
	if err != nil {
		t.Fatal(err)
	}
	return d
}
