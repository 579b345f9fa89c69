package api

import (
	"context"
	"encoding/json"
	"net/http"
	"time"

	"github.com/dtq-dev/dtq"
	"github.com/dtq-dev/dtq/internal/wiretime"
)

// limitBody is the body of PUT /api/v1/limits/{queue}: the queue's limits,
// replacing those it had (a limit left out is removed).
type limitBody struct {
	MaxRunning *int64          `json:"max_running"`
	Rate       *int64          `json:"rate"`
	PerSeconds json.RawMessage `json:"per_seconds"`
	Burst      *int64          `json:"burst"`
}

// limitView is a queue's limits as the API answers them.
type limitView struct {
	Queue       string         `json:"queue"`
	MaxRunning  int64          `json:"max_running"`
	InUse       int64          `json:"in_use"`
	Rate        int64          `json:"rate,omitempty"`
	PerSeconds  float64        `json:"per_seconds,omitempty"`
	Burst       int64          `json:"burst,omitempty"`
	PausedUntil *wiretime.Time `json:"paused_until,omitempty"`
	// Scopes are the limits of its task types and limit keys.
	Scopes []scopeView `json:"scopes,omitempty"`
}

// scopeView is a task type's or limit key's limits in a queue.
type scopeView struct {
	TaskType    string         `json:"task_type,omitempty"`
	LimitKey    string         `json:"limit_key,omitempty"`
	MaxRunning  int64          `json:"max_running"`
	InUse       int64          `json:"in_use"`
	Waiting     int64          `json:"waiting"`
	Rate        int64          `json:"rate,omitempty"`
	PerSeconds  float64        `json:"per_seconds,omitempty"`
	Burst       int64          `json:"burst,omitempty"`
	PausedUntil *wiretime.Time `json:"paused_until,omitempty"`
}

func viewOfLimit(l *dtq.LimitInfo) limitView {
	v := limitView{Queue: l.Queue, MaxRunning: l.MaxRunning, InUse: l.InUse, Rate: l.Rate, PerSeconds: l.Per.Seconds(),
		Burst: l.Burst, PausedUntil: wiretime.Ptr(l.PausedUntil)}
	for _, s := range l.Scopes {
		sv := scopeView{TaskType: s.TaskType, LimitKey: s.LimitKey, MaxRunning: s.MaxRunning, InUse: s.InUse, Waiting: s.Waiting,
			Rate: s.Rate, Burst: s.Burst, PausedUntil: wiretime.Ptr(s.PausedUntil)}
		if s.Rate > 0 {
			sv.PerSeconds = s.Per.Seconds()
		}
		v.Scopes = append(v.Scopes, sv)
	}
	return v
}

// listLimits serves GET /api/v1/limits: every queue's limits that are set.
func (s *Server) listLimits(w http.ResponseWriter, r *http.Request) {
	ls, err := s.admin.Limits(r.Context())
	if err != nil {
		s.writeErr(w, r, err)
		return
	}
	out := make([]limitView, len(ls))
	for i, l := range ls {
		out[i] = viewOfLimit(l)
	}
	writeJSON(w, http.StatusOK, map[string]any{"limits": out})
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
	writeJSON(w, http.StatusOK, viewOfLimit(l))
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
		s.setScope(w, r, dtq.LimitSpec{}, s.admin.SetTypeLimits, r.PathValue("type"))
	}
}

// deleteKeyLimit serves DELETE /api/v1/limits/{queue}/keys/{key} (404 for
// a queue that does not exist).
func (s *Server) deleteKeyLimit(w http.ResponseWriter, r *http.Request) {
	if s.existingQueue(w, r, r.PathValue("queue")) {
		s.setScope(w, r, dtq.LimitSpec{}, s.admin.SetKeyLimits, r.PathValue("key"))
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

// readLimitBody reads a body of limits; false when it answered an error.
func (s *Server) readLimitBody(w http.ResponseWriter, r *http.Request) (dtq.LimitSpec, bool) {
	var b limitBody
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
	return spec, true
}

// deleteLimit serves DELETE /api/v1/limits/{queue}: removes its limits (404
// for a queue that does not exist).
func (s *Server) deleteLimit(w http.ResponseWriter, r *http.Request) {
	if s.existingQueue(w, r, r.PathValue("queue")) {
		s.setLimits(w, r, dtq.LimitSpec{})
	}
}

// setLimits replaces the queue's limits with spec and answers them.
func (s *Server) setLimits(w http.ResponseWriter, r *http.Request, spec dtq.LimitSpec) {
	if err := s.admin.SetLimits(r.Context(), r.PathValue("queue"), spec); err != nil {
		s.writeErr(w, r, err)
		return
	}
	s.getLimit(w, r)
}
