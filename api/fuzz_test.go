package api_test

import (
	"bytes"
	"encoding/json"
	"math/big"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/dtq-dev/dtq"
	"github.com/dtq-dev/dtq/api"
	"github.com/dtq-dev/dtq/internal/redisconn"
	"github.com/dtq-dev/dtq/internal/redistest"
)

// FuzzSubmit posts arbitrary bodies, content types and idempotency keys to
// POST /api/v1/tasks on the embedded backend. Whatever it sends, the answer
// is never a 5xx, always one JSON value of the documented shape for its
// status, and a created task carries the submitted payload. The seeds run
// as a test in every `go test`; `make fuzz` explores from them.
//
// The fields of the Content-Type argument: "" sends application/json, "-"
// sends none, anything else is sent as is.
func FuzzSubmit(f *testing.F) {
	for _, body := range []string{
		// Valid.
		`{"task_type":"echo"}`,
		`{"task_type":"echo","payload":{"n":1,"s":["a","é"],"t":true,"z":null}}`,
		`{"task_type":"resize","payload":[1,2.5,-3e2],"queue":"img","priority":0,"delay_seconds":0.5,"max_attempts":1000,"timeout_seconds":0.001}`,
		`{"task_type":"echo","payload":"<script>\u2028</script>","priority":9,"max_attempts":1,"timeout_seconds":604800,"delay_seconds":31536000}`,
		`{"task_type":"echo","payload":null,"queue":null,"priority":null,"delay_seconds":null,"max_attempts":null,"timeout_seconds":null}`,
		`{"task_type":"echo","payload":12345678901234567890123456789e-5}`,
		`{"task_type":"echo","payload":"\ud800\udc00 \u0000"}`,
		`  {"payload":{"a":{"b":{"c":[[[]]]}}},"task_type":"x"}  `,
		// Malformed.
		`{"task_type":`,
		`{"task_type":"echo",}`,
		`{task_type:"echo"}`,
		`{"task_type":"echo"`,
		`[1,2]`,
		`"echo"`,
		`null`,
		// Wrong types.
		`{"task_type":5}`,
		`{"task_type":"echo","priority":"high"}`,
		`{"task_type":"echo","priority":1.5}`,
		`{"task_type":"echo","queue":7}`,
		`{"task_type":"echo","max_attempts":true}`,
		`{"task_type":"echo","delay_seconds":[1]}`,
		`{"task_type":"echo","timeout_seconds":{"s":1}}`,
		`{"task_type":"echo","priority":"ééééééééééééééééééééééééééééé"}`,
		// Out of range, invalid values.
		`{"task_type":""}`,
		`{"task_type":"a\u0001b"}`,
		`{"task_type":"echo","priority":-1}`,
		`{"task_type":"echo","delay_seconds":-0.001}`,
		`{"task_type":"echo","max_attempts":0}`,
		`{"task_type":"echo","timeout_seconds":0}`,
		`{"task_type":"echo","queue":"a b{c}"}`,
		`{"task_type":"echo","queue":"` + strings.Repeat("q", 65) + `"}`,
		`{"task_type":"` + strings.Repeat("t", 129) + `"}`,
		// Huge numbers.
		`{"task_type":"echo","priority":99999999999999999999999}`,
		`{"task_type":"echo","delay_seconds":1e400}`,
		`{"task_type":"echo","timeout_seconds":-1e400}`,
		`{"task_type":"echo","payload":1e400}`,
		// Invalid UTF-8.
		"{\"task_type\":\"e\xffcho\"}",
		"{\"task_type\":\"echo\",\"payload\":\"\xc3\"}",
		// Unknown and repeated fields.
		`{"task_type":"echo","colour":"red"}`,
		`{"task_type":"echo","Payload":1,"payload":2}`,
		`{"TASK_TYPE":"echo"}`,
		// Deep nesting.
		`{"task_type":"echo","payload":` + strings.Repeat("[", 40) + strings.Repeat("]", 40) + `}`,
		`{"task_type":"echo","payload":` + strings.Repeat(`{"a":`, 31) + `1` + strings.Repeat("}", 31) + `}`,
		// Trailing data.
		`{"task_type":"echo"} {}`,
		`{"task_type":"echo"}x`,
		// Empty.
		``,
		` `,
		`{}`,
	} {
		f.Add([]byte(body), "", "")
	}
	for _, h := range [][2]string{
		{"-", ""},
		{"text/plain", ""},
		{"application/json; charset=utf-8", "key-1"},
		{"application/json;;", ""},
		{"APPLICATION/JSON", "ключ"},
		{"application/jsonx", ""},
		{"", "key-1"},
		{"", "key\xff"},
		{"", strings.Repeat("k", 257)},
		{"", " \t"},
	} {
		f.Add([]byte(`{"task_type":"echo","payload":{"n":1}}`), h[0], h[1])
	}

	b := redistest.Embedded(f)
	c, err := dtq.NewClient(redisconn.Wrap(b.Client), &dtq.Config{Namespace: "fuzz", MaxPayloadBytes: 4096})
	if err != nil {
		f.Fatal(err)
	}
	srv := api.New(c, redisconn.Wrap(b.Client), &api.Config{MaxBodyBytes: 8192})
	f.Cleanup(srv.Close)
	h := srv.Handler()
	s := loadSpec(f)
	op := s.operations()[opSubmit]

	f.Fuzz(func(t *testing.T, body []byte, contentType, idemKey string) {
		req := httptest.NewRequest("POST", "/api/v1/tasks", bytes.NewReader(body))
		switch contentType {
		case "":
			req.Header.Set("Content-Type", "application/json")
		case "-":
		default:
			req.Header.Set("Content-Type", contentType)
		}
		if idemKey != "" {
			req.Header.Set("Idempotency-Key", idemKey)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)

		raw := rec.Body.Bytes()
		if rec.Code >= 500 {
			t.Fatalf("status %d: %s", rec.Code, raw)
		}
		v, err := decode(raw)
		if err != nil || !json.Valid(raw) {
			t.Fatalf("status %d, body is not one JSON value (%v): %q", rec.Code, err, raw)
		}
		if ct := rec.Header().Get("Content-Type"); ct != "application/json" {
			t.Fatalf("status %d, Content-Type %q", rec.Code, ct)
		}
		r := s.response(op, strconv.Itoa(rec.Code))
		if r == nil {
			t.Fatalf("status %d is not documented: %s", rec.Code, raw)
		}
		schema := r["content"].(map[string]any)["application/json"].(map[string]any)["schema"]
		if problems := s.validate(schema, v); len(problems) > 0 {
			t.Fatalf("status %d: %s\n%s", rec.Code, strings.Join(problems, "\n"), raw)
		}
		if rec.Code >= 400 {
			e, _ := v.(map[string]any)["error"].(map[string]any)
			if code, _ := e["code"].(string); code == "" {
				t.Fatalf("status %d without an error code: %s", rec.Code, raw)
			}
			if splitRune.Match(raw) {
				t.Fatalf("status %d: the message has invalid UTF-8 (a character cut in two): %s", rec.Code, raw)
			}
			return
		}
		if rec.Code != http.StatusCreated {
			return
		}
		var sent struct {
			Payload json.RawMessage `json:"payload"` // decoded as the server does
		}
		if err := json.Unmarshal(body, &sent); err != nil {
			t.Fatalf("201 for a body that does not decode: %v", err)
		}
		if sent.Payload == nil {
			sent.Payload = json.RawMessage("null")
		}
		got, _ := v.(map[string]any)
		if rec.Header().Get("Location") != "/api/v1/tasks/"+got["id"].(string) {
			t.Fatalf("Location %q for task %v", rec.Header().Get("Location"), got["id"])
		}
		want, err := decode(sent.Payload)
		if err != nil {
			t.Fatal(err)
		}
		if !sameJSON(want, got["payload"]) {
			t.Fatalf("payload %s came back as %s", sent.Payload, raw)
		}
	})
}

