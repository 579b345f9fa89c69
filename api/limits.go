package api

import (
	"context"
	"net/http"
	"time"

	"github.com/dtq-dev/dtq"
	"github.com/dtq-dev/dtq/api/wire"
)

// listLimits serves GET /api/v1/limits: every queue's limits that are set.
func (s *Server) listLimits(w http.ResponseWriter, r *http.Request) {
	ls, err := s.admin.Limits(r.Context())
	if err != nil {
		s.writeErr(w, r, err)
		return
	}
	out := wire.LimitList{Limits: make([]wire.Limit, len(ls))}
	for i, l := range ls {
		out.Limits[i] = limitOf(l)
	}
	writeJSON(w, http.StatusOK, out)
}

// getLimit serves GET /api/v1/limits/{queue} (max_running 0 and no rate:
// none).
func (s *Server) getLimit(w http.ResponseWriter, r *http.Request) {
	if !s.existingQueue(w, r, r.PathValue("queue")) {
		return
	}
	l, err := s.admin.Limit(r.Context(), r.PathValue("queue"))
	if err != nil {
		s.writeErr(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, limitOf(l))
}

// putLimit serves PUT /api/v1/limits/{queue}: sets its limits.
func (s *Server) putLimit(w http.ResponseWriter, r *http.Request) {
	if spec, ok := s.readLimitBody(w, r); ok {
		s.setLimits(w, r, spec)
	}
}

// putTypeLimit serves PUT /api/v1/limits/{queue}/types/{type}.
func (s *Server) putTypeLimit(w http.ResponseWriter, r *http.Request) {
	if spec, ok := s.readLimitBody(w, r); ok {
		s.setScope(w, r, spec, s.admin.SetTypeLimits, r.PathValue("type"))
	}
}

// putKeyLimit serves PUT /api/v1/limits/{queue}/keys/{key}.
func (s *Server) putKeyLimit(w http.ResponseWriter, r *http.Request) {
	if spec, ok := s.readLimitBody(w, r); ok {
		s.setScope(w, r, spec, s.admin.SetKeyLimits, r.PathValue("key"))
	}
}

// deleteTypeLimit serves DELETE /api/v1/limits/{queue}/types/{type} (404
// for a queue that does not exist; PUT makes one).
func (s *Server) deleteTypeLimit(w http.ResponseWriter, r *http.Request) {
	if s.existingQueue(w, r, r.PathValue("queue")) {
		s.clearScope(w, r, s.admin.ClearTypeLimits, r.PathValue("type"))
	}
}

// deleteKeyLimit serves DELETE /api/v1/limits/{queue}/keys/{key} (404 for
// a queue that does not exist).
func (s *Server) deleteKeyLimit(w http.ResponseWriter, r *http.Request) {
	if s.existingQueue(w, r, r.PathValue("queue")) {
		s.clearScope(w, r, s.admin.ClearKeyLimits, r.PathValue("key"))
	}
}

// setScope sets a type's or limit key's limits with set and answers the
// queue's limits.
func (s *Server) setScope(w http.ResponseWriter, r *http.Request, spec dtq.LimitSpec,
	set func(context.Context, string, string, dtq.LimitSpec) error, name string) {
	if err := set(r.Context(), r.PathValue("queue"), name, spec); err != nil {
		s.writeErr(w, r, err)
		return
	}
	s.getLimit(w, r)
}

// clearScope removes a type's or limit key's limits with clear and answers
// the queue's limits.
func (s *Server) clearScope(w http.ResponseWriter, r *http.Request, clear func(context.Context, string, string) error, name string) {
	if err := clear(r.Context(), r.PathValue("queue"), name); err != nil {
		s.writeErr(w, r, err)
		return
	}
	s.getLimit(w, r)
}

// readLimitBody reads a body of limits; false when it answered an error.
func (s *Server) readLimitBody(w http.ResponseWriter, r *http.Request) (dtq.LimitSpec, bool) {
	var b wire.LimitRequest
	if err := readJSON(w, r, s.cfg.MaxBodyBytes, &b); err != nil {
		s.writeErr(w, r, err)
		return dtq.LimitSpec{}, false
	}
	spec := dtq.LimitSpec{Per: time.Second}
	switch {
	case b.MaxRunning == nil && b.Rate == nil:
		s.writeErr(w, r, invalidField("max_running", "or rate is required (DELETE removes the limits)"))
		return spec, false
	case b.MaxRunning != nil && *b.MaxRunning < 1:
		s.writeErr(w, r, invalidField("max_running", sprintf("must be at least 1 (got %d; leave it out for none)", *b.MaxRunning)))
		return spec, false
	case b.Rate != nil && *b.Rate < 1:
		s.writeErr(w, r, invalidField("rate", sprintf("must be at least 1 (got %d; leave it out for none)", *b.Rate)))
		return spec, false
	case b.Rate == nil && (b.PerSeconds != nil || b.Burst != nil):
		s.writeErr(w, r, invalidField("rate", "is required with per_seconds and burst"))
		return spec, false
	}
	if b.MaxRunning != nil {
		spec.MaxRunning = *b.MaxRunning
	}
	if b.Rate != nil {
		spec.Rate = *b.Rate
		if b.PerSeconds != nil {
			d, err := secondsField("per_seconds", b.PerSeconds)
			if err != nil {
				s.writeErr(w, r, err)
				return spec, false
			}
			spec.Per = d
		}
		if b.Burst != nil {
			spec.Burst = *b.Burst
		}
	}
	if b.OnFull != nil {
		spec.OnFull = dtq.OnFull(*b.OnFull)
	}
	return spec, true
}

// deleteLimit serves DELETE /api/v1/limits/{queue}: removes its limits (404
// for a queue that does not exist).
func (s *Server) deleteLimit(w http.ResponseWriter, r *http.Request) {
	if !s.existingQueue(w, r, r.PathValue("queue")) {
		return
	}
	if err := s.admin.ClearLimits(r.Context(), r.PathValue("queue")); err != nil {
		s.writeErr(w, r, err)
		return
	}
	s.getLimit(w, r)
}

// setLimits replaces the queue's limits with spec and answers them.
func (s *Server) setLimits(w http.ResponseWriter, r *http.Request, spec dtq.LimitSpec) {
	if err := s.admin.SetLimits(r.Context(), r.PathValue("queue"), spec); err != nil {
		s.writeErr(w, r, err)
		return
	}
	s.getLimit(w, r)
}
