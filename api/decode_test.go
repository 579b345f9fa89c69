package api

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/dtq-dev/dtq/api/wire"
)

// submitBody is a typical submission: a small object payload and a few
// options.
const submitBody = `{"task_type":"email.send","payload":{"to":"ada@example.com","subject":"Welcome","lines":["a","b"],"n":42},"queue":"emails","priority":7,"max_attempts":5,"timeout_seconds":30}`

// BenchmarkDecode measures decodeJSON, the strict decoding of every request
// body, on a typical submission and on a batch of 100 of them.
func BenchmarkDecode(b *testing.B) {
	b.Run("submit", func(b *testing.B) {
		body := []byte(submitBody)
		b.SetBytes(int64(len(body)))
		b.ReportAllocs()
		for b.Loop() {
			var s wire.Submission
			if err := decodeJSON(body, &s); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("batch100", func(b *testing.B) {
		body := []byte(`{"tasks":[` + strings.TrimSuffix(strings.Repeat(submitBody+",", 100), ",") + `]}`)
		b.SetBytes(int64(len(body)))
		b.ReportAllocs()
		for b.Loop() {
			var s wire.BatchRequest
			if err := decodeJSON(body, &s); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// FuzzCheckKeys holds checkKeys, on free-form JSON, to a reference built on
// encoding/json's tokenizer: on valid JSON it finds a duplicate key exactly
// when the tokens have one (keys compared as the decoder reads them) and
// refuses nesting exactly past maxDepth, and it never calls valid JSON
// malformed.
func FuzzCheckKeys(f *testing.F) {
	for _, s := range []string{
		`{}`, `[]`, `1`, `-1.5e+10`, `"s"`, `true`, `null`,
		`{"a":1,"a":2}`, `{"a":1,"\u0061":2}`, `{"a":{"b":1},"b":{"a":1}}`, `[{"a":1},{"a":1}]`,
		`{"":1,"":2}`, `{"\ud800":1,"\udc00":2}`, `{"é":1,"\u00e9":2}`, `{"a\"b":1,"a\\b":2}`,
		` { "a" : [ 1 , { "b" : null , "c" : [ ] } ] , "b" : "x\\\"" } `,
		`{"a":` + strings.Repeat(`[`, 31) + strings.Repeat(`]`, 31) + `}`,
		`{"a":` + strings.Repeat(`[`, 32) + strings.Repeat(`]`, 32) + `}`,
		`{` + strings.Repeat(`"k":0,`, 20) + `"z":1}`,
		`{"a":1e400,"b":-0,"c":0.5E-3,"d":[true,false,null]}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if !json.Valid(b) {
			checkKeys(b, free) // must not panic
			return
		}
		dup, deep := reference(b)
		err := checkKeys(b, free)
		switch {
		case err == errMalformed:
			t.Fatalf("valid JSON called malformed: %q", b)
		case deep:
			if err != errTooDeep {
				t.Fatalf("nested past %d levels: %v, want errTooDeep: %q", maxDepth, err, b)
			}
		case dup != (err != nil):
			t.Fatalf("reference finds a duplicate: %v; checkKeys: %v: %q", dup, err, b)
		}
	})
}

// reference reports whether the valid JSON b has an object with a key
// given twice, and whether it nests past maxDepth, from encoding/json's
// tokens.
func reference(b []byte) (dup, deep bool) {
	dec := json.NewDecoder(bytes.NewReader(b))
	type frame struct {
		keys   map[string]bool
		object bool
		key    bool // the next token of an object is a key
	}
	var stack []*frame
	for {
		tok, err := dec.Token()
		if err != nil {
			return dup, deep
		}
		var top *frame
		if len(stack) > 0 {
			top = stack[len(stack)-1]
		}
		if top != nil && top.object && top.key {
			if k, ok := tok.(string); ok {
				if top.keys[k] {
					dup = true
				}
				top.keys[k] = true
				top.key = false
				continue
			}
		}
		switch tok {
		case json.Delim('{'), json.Delim('['):
			stack = append(stack, &frame{keys: map[string]bool{}, object: tok == json.Delim('{'), key: true})
			if len(stack) > maxDepth {
				deep = true
			}
			continue
		case json.Delim('}'), json.Delim(']'):
			stack = stack[:len(stack)-1]
		}
		if len(stack) > 0 {
			stack[len(stack)-1].key = true
		}
	}
}

// Each request type's shape knows its fields by their exact names.
func TestShapes(t *testing.T) {
	s := shapeOf(reflect.TypeFor[*wire.Submission]())
	var names []string
	for _, f := range s.fields {
		names = append(names, f.name)
	}
	if !s.object || strings.Join(names, ",") != "task_type,payload,queue,priority,delay_seconds,max_attempts,timeout_seconds,unique,debounce,group,limit_key,order_key" {
		t.Fatalf("submission: %v", names)
	}
	if p := s.fields[1].shape; p != free {
		t.Errorf("payload is not free-form: %+v", p)
	}
	if u := s.fields[7].shape; !u.object || len(u.fields) != 3 || u.fields[1].shape.object {
		t.Errorf("unique: %+v", u)
	}
	if d := s.fields[8].shape; !d.object || len(d.fields) != 4 {
		t.Errorf("debounce: %+v", d)
	}
	if sh := shapeOf(reflect.TypeFor[*wire.ScheduleBody]()); !sh.object || len(sh.fields) != 10 {
		t.Errorf("ScheduleBody: %+v", sh)
	}
}
