package api_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"
)

// spec is the parsed OpenAPI document, with a checker for the subset of
// JSON Schema it uses: $ref, type (a name or a list of names, "null" for
// nullable), enum, const, properties, required, additionalProperties,
// items, minItems, maxItems, minimum, maximum, minLength, maxLength,
// pattern and format date-time. Annotations (description, default, …) are
// ignored.
type spec struct {
	raw []byte
	doc map[string]any

	mu       sync.Mutex // guards patterns: parallel subtests share a spec
	patterns map[string]*regexp.Regexp
}

// methods are the operation keys of an OpenAPI path item.
var methods = []string{"get", "put", "post", "delete", "options", "head", "patch", "trace"}

func loadSpec(t testing.TB) *spec {
	t.Helper()
	raw, err := os.ReadFile("openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	s := &spec{raw: raw, patterns: map[string]*regexp.Regexp{}}
	if err := json.Unmarshal(raw, &s.doc); err != nil {
		t.Fatalf("openapi.json is not JSON: %v", err)
	}
	return s
}

// operations returns every operation of the document by "METHOD /path".
func (s *spec) operations() map[string]map[string]any {
	ops := map[string]map[string]any{}
	paths, _ := s.doc["paths"].(map[string]any)
	for path, item := range paths {
		item, _ := item.(map[string]any)
		for _, m := range methods {
			if op, ok := item[m].(map[string]any); ok {
				ops[strings.ToUpper(m)+" "+path] = op
			}
		}
	}
	return ops
}

// lookup resolves a local JSON pointer ("#/components/schemas/Task").
func (s *spec) lookup(ref string) (any, bool) {
	if !strings.HasPrefix(ref, "#/") {
		return nil, false
	}
	var cur any = s.doc
	for _, tok := range strings.Split(ref[2:], "/") {
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		m, ok := cur.(map[string]any)
		if !ok {
			return nil, false
		}
		if cur, ok = m[tok]; !ok {
			return nil, false
		}
	}
	return cur, true
}

// deref follows a chain of $ref to an object without one.
func (s *spec) deref(v any) map[string]any {
	m, _ := v.(map[string]any)
	for range 16 {
		ref, ok := m["$ref"].(string)
		if !ok {
			return m
		}
		target, _ := s.lookup(ref)
		m, _ = target.(map[string]any)
	}
	return nil
}

// refs returns every $ref of the document that does not resolve.
func (s *spec) danglingRefs() []string {
	var bad []string
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			if ref, ok := v["$ref"].(string); ok {
				if _, ok := s.lookup(ref); !ok {
					bad = append(bad, ref)
				}
			}
			for _, e := range v {
				walk(e)
			}
		case []any:
			for _, e := range v {
				walk(e)
			}
		}
	}
	walk(s.doc)
	return bad
}

// response returns the response object of op for status, dereferenced.
func (s *spec) response(op map[string]any, status string) map[string]any {
	rs, _ := op["responses"].(map[string]any)
	if r, ok := rs[status]; ok {
		return s.deref(r)
	}
	return nil
}

// decode decodes JSON text keeping numbers as json.Number.
func decode(raw []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	return v, nil
}

// validate checks v (decoded by decode) against schema and returns the
// problems, each prefixed by its place in v.
func (s *spec) validate(schema any, v any) []string {
	var problems []string
	s.check(schema, v, "$", &problems)
	return problems
}

