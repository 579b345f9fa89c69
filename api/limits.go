package api

import (
	"encoding/json"
	"net/http"
	"time"

	"github.com/dtq-dev/dtq"
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
	Queue       string     `json:"queue"`
	MaxRunning  int64      `json:"max_running"`
	InUse       int64      `json:"in_use"`
	Rate        int64      `json:"rate,omitempty"`
	PerSeconds  float64    `json:"per_seconds,omitempty"`
	Burst       int64      `json:"burst,omitempty"`
	PausedUntil *time.Time `json:"paused_until,omitempty"`
}

func viewOfLimit(l *dtq.LimitInfo) limitView {
	return limitView{Queue: l.Queue, MaxRunning: l.MaxRunning, InUse: l.InUse, Rate: l.Rate, PerSeconds: l.Per.Seconds(),
		Burst: l.Burst, PausedUntil: l.PausedUntil}
}

// listLimits serves GET /api/v1/limits: every queue's limits that are set.
func (s *Server) listLimits(w http.ResponseWriter, r *http.Request) {
	ls, err := s.c.Limits(r.Context())
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
	l, err := s.c.Limit(r.Context(), r.PathValue("queue"))
	if err != nil {
		s.writeErr(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, viewOfLimit(l))
}

// putLimit serves PUT /api/v1/limits/{queue}: sets its limits.
func (s *Server) putLimit(w http.ResponseWriter, r *http.Request) {
	var b limitBody
	if err := readJSON(w, r, s.cfg.MaxBodyBytes, &b); err != nil {
		s.writeErr(w, r, err)
		return
	}
	spec := dtq.LimitSpec{Per: time.Second}
	switch {
	case b.MaxRunning == nil && b.Rate == nil:
		s.writeErr(w, r, invalidField("max_running", "or rate is required (DELETE removes the limits)"))
		return
	case b.MaxRunning != nil && *b.MaxRunning < 1:
		s.writeErr(w, r, invalidField("max_running", sprintf("must be at least 1 (got %d; leave it out for none)", *b.MaxRunning)))
		return
	case b.Rate != nil && *b.Rate < 1:
		s.writeErr(w, r, invalidField("rate", sprintf("must be at least 1 (got %d; leave it out for none)", *b.Rate)))
		return
	case b.Rate == nil && (b.PerSeconds != nil || b.Burst != nil):
		s.writeErr(w, r, invalidField("rate", "is required with per_seconds and burst"))
		return
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
				return
			}
			spec.Per = d
		}
		if b.Burst != nil {
			spec.Burst = *b.Burst
		}
	}
	s.setLimits(w, r, spec)
}

// deleteLimit serves DELETE /api/v1/limits/{queue}: removes its limits.
func (s *Server) deleteLimit(w http.ResponseWriter, r *http.Request) {
	s.setLimits(w, r, dtq.LimitSpec{})
}

// setLimits replaces the queue's limits with spec and answers them.
func (s *Server) setLimits(w http.ResponseWriter, r *http.Request, spec dtq.LimitSpec) {
	if err := s.c.SetLimits(r.Context(), r.PathValue("queue"), spec); err != nil {
		s.writeErr(w, r, err)
		return
	}
	s.getLimit(w, r)
}
