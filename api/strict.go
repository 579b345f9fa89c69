package api

import (
	"encoding"
	"encoding/json"
	"errors"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"
)

// Two parsers must never read one body two ways. Go's encoding/json takes
// the last of a key given twice (another parser may take the first) and
// matches field names regardless of letter case (another reads "Queue" as
// an unknown field). checkKeys refuses both before the body is decoded: a
// key given twice in one object, at any level (payloads included: a
// handler in another language reads them too), and a key of a request
// struct that is not one of its field names exactly. The value's free-form
// parts (payload) may use any keys, once each.

// shape is what checkKeys knows of the Go type a JSON value is decoded
// into: a struct's fields by their exact JSON names, or a slice's
// elements; anything else is free (any keys, each once).
type shape struct {
	object bool
	fields []shapeField // when object
	elem   *shape       // of an array; free when nil
}

type shapeField struct {
	name  string
	shape *shape
}

// free is the shape of free-form JSON: a payload, a map, a scalar.
var free = &shape{}

var (
	shapes          sync.Map // reflect.Type → *shape
	unmarshalerType = reflect.TypeFor[json.Unmarshaler]()
	textType        = reflect.TypeFor[encoding.TextUnmarshaler]()
)

// shapeOf returns the shape of the values t points to or is.
func shapeOf(t reflect.Type) *shape {
	if s, ok := shapes.Load(t); ok {
		return s.(*shape)
	}
	s := buildShape(t, map[reflect.Type]*shape{})
	shapes.Store(t, s)
	return s
}

// buildShape builds the shape of t; building holds the structs being built
// (a recursive type, a workflow's node, refers to its own shape).
func buildShape(t reflect.Type, building map[reflect.Type]*shape) *shape {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if s, ok := building[t]; ok {
		return s
	}
	if reflect.PointerTo(t).Implements(unmarshalerType) || reflect.PointerTo(t).Implements(textType) {
		return free // json.RawMessage: the payload
	}
	switch t.Kind() {
	case reflect.Struct:
		s := &shape{object: true}
		building[t] = s
		for i := range t.NumField() {
			f := t.Field(i)
			if f.Anonymous {
				panic("api: checkKeys does not know embedded fields: " + t.String())
			}
			if !f.IsExported() {
				continue
			}
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			switch name {
			case "-":
				continue
			case "":
				name = f.Name
			}
			s.fields = append(s.fields, shapeField{name, buildShape(f.Type, building)})
		}
		if len(s.fields) > 64 {
			panic("api: checkKeys tracks at most 64 fields: " + t.String())
		}
		return s
	case reflect.Slice, reflect.Array:
		if t.Elem().Kind() == reflect.Uint8 {
			return free // base64 text
		}
		return &shape{elem: buildShape(t.Elem(), building)}
	}
	return free
}

// errMalformed stops checkKeys on text that is not JSON: the decoder then
// says what is wrong.
var errMalformed = errors.New("malformed JSON")

// errTooDeep is checkKeys' answer to JSON nested deeper than maxDepth.
var errTooDeep = errors.New("nested too deep")

// checkKeys checks the keys of the JSON value at the start of b against s
// (see the top of this file), and its nesting (at most maxDepth levels).
// It returns a 400 naming the key's path, errTooDeep, errMalformed for
// text it cannot read (which the decoder refuses), or nil. It does not
// validate the JSON otherwise: its error is the one to report only for a
// body that json.Valid accepts.
func checkKeys(b []byte, s *shape) error {
	c := checkers.Get().(*checker)
	c.b, c.i = b, 0
	err := c.value(s, 0)
	// Drop the references into b, which the pool would keep alive.
	clear(c.path[:cap(c.path)])
	clear(c.keys[:cap(c.keys)])
	c.b, c.path, c.keys = nil, c.path[:0], c.keys[:0]
	checkers.Put(c)
	return err
}

// checkers reuses checkers: a submission is checked without allocating.
var checkers = sync.Pool{New: func() any { return new(checker) }}

type checker struct {
	b    []byte
	i    int
	path []pathSeg // from the root to the value being read
	keys [][]byte  // the keys of the free objects being read, innermost last
}

// pathSeg is an object's key or (index ≥ 0) an array's index.
type pathSeg struct {
	key   []byte
	index int
}

// setAfter is the number of keys of a free object past which its
// duplicates are found with a map rather than by comparing each pair.
const setAfter = 16

func (c *checker) ws() {
	for c.i < len(c.b) {
		switch c.b[c.i] {
		case ' ', '\t', '\n', '\r':
			c.i++
		default:
			return
		}
	}
}

func (c *checker) value(s *shape, depth int) error {
	c.ws()
	if c.i >= len(c.b) {
		return errMalformed
	}
	switch c.b[c.i] {
	case '{':
		if depth+1 > maxDepth {
			return errTooDeep
		}
		if s.object {
			return c.structObject(s, depth+1)
		}
		return c.freeObject(depth + 1)
	case '[':
		if depth+1 > maxDepth {
			return errTooDeep
		}
		return c.array(s, depth+1)
	case '"':
		_, err := c.str()
		return err
	}
	// A number, true, false or null: the decoder checks its spelling.
	start := c.i
	for c.i < len(c.b) {
		ch := c.b[c.i]
		if !('0' <= ch && ch <= '9' || 'a' <= ch && ch <= 'z' || ch == '-' || ch == '+' || ch == '.' || ch == 'E') {
			break
		}
		c.i++
	}
	if c.i == start {
		return errMalformed
	}
	return nil
}