func (s *spec) check(schema any, v any, at string, problems *[]string) {
	fail := func(format string, args ...any) {
		*problems = append(*problems, at+": "+fmt.Sprintf(format, args...))
	}
	sc, ok := schema.(map[string]any)
	if !ok {
		fail("schema is not an object")
		return
	}
	if ref, ok := sc["$ref"].(string); ok {
		target, ok := s.lookup(ref)
		if !ok {
			fail("$ref %s does not resolve", ref)
			return
		}
		s.check(target, v, at, problems)
	}
	if t, ok := sc["type"]; ok && !typeMatches(t, v) {
		fail("is %s, want type %v", jsonType(v), t)
		return
	}
	if enum, ok := sc["enum"].([]any); ok {
		found := false
		for _, e := range enum {
			found = found || equalJSON(e, v)
		}
		if !found {
			fail("%v is not one of %v", v, enum)
		}
	}
	if c, ok := sc["const"]; ok && !equalJSON(c, v) {
		fail("%v is not %v", v, c)
	}
	switch v := v.(type) {
	case map[string]any:
		props, _ := sc["properties"].(map[string]any)
		for _, name := range sortedKeys(v) {
			ps, declared := props[name]
			switch {
			case declared:
				s.check(ps, v[name], at+"."+name, problems)
			case sc["additionalProperties"] == true:
			case sc["additionalProperties"] != nil && sc["additionalProperties"] != false:
				s.check(sc["additionalProperties"], v[name], at+"."+name, problems)
			case props != nil || sc["additionalProperties"] == false:
				fail("property %q is not declared in the schema", name)
			}
		}
		req, _ := sc["required"].([]any)
		for _, name := range req {
			if _, ok := v[name.(string)]; !ok {
				fail("required property %q is missing", name)
			}
		}
	case []any:
		if n, ok := sc["minItems"].(float64); ok && float64(len(v)) < n {
			fail("has %d items, want at least %v", len(v), n)
		}
		if n, ok := sc["maxItems"].(float64); ok && float64(len(v)) > n {
			fail("has %d items, want at most %v", len(v), n)
		}
		if items, ok := sc["items"]; ok {
			for i, e := range v {
				s.check(items, e, fmt.Sprintf("%s[%d]", at, i), problems)
			}
		}
	case json.Number:
		f, err := v.Float64()
		if err != nil {
			break // out of float64's range: only type and enum apply
		}
		if lo, ok := sc["minimum"].(float64); ok && f < lo {
			fail("%v is below the minimum %v", v, lo)
		}
		if hi, ok := sc["maximum"].(float64); ok && f > hi {
			fail("%v is above the maximum %v", v, hi)
		}
	case string:
		n := utf8.RuneCountInString(v)
		if lo, ok := sc["minLength"].(float64); ok && float64(n) < lo {
			fail("is %d characters, want at least %v", n, lo)
		}
		if hi, ok := sc["maxLength"].(float64); ok && float64(n) > hi {
			fail("is %d characters, want at most %v", n, hi)
		}
		if p, ok := sc["pattern"].(string); ok && !s.pattern(p).MatchString(v) {
			fail("%q does not match %s", v, p)
		}
		if sc["format"] == "date-time" {
			if _, err := time.Parse(time.RFC3339Nano, v); err != nil {
				fail("%q is not a date-time", v)
			} else if !msTime.MatchString(v) {
				fail("%q is not a time in UTC with milliseconds, as docs/api.md says (2026-12-05T17:14:18.910Z)", v)
			}
		}
	}
}

