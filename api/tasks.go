package api

import (
	"encoding/json"
	"errors"
	"math"
	"net/http"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/dtq-dev/dtq"
	"github.com/dtq-dev/dtq/api/wire"
	"github.com/dtq-dev/dtq/internal/keys"
)

const readyTimeout = 2 * time.Second

// maxListLimit is the largest page of GET /api/v1/tasks (the engine's cap).
const maxListLimit = 500

// uniqueOpts turns a submission's "unique" object into the engine's.
func uniqueOpts(u *wire.Unique) (*dtq.UniqueOpts, error) {
	if u == nil {
		return nil, nil
	}
	o := &dtq.UniqueOpts{Key: u.Key}
	for _, st := range u.States {
		o.States = append(o.States, dtq.Status(st))
	}
	if given(u.PeriodSeconds) {
		d, err := secondsField("unique.period_seconds", u.PeriodSeconds)
		if err != nil {
			return nil, err
		}
		o.Period = d
	}
	return o, nil
}

// debounceOpts turns a submission's "debounce" object into the engine's.
func debounceOpts(d *wire.Debounce) (*dtq.DebounceOpts, error) {
	if d == nil {
		return nil, nil
	}
	o := &dtq.DebounceOpts{Key: d.Key, KeepFirst: d.KeepFirst}
	if !given(d.PeriodSeconds) {
		return nil, invalidField("debounce.period_seconds", "is required")
	}
	p, err := secondsField("debounce.period_seconds", d.PeriodSeconds)
	if err != nil {
		return nil, err
	}
	o.Period = p
	if given(d.MaxWaitSeconds) {
		if o.MaxWait, err = secondsField("debounce.max_wait_seconds", d.MaxWaitSeconds); err != nil {
			return nil, err
		}
	}
	return o, nil
}

// request turns a submission into engine arguments, naming a bad field.
func request(b *wire.Submission, idemKey string) (dtq.EnqueueRequest, error) {
	if b.TaskType == nil {
		return dtq.EnqueueRequest{}, invalidField("task_type", "is required")
	}
	// The JSON is read here — types, and what an explicit 0 means —; every
	// range is the engine's to check (its errors name the field).
	o := &dtq.EnqueueOpts{IdempotencyKey: idemKey}
	if b.Queue != nil { // null: the default, as the field left out
		q, err := queueName(*b.Queue)
		if err != nil {
			return dtq.EnqueueRequest{}, err
		}
		o.Queue = q
	}
	if given(b.Priority) {
		p, err := intField("priority", b.Priority)
		if err != nil {
			return dtq.EnqueueRequest{}, err
		}
		o.Priority = &p
	}
	if given(b.MaxAttempts) {
		n, err := intField("max_attempts", b.MaxAttempts)
		if err != nil {
			return dtq.EnqueueRequest{}, err
		}
		if n == 0 { // the engine's default: over HTTP, the field left out
			return dtq.EnqueueRequest{}, invalidField("max_attempts", "must not be 0 (leave it out for the default)")
		}
		o.MaxAttempts = n
	}
	if given(b.DelaySeconds) {
		d, err := secondsField("delay_seconds", b.DelaySeconds)
		if err != nil {
			return dtq.EnqueueRequest{}, err
		}
		o.Delay = d
	}
	if given(b.TimeoutSeconds) {
		d, err := secondsField("timeout_seconds", b.TimeoutSeconds)
		if err != nil {
			return dtq.EnqueueRequest{}, err
		}
		if d == 0 { // the engine's default: over HTTP, the field left out
			return dtq.EnqueueRequest{}, invalidField("timeout_seconds", "must not be 0 (leave it out for the default)")
		}
		o.Timeout = d
	}
	u, err := uniqueOpts(b.Unique)
	if err != nil {
		return dtq.EnqueueRequest{}, err
	}
	o.Unique = u
	if o.Debounce, err = debounceOpts(b.Debounce); err != nil {
		return dtq.EnqueueRequest{}, err
	}
	if b.Group != nil { // null: none, as the field left out
		if *b.Group == "" {
			return dtq.EnqueueRequest{}, invalidField("group", `must be `+keys.NameRule+` (got ""; leave it out for none)`)
		}
		o.Group = *b.Group
	}
	if b.LimitKey != nil { // null: none, as the field left out
		if *b.LimitKey == "" {
			return dtq.EnqueueRequest{}, invalidField("limit_key", `must be `+keys.NameRule+` (got ""; leave it out for none)`)
		}
		o.LimitKey = *b.LimitKey
	}
	if b.OrderKey != nil { // null: none, as the field left out
		if *b.OrderKey == "" {
			return dtq.EnqueueRequest{}, invalidField("order_key", `must be `+keys.NameRule+` (got ""; leave it out for none)`)
		}
		o.OrderKey = *b.OrderKey
	}
	payload := b.Payload
	if payload == nil {
		payload = json.RawMessage("null")
	}
	return dtq.EnqueueRequest{Type: *b.TaskType, Payload: payload, Opts: o}, nil
}

