package api

import (
	"net/http"

	"github.com/dtq-dev/dtq/api/wire"
)

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
	list := wire.GroupList{Groups: make([]wire.GroupWeight, len(gs))}
	for i := range gs {
		list.Groups[i] = groupOf(&gs[i])
	}
	writeJSON(w, http.StatusOK, list)
}

// putGroup serves PUT /api/v1/queues/{name}/groups/{group}: its weight.
func (s *Server) putGroup(w http.ResponseWriter, r *http.Request) {
	var b wire.GroupRequest
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
	writeJSON(w, http.StatusOK, wire.GroupWeight{Group: group, Weight: weight})
}
