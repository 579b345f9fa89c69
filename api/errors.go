package api

import (
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/dtq-dev/dtq"
	"github.com/dtq-dev/dtq/api/wire"
	"github.com/dtq-dev/dtq/queue"
)

// writeJSON writes v, a value of a type of package wire, with status.
func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(true)
	enc.Encode(v)
}

func writeError(w http.ResponseWriter, status int, code, msg string) {
	writeJSON(w, status, wire.Error{Error: wire.ErrorDetail{Code: code, Message: msg}})
}

// httpError is an error with the status and code it maps to.
type httpError struct {
	status int
	code   string
	msg    string
}

func (e *httpError) Error() string { return e.msg }

func badRequest(format string, args ...any) error {
	return &httpError{http.StatusBadRequest, wire.CodeBadRequest, sprintf(format, args...)}
}

func invalidField(field, problem string) error {
	return &httpError{http.StatusBadRequest, wire.CodeInvalid, field + " " + problem}
}

// writeErr maps an error from decoding or from the engine to a response.
// Anything a client sent maps to a 4xx; Redis failures to 503.
func (s *Server) writeErr(w http.ResponseWriter, r *http.Request, err error) {
	status, detail, retryAfter := classify(err)
	if status == http.StatusServiceUnavailable {
		s.log.Warn("request failed", "method", r.Method, "path", r.URL.Path, "error", err)
	}
	if retryAfter != "" {
		w.Header().Set("Retry-After", retryAfter)
	}
	writeJSON(w, status, wire.Error{Error: detail})
}

// errorDetail is the error detail err maps to (an answer's part).
func errorDetail(err error) *wire.ErrorDetail {
	_, d, _ := classify(err)
	return &d
}