// str reads the string at c.i and returns its text (unescaped as
// encoding/json does, when it has escapes).
func (c *checker) str() ([]byte, error) {
	start := c.i
	c.i++ // the opening quote
	escaped := false
	for c.i < len(c.b) {
		switch c.b[c.i] {
		case '\\':
			escaped = true
			c.i += 2
			continue
		case '"':
			c.i++
			if !escaped {
				return c.b[start+1 : c.i-1], nil
			}
			var text string
			if err := json.Unmarshal(c.b[start:c.i], &text); err != nil {
				return nil, errMalformed
			}
			return []byte(text), nil
		}
		c.i++
	}
	return nil, errMalformed
}

// members reads the members of the object at c.i, calling fn for each key
// with c.i at its value.
func (c *checker) members(fn func(key []byte) error) error {
	c.i++ // '{'
	c.ws()
	if c.i < len(c.b) && c.b[c.i] == '}' {
		c.i++
		return nil
	}
	for {
		c.ws()
		if c.i >= len(c.b) || c.b[c.i] != '"' {
			return errMalformed
		}
		key, err := c.str()
		if err != nil {
			return err
		}
		c.ws()
		if c.i >= len(c.b) || c.b[c.i] != ':' {
			return errMalformed
		}
		c.i++
		if err := fn(key); err != nil {
			return err
		}
		if end, err := c.next('}'); end || err != nil {
			return err
		}
	}
}

// structObject reads an object decoded into a struct of shape s.
// next reads what follows a member or an element: a comma (end false) or
// the closing byte (end true).
func (c *checker) next(closing byte) (end bool, err error) {
	c.ws()
	if c.i >= len(c.b) {
		return false, errMalformed
	}
	switch c.b[c.i] {
	case ',':
		c.i++
		return false, nil
	case closing:
		c.i++
		return true, nil
	}
	return false, errMalformed
}

func (c *checker) structObject(s *shape, depth int) error {
	var seen uint64
	return c.members(func(key []byte) error {
		at := -1
		for i := range s.fields {
			if s.fields[i].name == string(key) {
				at = i
				break
			}
		}
		if at < 0 {
			for _, f := range s.fields {
				if strings.EqualFold(f.name, string(key)) {
					return c.keyError(key, sprintf("is not a known field (field names are case-sensitive: did you mean %q?)", f.name))
				}
			}
			return c.keyError(key, "is not a known field")
		}
		if seen&(1<<at) != 0 {
			return c.keyError(key, "appears twice")
		}
		seen |= 1 << at
		return c.child(key, s.fields[at].shape, depth)
	})
}

// freeObject reads an object of free-form JSON: any keys, each once.
func (c *checker) freeObject(depth int) error {
	first := len(c.keys)
	defer func() { c.keys = c.keys[:first] }()
	var set map[string]struct{}
	return c.members(func(key []byte) error {
		dup := false
		switch {
		case set != nil:
			_, dup = set[string(key)]
			set[string(key)] = struct{}{}
		default:
			for _, k := range c.keys[first:] {
				if string(k) == string(key) {
					dup = true
					break
				}
			}
			c.keys = append(c.keys, key)
			if len(c.keys)-first > setAfter {
				set = make(map[string]struct{}, 2*setAfter)
				for _, k := range c.keys[first:] {
					set[string(k)] = struct{}{}
				}
			}
		}
		if dup {
			return c.keyError(key, "appears twice")
		}
		return c.child(key, free, depth)
	})
}

func (c *checker) array(s *shape, depth int) error {
	elem := s.elem
	if elem == nil {
		elem = free
	}
	c.i++ // '['
	c.ws()
	if c.i < len(c.b) && c.b[c.i] == ']' {
		c.i++
		return nil
	}
	for n := 0; ; n++ {
		c.path = append(c.path, pathSeg{index: n})
		err := c.value(elem, depth)
		c.path = c.path[:len(c.path)-1]
		if err != nil {
			return err
		}
		if end, err := c.next(']'); end || err != nil {
			return err
		}
	}
}

// child reads the value of key.
func (c *checker) child(key []byte, s *shape, depth int) error {
	c.path = append(c.path, pathSeg{key: key, index: -1})
	err := c.value(s, depth)
	c.path = c.path[:len(c.path)-1]
	return err
}

// keyError is a 400 that begins with key's path from the root, as jq
// writes paths: `tasks[2].payload.a appears twice`, a key of other
// characters than A-Z a-z 0-9 _ - quoted (`payload."a b"`).
func (c *checker) keyError(key []byte, problem string) error {
	var b strings.Builder
	for _, p := range append(c.path, pathSeg{key: key, index: -1}) {
		if p.index >= 0 {
			b.WriteString("[" + strconv.Itoa(p.index) + "]")
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('.')
		}
		k := cut(string(p.key), 40)
		if plainKey(k) {
			b.WriteString(k)
		} else {
			b.WriteString(strconv.Quote(k))
		}
	}
	return invalidField(cut(b.String(), 200), problem)
}

// plainKey reports whether k is one or more of A-Z a-z 0-9 _ -.
func plainKey(k string) bool {
	for i := 0; i < len(k); i++ {
		c := k[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return k != ""
}

// cut shortens s to at most n bytes and an ellipsis, never cutting a
// character in two.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}
