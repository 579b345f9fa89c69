package api

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/dtq-dev/dtq"
	"github.com/dtq-dev/dtq/api/wire"
	"github.com/dtq-dev/dtq/internal/keys"
)

// listDead: GET /api/v1/dlq?queue=&limit=&cursor=
func (s *Server) listDead(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	queue, err := queueParam(q, dtq.DefaultQueue)
	if err != nil {
		s.writeErr(w, r, err)
		return
	}
	limit := 50
	if l := q.Get("limit"); l != "" {
		n, err := strconv.Atoi(l)
		if err != nil || n < 1 || n > 1000 {
			s.writeErr(w, r, invalidField("limit", sprintf("must be an integer from 1 to 1000 (got %q)", l)))
			return
		}
		limit = n
	}
	letters, next, err := s.admin.ListDead(r.Context(), queue, limit, q.Get("cursor"))
	if err != nil {
		s.writeErr(w, r, err)
		return
	}
	page := wire.DeadLetterPage{DeadLetters: make([]wire.DeadLetter, len(letters)), NextCursor: next}
	for i := range letters {
		page.DeadLetters[i] = deadLetterOf(&letters[i])
	}
	writeJSON(w, http.StatusOK, page)
}

func (s *Server) requeue(w http.ResponseWriter, r *http.Request) {
	t, err := s.admin.Requeue(r.Context(), r.PathValue("id"))
	if err != nil {
		s.writeErr(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, taskOf(t))
}

// runNow: POST /api/v1/tasks/{id}/run-now → 200 the task; 409
// not_scheduled.
func (s *Server) runNow(w http.ResponseWriter, r *http.Request) {
	t, err := s.admin.RunNow(r.Context(), r.PathValue("id"))
	if err != nil {
		s.writeErr(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, taskOf(t))
}

func (s *Server) discard(w http.ResponseWriter, r *http.Request) {
	if err := s.admin.Discard(r.Context(), r.PathValue("id")); err != nil {
		s.writeErr(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, wire.DiscardedTask{Discarded: r.PathValue("id")})
}

// requeueAll and purge act on ?queue= or, without it, on every queue.
func (s *Server) requeueAll(w http.ResponseWriter, r *http.Request) {
	s.eachQueue(w, r, "requeued", s.redriveAll)
}

// redriveAll requeues every dead letter of queue there when it starts and
// returns how many: a redrive of the queue at the highest rate, again while
// more match (over dtq.MaxRedriveLimit). The later passes take only the
// letters dead before the first began (by this server's clock), so a task
// requeued by an earlier one that dies again is not requeued twice.
func (s *Server) redriveAll(ctx context.Context, queue string) (int, error) {
	f := dtq.RedriveFilter{Queue: queue}
	o := dtq.RedriveOpts{Limit: dtq.MaxRedriveLimit, Rate: dtq.MaxRedriveRate}
	began, total := time.Now(), 0
	for {
		res, err := s.admin.Redrive(ctx, f, o)
		if res != nil {
			total += res.Requeued
		}
		if err != nil || !res.More {
			return total, err
		}
		f.Before = began
	}
}

func (s *Server) purge(w http.ResponseWriter, r *http.Request) {
	s.eachQueue(w, r, "discarded", s.admin.Purge)
}

// queuesOf returns the request's ?queue=, or without it every queue.
func (s *Server) queuesOf(r *http.Request) ([]string, error) {
	if q, err := queueParam(r.URL.Query(), ""); q != "" || err != nil {
		return []string{q}, err
	}
	all, err := s.admin.Queues(r.Context())
	if err != nil {
		return nil, err
	}
	queues := make([]string, 0, len(all))
	for _, q := range all {
		queues = append(queues, q.Name)
	}
	return queues, nil
}

// eachQueue runs act on the queues of the request and answers the total:
// what is "requeued" (wire.RequeuedCount) or "discarded"
// (wire.DiscardedCount).
func (s *Server) eachQueue(w http.ResponseWriter, r *http.Request, what string, act func(ctx context.Context, queue string) (int, error)) {
	queues, err := s.queuesOf(r)
	if err != nil {
		s.writeErr(w, r, err)
		return
	}
	if r.URL.Query().Has("queue") && !s.existingQueue(w, r, queues[0]) {
		return
	}
	total := 0
	for _, q := range queues {
		n, err := act(r.Context(), q)
		total += n
		if err != nil {
			s.writeErr(w, r, err)
			return
		}
	}
	if what == "requeued" {
		writeJSON(w, http.StatusOK, wire.RequeuedCount{Requeued: total})
		return
	}
	writeJSON(w, http.StatusOK, wire.DiscardedCount{Discarded: total})
}

func (s *Server) listQueues(w http.ResponseWriter, r *http.Request) {
	qs, err := s.admin.Queues(r.Context())
	if err != nil {
		s.writeErr(w, r, err)
		return
	}
	list := wire.QueueList{Queues: make([]wire.QueueStats, len(qs))}
	for i, q := range qs {
		list.Queues[i] = queueStatsOf(q)
	}
	writeJSON(w, http.StatusOK, list)
}

func (s *Server) getQueue(w http.ResponseWriter, r *http.Request) {
	if !s.existingQueue(w, r, r.PathValue("name")) {
		return
	}
	st, err := s.admin.Stats(r.Context(), r.PathValue("name"))
	if err != nil {
		s.writeErr(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, queueStatsOf(st))
}

// deleteQueue serves DELETE /api/v1/queues/{name}[?force=true].
func (s *Server) deleteQueue(w http.ResponseWriter, r *http.Request) {
	force, err := boolParam(r.URL.Query(), "force")
	if err != nil {
		s.writeErr(w, r, err)
		return
	}
	if !s.existingQueue(w, r, r.PathValue("name")) {
		return
	}
	d, err := s.admin.DeleteQueue(r.Context(), r.PathValue("name"), &dtq.DeleteQueueOpts{Force: force})
	if err != nil {
		s.writeErr(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, deletedOf(d))
}

func (s *Server) pause(w http.ResponseWriter, r *http.Request) {
	s.setPaused(w, r, s.admin.PauseQueue)
}

func (s *Server) resume(w http.ResponseWriter, r *http.Request) {
	s.setPaused(w, r, s.admin.ResumeQueue)
}

func (s *Server) setPaused(w http.ResponseWriter, r *http.Request, act func(ctx context.Context, queue string) error) {
	if !s.existingQueue(w, r, r.PathValue("name")) {
		return
	}
	if err := act(r.Context(), r.PathValue("name")); err != nil {
		s.writeErr(w, r, err)
		return
	}
	s.getQueue(w, r)
}

// existingQueue answers 404 for a queue that does not exist (400 for a
// name that is none) and then returns false: an admin action on a queue
// never makes one, so a misspelt name is an error, not a new queue.
// Submissions, schedules and the PUT of limits and group weights, which
// set up a queue for its tasks, make queues (dtq.Admin.QueueExists).
func (s *Server) existingQueue(w http.ResponseWriter, r *http.Request, name string) bool {
	ok, err := s.admin.QueueExists(r.Context(), name)
	if err != nil {
		s.writeErr(w, r, err)
		return false
	}
	if !ok {
		s.writeErr(w, r, &httpError{http.StatusNotFound, wire.CodeNotFound,
			sprintf("no such queue %q (a queue exists once a task, workflow or schedule is submitted to it or a limit is set on it)", name)})
	}
	return ok
}

// queueParam returns the ?queue= parameter of query, or def without one.
// A parameter given empty is refused: "" is not a queue, and
// "?queue=$QUEUE" with QUEUE unset must not act on the default queue (or,
// for requeue-all and purge, on every queue).
func queueParam(query url.Values, def string) (string, error) {
	if !query.Has("queue") {
		return def, nil
	}
	return queueName(query.Get("queue"))
}

// boolParam returns the boolean query parameter name: false without it,
// true or false as strconv.ParseBool reads it ("true", "1", "false", …),
// a 400 invalid_field for any other value.
func boolParam(query url.Values, name string) (bool, error) {
	if !query.Has(name) {
		return false, nil
	}
	v, err := strconv.ParseBool(query.Get(name))
	if err != nil {
		return false, invalidField(name, sprintf("must be true or false (got %q)", shorten(json.RawMessage(query.Get(name)))))
	}
	return v, nil
}

// queueName refuses an empty queue name given explicitly (in a body or a
// query), which the engine would take for the default queue, with the
// rule of names; every other name is the engine's to check.
func queueName(q string) (string, error) {
	if q == "" {
		return "", invalidField("queue", `must be `+keys.NameRule+` (got ""; leave it out for the default queue)`)
	}
	return q, nil
}

func (s *Server) workers(w http.ResponseWriter, r *http.Request) {
	ws, err := s.admin.Workers(r.Context())
	if err != nil {
		s.writeErr(w, r, err)
		return
	}
	list := wire.WorkerList{Workers: make([]wire.WorkerInfo, len(ws))}
	for i := range ws {
		list.Workers[i] = workerOf(&ws[i])
	}
	writeJSON(w, http.StatusOK, list)
}

// quietWorker: POST /api/v1/workers/{id}/quiet → 200 {worker, requested}.
func (s *Server) quietWorker(w http.ResponseWriter, r *http.Request) {
	s.controlWorker(w, r, s.admin.QuietWorker)
}

// stopWorker: POST /api/v1/workers/{id}/stop → 200 {worker, requested}.
func (s *Server) stopWorker(w http.ResponseWriter, r *http.Request) {
	s.controlWorker(w, r, s.admin.StopWorker)
}

func (s *Server) controlWorker(w http.ResponseWriter, r *http.Request, ask func(context.Context, string) (string, error)) {
	id := r.PathValue("id")
	requested, err := ask(r.Context(), id)
	if err != nil {
		s.writeErr(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, wire.WorkerControl{Worker: id, Requested: requested})
}

func (s *Server) audit(w http.ResponseWriter, r *http.Request) {
	limit := 100
	if l := r.URL.Query().Get("limit"); l != "" {
		n, err := strconv.Atoi(l)
		if err != nil || n < 1 || n > 1000 {
			s.writeErr(w, r, invalidField("limit", sprintf("must be an integer from 1 to 1000 (got %q)", l)))
			return
		}
		limit = n
	}
	entries, err := s.admin.Audit(r.Context(), limit)
	if err != nil {
		s.writeErr(w, r, err)
		return
	}
	list := wire.AuditList{Entries: make([]wire.AuditEntry, len(entries))}
	for i := range entries {
		list.Entries[i] = auditOf(&entries[i])
	}
	writeJSON(w, http.StatusOK, list)
}