// given reports whether an optional field was sent (null counts as not).
func given(raw json.RawMessage) bool {
	return raw != nil && string(raw) != "null"
}

// intField reads an integer field (the engine checks its range).
func intField(name string, raw json.RawMessage) (int, error) {
	v, err := strconv.ParseInt(string(raw), 10, 32)
	if errors.Is(err, strconv.ErrRange) {
		return 0, invalidField(name, sprintf("is out of range (got %s)", shorten(raw)))
	}
	if err != nil {
		return 0, invalidField(name, sprintf("must be an integer (got %s)", shorten(raw)))
	}
	return int(v), nil
}

// maxSeconds bounds a seconds field before it becomes a Duration (which
// overflows past ~292 years), far beyond every limit of the engine, which
// refuses it for its range.
const maxSeconds = 1e9

// secondsField reads a number of seconds, applied with nanosecond
// precision.
func secondsField(name string, raw json.RawMessage) (time.Duration, error) {
	v, err := strconv.ParseFloat(string(raw), 64)
	if err != nil && !errors.Is(err, strconv.ErrRange) || math.IsNaN(v) {
		return 0, invalidField(name, sprintf("must be a number of seconds (got %s)", shorten(raw)))
	}
	v = max(min(v, maxSeconds), -maxSeconds)
	return time.Duration(v * float64(time.Second)), nil
}

// shorten quotes at most 40 bytes of a client's value in a message, never
// cutting a character in two.
func shorten(raw json.RawMessage) string {
	if len(raw) <= 40 {
		return string(raw)
	}
	n := 40
	for n > 0 && !utf8.RuneStart(raw[n]) {
		n--
	}
	return string(raw[:n]) + "…"
}

// submit: POST /api/v1/tasks → 201 + task; with Idempotency-Key, a replay
// → 200 + the original task (409 while it is still queued, scheduled or
// running; 410 once it has expired); the same key with a different body →
// 422. A debounced submission that joined the pending task → 200 + that
// task (debounced).
func (s *Server) submit(w http.ResponseWriter, r *http.Request) {
	var b wire.Submission
	if err := readJSON(w, r, s.cfg.MaxBodyBytes, &b); err != nil {
		s.writeErr(w, r, err)
		return
	}
	key := r.Header.Get("Idempotency-Key")
	req, err := request(&b, key)
	if err != nil {
		s.writeErr(w, r, err)
		return
	}
	res, err := s.c.Enqueue(r.Context(), req.Type, req.Payload, req.Opts)
	if err != nil {
		s.writeErr(w, r, err)
		return
	}
	switch {
	case res.Debounced: // the pending task it joined, as it is now
		writeJSON(w, http.StatusOK, taskOf(res.Task))
	case !res.Duplicate:
		w.Header().Set("Location", "/api/v1/tasks/"+res.Task.ID)
		writeJSON(w, http.StatusCreated, taskOf(res.Task))
	case req.Opts.Unique != nil: // the task holding the lock, as it is now
		writeJSON(w, http.StatusOK, taskOf(res.Task))
	case res.Task.Status == "": // the original finished and expired; the key is still remembered
		writeJSON(w, http.StatusGone, wire.Error{Error: wire.ErrorDetail{Code: wire.CodeExpired,
			Message: "the task of this Idempotency-Key finished and has expired; the key is remembered until its window ends", TaskID: res.Task.ID}})
	case res.Task.Status.Finished():
		writeJSON(w, http.StatusOK, taskOf(res.Task))
	default:
		writeJSON(w, http.StatusConflict, wire.Error{Error: wire.ErrorDetail{Code: wire.CodeInProgress,
			Message: "a request with this Idempotency-Key is still being processed", TaskID: res.Task.ID}})
	}
}

