package api

import (
	"net/http"
)

// limitBody is the body of PUT /api/v1/limits/{queue}.
type limitBody struct {
	MaxRunning *int64 `json:"max_running"`
}

// listLimits serves GET /api/v1/limits: every queue's limit that is set.
func (s *Server) listLimits(w http.ResponseWriter, r *http.Request) {
	ls, err := s.c.ConcurrencyLimits(r.Context())
	if err != nil {
		s.writeErr(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"limits": ls})
}

// getLimit serves GET /api/v1/limits/{queue} (max_running 0: none).
func (s *Server) getLimit(w http.ResponseWriter, r *http.Request) {
	l, err := s.c.ConcurrencyLimit(r.Context(), r.PathValue("queue"))
	if err != nil {
		s.writeErr(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, l)
}

// putLimit serves PUT /api/v1/limits/{queue}: sets its concurrency limit.
func (s *Server) putLimit(w http.ResponseWriter, r *http.Request) {
	var b limitBody
	if err := readJSON(w, r, s.cfg.MaxBodyBytes, &b); err != nil {
		s.writeErr(w, r, err)
		return
	}
	if b.MaxRunning == nil {
		s.writeErr(w, r, invalidField("max_running", "is required (DELETE removes a limit)"))
		return
	}
	if *b.MaxRunning < 1 {
		s.writeErr(w, r, invalidField("max_running", sprintf("must be at least 1 (got %d; DELETE removes a limit)", *b.MaxRunning)))
		return
	}
	s.setLimit(w, r, *b.MaxRunning)
}

// deleteLimit serves DELETE /api/v1/limits/{queue}: removes its limit.
func (s *Server) deleteLimit(w http.ResponseWriter, r *http.Request) {
	s.setLimit(w, r, 0)
}

func (s *Server) setLimit(w http.ResponseWriter, r *http.Request, max int64) {
	if err := s.c.SetConcurrencyLimit(r.Context(), r.PathValue("queue"), max); err != nil {
		s.writeErr(w, r, err)
		return
	}
	s.getLimit(w, r)
}
