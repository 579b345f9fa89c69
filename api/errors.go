package api

import (
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/dtq-dev/dtq"
)

// errorBody is the one error shape of the API:
// {"error":{"code":"…","message":"…"}}.
type errorBody struct {
	Error errorDetail `json:"error"`
}

type errorDetail struct {
	Code    string `json:"code"`
	Message string `json:"message"`
	TaskID  string `json:"task_id,omitempty"`
}

// Error codes.
const (
	codeBadRequest     = "bad_request"
	codeInvalid        = "invalid_field"
	codeUnauthorized   = "unauthorized"
	codeNotFound       = "not_found"
	codeMethod         = "method_not_allowed"
	codeConflict       = "conflict"
	codeTooLarge       = "too_large"
	codeUnsupported    = "unsupported_media_type"
	codeIdempotency    = "idempotency_key_reused"
	codeQueueFull      = "queue_full"
	codeUnavailable    = "unavailable"
	codeInProgress     = "in_progress"
	codeNotCancellable = "not_cancellable"
	codeNotDead        = "not_dead"
	codeInternal       = "internal"
)

// writeJSON writes v with status.
func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(true)
	enc.Encode(v)
}

func writeError(w http.ResponseWriter, status int, code, msg string) {
	writeJSON(w, status, errorBody{Error: errorDetail{Code: code, Message: msg}})
}

// httpError is an error with the status and code it maps to.
type httpError struct {
	status int
	code   string
	msg    string
}

func (e *httpError) Error() string { return e.msg }

func badRequest(format string, args ...any) error {
	return &httpError{http.StatusBadRequest, codeBadRequest, sprintf(format, args...)}
}

func invalidField(field, problem string) error {
	return &httpError{http.StatusBadRequest, codeInvalid, field + " " + problem}
}

// writeErr maps an error from decoding or from the engine to a response.
// Anything a client sent maps to a 4xx; Redis failures to 503.
func (s *Server) writeErr(w http.ResponseWriter, r *http.Request, err error) {
	var he *httpError
	var ve *dtq.ValidationError
	var full *dtq.QueueFullError
	var big *dtq.TooLargeError
	var conflict *dtq.IdempotencyConflictError
	switch {
	case errors.As(err, &he):
		writeError(w, he.status, he.code, he.msg)
	case errors.As(err, &ve):
		writeError(w, http.StatusBadRequest, codeInvalid, httpField(ve.Field)+" "+ve.Problem)
	case errors.As(err, &full):
		secs := int(full.RetryAfter.Round(time.Second) / time.Second)
		w.Header().Set("Retry-After", strconv.Itoa(max(secs, 1)))
		writeError(w, http.StatusTooManyRequests, codeQueueFull, full.Error()[len("dtq: "):])
	case errors.As(err, &big):
		writeError(w, http.StatusRequestEntityTooLarge, codeTooLarge, big.Error()[len("dtq: "):])
	case errors.As(err, &conflict):
		writeJSON(w, http.StatusUnprocessableEntity, errorBody{Error: errorDetail{Code: codeIdempotency,
			Message: "Idempotency-Key was used for a different request", TaskID: conflict.TaskID}})
	case errors.Is(err, dtq.ErrNotFound):
		writeError(w, http.StatusNotFound, codeNotFound, "no such task")
	case errors.Is(err, dtq.ErrNotCancellable):
		writeError(w, http.StatusConflict, codeNotCancellable, "the task has already finished")
	case errors.Is(err, dtq.ErrNotDead):
		writeError(w, http.StatusConflict, codeNotDead, "the task is not in the dead-letter stream")
	default:
		s.log.Warn("request failed", "method", r.Method, "path", r.URL.Path, "error", err)
		writeError(w, http.StatusServiceUnavailable, codeUnavailable, "the task store is unavailable; try again")
	}
}

// httpField names an engine field as the HTTP API spells it.
func httpField(f string) string {
	switch f {
	case "delay":
		return "delay_seconds"
	case "timeout":
		return "timeout_seconds"
	case "idempotency_key":
		return "the Idempotency-Key header"
	}
	return f
}