// submitBatch: POST /api/v1/tasks/batch {"tasks":[…]} → 200 with one
// result per task, in order, submitted in one round trip to Redis.
func (s *Server) submitBatch(w http.ResponseWriter, r *http.Request) {
	var b wire.BatchRequest
	if err := readJSON(w, r, s.cfg.MaxBodyBytes, &b); err != nil {
		s.writeErr(w, r, err)
		return
	}
	if b.Tasks == nil {
		s.writeErr(w, r, invalidField("tasks", "is required"))
		return
	}
	if len(b.Tasks) > s.cfg.MaxBatch {
		s.writeErr(w, r, &httpError{http.StatusRequestEntityTooLarge, wire.CodeTooLarge, sprintf("a batch holds at most %d tasks (got %d)", s.cfg.MaxBatch, len(b.Tasks))})
		return
	}
	out := make([]wire.BatchItem, len(b.Tasks))
	var reqs []dtq.EnqueueRequest
	var index []int
	for i := range b.Tasks {
		req, err := request(&b.Tasks[i], "")
		if err != nil {
			out[i] = itemError(err)
			continue
		}
		reqs = append(reqs, req)
		index = append(index, i)
	}
	res, err := s.c.EnqueueMany(r.Context(), reqs)
	if err != nil {
		s.writeErr(w, r, err)
		return
	}
	for k, i := range index {
		if res[k].Err != nil {
			out[i] = itemError(res[k].Err)
			continue
		}
		status := http.StatusCreated
		if res[k].Duplicate || res[k].Debounced {
			status = http.StatusOK // a unique task's holder, a debounced task joined (a batch takes no idempotency key)
		}
		out[i] = wire.BatchItem{Status: status, Task: taskOf(res[k].Task)}
	}
	writeJSON(w, http.StatusOK, wire.BatchResult{Results: out})
}

// itemError maps an error of one batch item the way writeErr maps a
// request's.
func itemError(err error) wire.BatchItem {
	status, detail, _ := classify(err)
	return wire.BatchItem{Status: status, Error: &detail}
}

func (s *Server) getTask(w http.ResponseWriter, r *http.Request) {
	t, err := s.c.Get(r.Context(), r.PathValue("id"))
	if err != nil {
		s.writeErr(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, taskOf(t))
}

// listTasks: GET /api/v1/tasks?queue=&status=&type=&suspended=&id_prefix=&error=&created_after=&created_before=&limit=&cursor=
func (s *Server) listTasks(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	queue, err := queueParam(q, dtq.DefaultQueue)
	if err != nil {
		s.writeErr(w, r, err)
		return
	}
	suspended, err := boolParam(q, "suspended")
	if err != nil {
		s.writeErr(w, r, err)
		return
	}
	o := dtq.ListOpts{Queue: queue, Status: dtq.Status(q.Get("status")), Type: q.Get("type"), Suspended: suspended,
		Cursor: q.Get("cursor"), IDPrefix: q.Get("id_prefix"), ErrorContains: q.Get("error")}
	for name, to := range map[string]*time.Time{"created_after": &o.CreatedAfter, "created_before": &o.CreatedBefore} {
		if v := q.Get(name); v != "" {
			t, err := time.Parse(time.RFC3339Nano, v)
			if err != nil {
				s.writeErr(w, r, invalidField(name, sprintf("must be an RFC 3339 time, e.g. 2026-12-01T08:00:00Z (got %q)", shorten(json.RawMessage(v)))))
				return
			}
			*to = t
		}
	}
	if l := q.Get("limit"); l != "" {
		n, err := strconv.Atoi(l)
		if err != nil || n < 1 || n > maxListLimit {
			s.writeErr(w, r, invalidField("limit", sprintf("must be an integer from 1 to %d (got %q)", maxListLimit, l)))
			return
		}
		o.Limit = n
	}
	page, err := s.c.List(r.Context(), o)
	if err != nil {
		s.writeErr(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, taskPageOf(page))
}

func (s *Server) cancelTask(w http.ResponseWriter, r *http.Request) {
	t, err := s.c.Cancel(r.Context(), r.PathValue("id"))
	if err != nil {
		s.writeErr(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, taskOf(t))
}

// signalTask: POST /api/v1/tasks/{id}/signals/{name} {"payload"} → 200
// {"task_id", "name", "delivered"}; 409 signal_delivered or task_finished.
func (s *Server) signalTask(w http.ResponseWriter, r *http.Request) {
	var b wire.Signal
	if err := readJSON(w, r, s.cfg.MaxBodyBytes, &b); err != nil {
		s.writeErr(w, r, err)
		return
	}
	payload := any(nil)
	if b.Payload != nil {
		payload = b.Payload
	}
	id, name := r.PathValue("id"), r.PathValue("name")
	if err := s.c.Signal(r.Context(), id, name, payload); err != nil {
		s.writeErr(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, wire.SignalDelivered{TaskID: id, Name: name, Delivered: true})
}
