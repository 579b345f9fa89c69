package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"reflect"
	"unicode/utf8"

	"github.com/dtq-dev/dtq/api/wire"
)

// maxDepth bounds the nesting of a request's JSON.
const maxDepth = 32

var sprintf = fmt.Sprintf

// readJSON reads a JSON request body into v strictly: an application/json
// content type (415 otherwise), at most limit bytes (413, at once when
// Content-Length says more), valid UTF-8, at most maxDepth levels of
// nesting, no unknown fields, no trailing data, and the keys of checkKeys:
// field names exactly as documented, none twice at any level.
func readJSON(w http.ResponseWriter, r *http.Request, limit int64, v any) error {
	if ct := r.Header.Get("Content-Type"); ct != "" {
		mt, _, err := mime.ParseMediaType(ct)
		if err != nil || mt != "application/json" {
			return &httpError{http.StatusUnsupportedMediaType, wire.CodeUnsupported, "the body must be application/json"}
		}
	} else {
		return &httpError{http.StatusUnsupportedMediaType, wire.CodeUnsupported, "the body must be application/json (no Content-Type given)"}
	}
	if r.ContentLength > limit {
		// Refused before a byte is read (nor a 100 Continue sent): the
		// server closes the connection after the answer rather than read
		// the rest of a body this large.
		return tooLarge(limit)
	}
	// A body of unknown length (chunked) is cut at the limit.
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, limit))
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return tooLarge(limit)
		}
		return badRequest("reading the body: %v", err)
	}
	return decodeJSON(body, v)
}

// readOptionalJSON is readJSON for a body that may be left out: no
// Content-Type and no body leave v as it is.
func readOptionalJSON(w http.ResponseWriter, r *http.Request, limit int64, v any) error {
	if r.Header.Get("Content-Type") == "" && r.ContentLength <= 0 {
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, limit))
		if err != nil {
			return badRequest("reading the body: %v", err)
		}
		if len(body) == 0 {
			return nil
		}
		return &httpError{http.StatusUnsupportedMediaType, wire.CodeUnsupported, "the body must be application/json (no Content-Type given)"}
	}
	return readJSON(w, r, limit, v)
}

func tooLarge(limit int64) error {
	return &httpError{http.StatusRequestEntityTooLarge, wire.CodeTooLarge, sprintf("the body is over %d bytes", limit)}
}

// decodeJSON decodes body into v with the checks of readJSON.
func decodeJSON(body []byte, v any) error {
	if len(bytes.TrimSpace(body)) == 0 {
		return badRequest("the body is empty")
	}
	if !utf8.Valid(body) {
		return badRequest("the body is not valid UTF-8")
	}
	kerr := checkKeys(body, shapeOf(reflect.TypeOf(v)))
	switch {
	case errors.Is(kerr, errTooDeep):
		return badRequest("the JSON is nested more than %d levels deep", maxDepth)
	case kerr != nil && !errors.Is(kerr, errMalformed) && json.Valid(body):
		return kerr
	}
	// Malformed JSON: the decoder says where.
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	dec.UseNumber()
	if err := dec.Decode(v); err != nil {
		return jsonError(err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return badRequest("unexpected data after the JSON value")
	}
	if kerr != nil { // never: what checkKeys cannot read, the decoder refuses
		return badRequest("malformed JSON")
	}
	return nil
}

// jsonError turns a decoding error into a 400 that says what is wrong.
func jsonError(err error) error {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syn):
		return badRequest("malformed JSON at byte %d: %v", syn.Offset, syn)
	case errors.As(err, &typ):
		if typ.Field != "" {
			return invalidField(typ.Field, sprintf("must be %s, not %s", kind(typ.Type.Kind().String()), typ.Value))
		}
		return badRequest("the body must be a JSON object")
	case errors.Is(err, io.ErrUnexpectedEOF):
		return badRequest("malformed JSON: unexpected end")
	}
	msg := err.Error()
	if f, ok := bytes.CutPrefix([]byte(msg), []byte("json: unknown field ")); ok {
		return invalidField(string(bytes.Trim(f, `"`)), "is not a known field")
	}
	return badRequest("malformed JSON: %s", msg)
}

func kind(k string) string {
	switch k {
	case "int", "int64", "float64":
		return "a number"
	case "string":
		return "a string"
	case "slice":
		return "an array"
	case "struct", "map":
		return "an object"
	}
	return k
}
