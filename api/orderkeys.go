package api

import (
	"net/http"
	"strconv"

	"github.com/dtq-dev/dtq"
	"github.com/dtq-dev/dtq/api/wire"
)

// listOrderKeys serves GET /api/v1/queues/{name}/order-keys: one page of
// the queue's order keys with a task in flight.
func (s *Server) listOrderKeys(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	limit := 100
	if l := q.Get("limit"); l != "" {
		n, err := strconv.Atoi(l)
		if err != nil || n < 1 || n > dtq.MaxOrderKeysLimit {
			s.writeErr(w, r, invalidField("limit", sprintf("must be an integer from 1 to %d (got %q)", dtq.MaxOrderKeysLimit, l)))
			return
		}
		limit = n
	}
	name := r.PathValue("name")
	if !s.existingQueue(w, r, name) {
		return
	}
	ks, next, err := s.admin.OrderKeys(r.Context(), name, limit, q.Get("cursor"))
	if err != nil {
		s.writeErr(w, r, err)
		return
	}
	list := wire.OrderKeyList{Keys: make([]wire.OrderKey, len(ks)), NextCursor: next}
	for i, k := range ks {
		list.Keys[i] = wire.OrderKey{Key: k.Key, InFlight: k.InFlight, Waiting: k.Waiting}
	}
	writeJSON(w, http.StatusOK, list)
}

// getOrderKey serves GET /api/v1/queues/{name}/order-keys/{key}: the key's
// line.
func (s *Server) getOrderKey(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	if !s.existingQueue(w, r, name) {
		return
	}
	l, err := s.admin.OrderKey(r.Context(), name, r.PathValue("key"))
	if err != nil {
		s.writeErr(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, wire.OrderKeyLine{Queue: l.Queue, Key: l.Key, InFlight: l.InFlight, Waiting: l.Waiting, Next: l.Next})
}
