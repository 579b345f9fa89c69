package api

import (
	"net/http"

	"github.com/dtq-dev/dtq"
)

// groupBody is the body of PUT /api/v1/queues/{name}/groups/{group}.
type groupBody struct {
	Weight *int `json:"weight"`
}

// listGroups serves GET /api/v1/queues/{name}/groups: the weighted groups.
func (s *Server) listGroups(w http.ResponseWriter, r *http.Request) {
	if !s.existingQueue(w, r, r.PathValue("name")) {
		return
	}
	gs, err := s.admin.GroupWeights(r.Context(), r.PathValue("name"))
	if err != nil {
		s.writeErr(w, r, err)
		return
	}
	if gs == nil {
		gs = []dtq.GroupInfo{}
	}
	writeJSON(w, http.StatusOK, map[string]any{"groups": gs})
}

// putGroup serves PUT /api/v1/queues/{name}/groups/{group}: its weight.
func (s *Server) putGroup(w http.ResponseWriter, r *http.Request) {
	var b groupBody
	if err := readJSON(w, r, s.cfg.MaxBodyBytes, &b); err != nil {
		s.writeErr(w, r, err)
		return
	}
	if b.Weight == nil {
		s.writeErr(w, r, invalidField("weight", "is required (DELETE sets the default, 1)"))
		return
	}
	s.setGroup(w, r, *b.Weight)
}

// deleteGroup serves DELETE /api/v1/queues/{name}/groups/{group}: weight 1
// (404 for a queue that does not exist; PUT makes one).
func (s *Server) deleteGroup(w http.ResponseWriter, r *http.Request) {
	if s.existingQueue(w, r, r.PathValue("name")) {
		s.setGroup(w, r, 1)
	}
}

func (s *Server) setGroup(w http.ResponseWriter, r *http.Request, weight int) {
	group := r.PathValue("group")
	if err := s.admin.SetGroupWeight(r.Context(), r.PathValue("name"), group, weight); err != nil {
		s.writeErr(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"group": group, "weight": weight})
}