// msTime is the one form of the API's times: RFC 3339 in UTC with exactly
// three fractional digits (issue 30: trailing zeros were dropped).
var msTime = regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$`)

func (s *spec) pattern(p string) *regexp.Regexp {
	s.mu.Lock()
	defer s.mu.Unlock()
	if re, ok := s.patterns[p]; ok {
		return re
	}
	re := regexp.MustCompile(p)
	s.patterns[p] = re
	return re
}

func jsonType(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case json.Number, float64:
		return "number"
	case string:
		return "string"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return fmt.Sprintf("%T", v)
}

// typeMatches reports whether v has the schema type t: a name or a list.
func typeMatches(t any, v any) bool {
	names, ok := t.([]any)
	if !ok {
		names = []any{t}
	}
	for _, n := range names {
		got := jsonType(v)
		if n == got || n == "integer" && got == "number" && isInteger(v) {
			return true
		}
	}
	return false
}

func isInteger(v any) bool {
	n, ok := v.(json.Number)
	if !ok {
		return false
	}
	if _, err := n.Int64(); err == nil {
		return true
	}
	f, err := n.Float64()
	return err == nil && f == math.Trunc(f)
}

// equalJSON compares a value of the document with one decoded by decode.
func equalJSON(docValue, v any) bool {
	if n, ok := v.(json.Number); ok {
		f, err := n.Float64()
		return err == nil && docValue == f
	}
	return reflect.DeepEqual(docValue, v)
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// shapeProblems compares the property names of v (a value marshalled from a
// Go type with every field set) with schema both ways, recursively: a field
// the schema does not declare, and a property the type does not have.
func (s *spec) shapeProblems(schema any, v any, at string) []string {
	return s.shapeProblemsSeen(schema, v, at, map[string]bool{})
}

// shapeProblemsSeen is shapeProblems; a schema is held to have all of its
// properties the first time it is met only (a recursive type's value,
// filled to a bounded depth, stops somewhere).
func (s *spec) shapeProblemsSeen(schema any, v any, at string, seen map[string]bool) []string {
	var problems []string
	sc := s.deref(schema)
	id := fmt.Sprintf("%p", sc)
	first := !seen[id]
	seen[id] = true
	switch v := v.(type) {
	case map[string]any:
		props, ok := sc["properties"].(map[string]any)
		if !ok {
			return nil // free-form JSON (payload, result)
		}
		for _, name := range sortedKeys(v) {
			if ps, ok := props[name]; ok {
				problems = append(problems, s.shapeProblemsSeen(ps, v[name], at+"."+name, seen)...)
			} else {
				problems = append(problems, at+": field "+name+" is not declared in the schema")
			}
		}
		for _, name := range sortedKeys(props) {
			if _, ok := v[name]; !ok && first {
				problems = append(problems, at+": the schema declares "+name+", which the Go type does not have")
			}
		}
	case []any:
		if items, ok := sc["items"]; ok {
			for i, e := range v {
				problems = append(problems, s.shapeProblemsSeen(items, e, fmt.Sprintf("%s[%d]", at, i), seen)...)
			}
		}
	}
	return problems
}

// filled returns a value of t with every exported field set, recursively:
// marshalled, it shows every property the type can have. A struct type met
// again inside itself (a workflow's Node in a Node) is left zero there, as
// is everything past depth: the first of each type, the one shapeProblems
// holds to all of its properties, is the full one.
func filled(t reflect.Type, depth int) reflect.Value {
	return fill(t, depth, map[reflect.Type]bool{})
}

func fill(t reflect.Type, depth int, path map[reflect.Type]bool) reflect.Value {
	v := reflect.New(t).Elem()
	if depth > 8 || path[t] {
		return v
	}
	switch {
	case t == reflect.TypeOf(json.RawMessage(nil)):
		v.SetBytes([]byte(`{"k":1}`))
		return v
	case t == reflect.TypeOf(time.Time{}):
		v.Set(reflect.ValueOf(time.Now().UTC()))
		return v
	}
	switch t.Kind() {
	case reflect.String:
		v.SetString("x")
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(1)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v.SetUint(1)
	case reflect.Float32, reflect.Float64:
		v.SetFloat(1)
	case reflect.Pointer:
		v.Set(fill(t.Elem(), depth+1, path).Addr())
	case reflect.Slice:
		v.Set(reflect.Append(v, fill(t.Elem(), depth+1, path)))
	case reflect.Array:
		for i := range v.Len() {
			v.Index(i).Set(fill(t.Elem(), depth+1, path))
		}
	case reflect.Map:
		v.Set(reflect.MakeMap(t))
		v.SetMapIndex(fill(t.Key(), depth+1, path), fill(t.Elem(), depth+1, path))
	case reflect.Struct:
		path[t] = true
		for i := range t.NumField() {
			if t.Field(i).IsExported() {
				v.Field(i).Set(fill(t.Field(i).Type, depth+1, path))
			}
		}
		delete(path, t)
	}
	return v
}