// classify returns the status, error detail and Retry-After (or "") that
// err maps to.
func classify(err error) (status int, detail wire.ErrorDetail, retryAfter string) {
	var he *httpError
	var ve *dtq.ValidationError
	var full *dtq.QueueFullError
	var big *dtq.TooLargeError
	var conflict *dtq.IdempotencyConflictError
	var notEmpty *dtq.QueueNotEmptyError
	var qve *queue.ValidationError
	switch {
	case errors.As(err, &he):
		return he.status, wire.ErrorDetail{Code: he.code, Message: he.msg}, ""
	case errors.As(err, &ve):
		return http.StatusBadRequest, wire.ErrorDetail{Code: wire.CodeInvalid, Message: httpField(ve.Field) + " " + ve.Problem}, ""
	case errors.As(err, &full):
		secs := int(full.RetryAfter.Round(time.Second) / time.Second)
		return http.StatusTooManyRequests, wire.ErrorDetail{Code: wire.CodeQueueFull, Message: full.Error()[len("dtq: "):]}, strconv.Itoa(max(secs, 1))
	case errors.As(err, &big):
		return http.StatusRequestEntityTooLarge, wire.ErrorDetail{Code: wire.CodeTooLarge, Message: big.Error()[len("dtq: "):]}, ""
	case errors.As(err, &conflict):
		return http.StatusUnprocessableEntity, wire.ErrorDetail{Code: wire.CodeIdempotency,
			Message: "Idempotency-Key was used for a different request", TaskID: conflict.TaskID}, ""
	case errors.As(err, &qve):
		msg := mqField(qve.Field) + " " + qve.Problem
		switch qve.Field {
		case "topic", "topics", "group", "name":
			msg = qve.Problem // names the field itself: topic "a b" is invalid: …
		}
		return http.StatusBadRequest, wire.ErrorDetail{Code: wire.CodeInvalid, Message: msg}, ""
	case errors.Is(err, queue.ErrNotOwner):
		return http.StatusConflict, wire.ErrorDetail{Code: wire.CodeLeaseLost,
			Message: "the lease is lost: it was not extended in time and the message was leased again, or it was settled already; nothing was changed"}, ""
	case errors.Is(err, queue.ErrFull):
		return http.StatusTooManyRequests, wire.ErrorDetail{Code: wire.CodeTopicFull, Message: "the topic holds max_size messages: nothing was changed; try again later"}, "1"
	case errors.Is(err, dtq.ErrLeaseLost):
		return http.StatusConflict, wire.ErrorDetail{Code: wire.CodeLeaseLost,
			Message: "the lease is lost: it timed out and its task was taken over, or the task ended otherwise; nothing was changed"}, ""
	case errors.Is(err, dtq.ErrWorkflowNotFound):
		return http.StatusNotFound, wire.ErrorDetail{Code: wire.CodeNotFound, Message: "no such workflow"}, ""
	case errors.Is(err, dtq.ErrNotFound):
		return http.StatusNotFound, wire.ErrorDetail{Code: wire.CodeNotFound, Message: "no such task"}, ""
	case errors.Is(err, dtq.ErrScheduleNotFound):
		return http.StatusNotFound, wire.ErrorDetail{Code: wire.CodeNotFound, Message: "no such schedule"}, ""
	case errors.Is(err, dtq.ErrSignalDelivered):
		return http.StatusConflict, wire.ErrorDetail{Code: wire.CodeSignalDelivered,
			Message: "the task has a signal of this name already, or its wait for it timed out: nothing was recorded"}, ""
	case errors.Is(err, dtq.ErrTaskFinished):
		return http.StatusConflict, wire.ErrorDetail{Code: wire.CodeTaskFinished, Message: "the task has finished: it takes no signal"}, ""
	case errors.Is(err, dtq.ErrNotCancellable):
		return http.StatusConflict, wire.ErrorDetail{Code: wire.CodeNotCancellable, Message: "the task has already finished"}, ""
	case errors.As(err, &notEmpty):
		return http.StatusConflict, wire.ErrorDetail{Code: wire.CodeNotEmpty, Message: sprintf("queue %q holds %d queued, %d scheduled, %d running and %d dead tasks: nothing was deleted; ?force=true deletes them too",
			notEmpty.Queue, notEmpty.Queued, notEmpty.Scheduled, notEmpty.Running, notEmpty.Dead)}, ""
	case errors.Is(err, dtq.ErrWorkerNotFound):
		return http.StatusNotFound, wire.ErrorDetail{Code: wire.CodeNotFound, Message: "no such worker: none of that id is live (GET /api/v1/workers lists them)"}, ""
	case errors.Is(err, dtq.ErrLeaseHolder):
		return http.StatusConflict, wire.ErrorDetail{Code: wire.CodeConflict,
			Message: "the worker is an HTTP lease holder: it takes tasks by calling POST /api/v1/leases and cannot be told to quiet or stop; stop its process instead"}, ""
	case errors.Is(err, dtq.ErrNotScheduled):
		return http.StatusConflict, wire.ErrorDetail{Code: wire.CodeNotScheduled, Message: "the task is not waiting in the schedule (not SCHEDULED): it is queued, running or finished, or waits for its order key"}, ""
	case errors.Is(err, dtq.ErrNotDead):
		return http.StatusConflict, wire.ErrorDetail{Code: wire.CodeNotDead, Message: "the task is not in the dead-letter stream (not DEAD, or discarded)"}, ""
	case errors.Is(err, dtq.ErrLeaseServerStopped):
		return http.StatusServiceUnavailable, wire.ErrorDetail{Code: wire.CodeUnavailable,
			Message: "this server is shutting down and leases no more tasks; ask another server or try again"}, "1"
	case errors.Is(err, dtq.ErrNotReplicated):
		return http.StatusServiceUnavailable, wire.ErrorDetail{Code: wire.CodeUnavailable,
			Message: "the task was written but not acknowledged by enough replicas in time; submit again with the same Idempotency-Key"}, "1"
	}
	if dtq.IsOutOfMemory(err) {
		return http.StatusServiceUnavailable, wire.ErrorDetail{Code: wire.CodeOutOfMemory,
			Message: "Redis is out of memory (maxmemory reached): nothing was stored; try again later"}, "5"
	}
	// Redis refused the connection or answered an error (at once), or did
	// not answer within the request timeout: a client may retry soon.
	return http.StatusServiceUnavailable, wire.ErrorDetail{Code: wire.CodeUnavailable, Message: "the task store is unavailable; try again"}, "1"
}

// mqField names a field of package queue as the HTTP API spells it.
func mqField(f string) string {
	switch f {
	case "token":
		return "the lease token"
	case "PutOpts.Key":
		return "key"
	case "PutOpts.MaxSize", "ReleaseOpts.MaxSize":
		return "max_size"
	case "PutOpts.Delay", "delay":
		return "delay_seconds"
	case "LeaseOpts.Holder":
		return "worker"
	case "LeaseOpts.Group":
		return "group"
	case "LeaseOpts.VisibilityTimeout":
		return "lease_seconds"
	}
	return f
}

// httpField names an engine field as the HTTP API spells it (the last
// part of a path, "root.chain[0].task.timeout", too).
func httpField(f string) string {
	if i := strings.LastIndexByte(f, '.'); i >= 0 && f != "unique.period" && f != "debounce.period" && f != "debounce.max_wait" {
		return f[:i+1] + httpField(f[i+1:])
	}
	switch f {
	case "delay":
		return "delay_seconds"
	case "timeout":
		return "timeout_seconds"
	case "idempotency_key":
		return "the Idempotency-Key header"
	case "unique.period":
		return "unique.period_seconds"
	case "debounce.period":
		return "debounce.period_seconds"
	case "debounce.max_wait":
		return "debounce.max_wait_seconds"
	case "per":
		return "per_seconds"
	case "wait":
		return "wait_seconds"
	case "lease_timeout":
		return "lease_seconds"
	case "redrive_rate":
		return "rate_per_second"
	case "error_contains":
		return "error"
	case "retry_after":
		return "retry_after_seconds"
	}
	return f
}