// splitRune finds the JSON escape that encoding/json writes for a byte of
// invalid UTF-8 (not preceded by a backslash, which would make it text).
var splitRune = regexp.MustCompile(`(^|[^\\])(\\\\)*\\ufffd`)

// sameJSON reports whether two values decoded by decode are the same JSON
// value: numbers compare by value, objects regardless of key order.
func sameJSON(a, b any) bool {
	switch a := a.(type) {
	case json.Number:
		b, ok := b.(json.Number)
		if !ok {
			return false
		}
		if a == b {
			return true
		}
		x, _, err1 := big.ParseFloat(string(a), 10, 256, big.ToNearestEven)
		y, _, err2 := big.ParseFloat(string(b), 10, 256, big.ToNearestEven)
		return err1 == nil && err2 == nil && x.Cmp(y) == 0
	case []any:
		b, ok := b.([]any)
		if !ok || len(a) != len(b) {
			return false
		}
		for i := range a {
			if !sameJSON(a[i], b[i]) {
				return false
			}
		}
		return true
	case map[string]any:
		b, ok := b.(map[string]any)
		if !ok || len(a) != len(b) {
			return false
		}
		for k, v := range a {
			if w, ok := b[k]; !ok || !sameJSON(v, w) {
				return false
			}
		}
		return true
	}
	return a == b
}
