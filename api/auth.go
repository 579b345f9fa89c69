package api

import (
	"context"
	"net/http"
	"time"

	"github.com/dtq-dev/dtq"
	"github.com/dtq-dev/dtq/api/wire"
)

// route is one route of the API: its pattern and the least role that may
// call it (roleNone: anyone, without a key).
type route struct {
	pattern string
	role    Role
}

// routeTable registers the API's routes on a ServeMux, each behind the
// check of its role, and records them in order: the one table of routes and
// roles that the tests compare with openapi.json.
type routeTable struct {
	s      *Server
	routes *[]route
}

// handle registers h for pattern, callable with a key of role need or
// above, its time bounded by RequestTimeout.
func (t routeTable) handle(pattern string, need Role, h http.HandlerFunc) {
	t.handleWait(pattern, need, 0, h)
}

// handleWait is handle for a route whose request may take extra time
// beyond RequestTimeout (a long poll's wait).
func (t routeTable) handleWait(pattern string, need Role, extra time.Duration, h http.HandlerFunc) {
	*t.routes = append(*t.routes, route{pattern, need})
	t.s.mux.HandleFunc(pattern, t.s.authFor(pattern, need, extra, h))
}

// open registers h for pattern, callable by anyone.
func (t routeTable) open(pattern string, h http.HandlerFunc) {
	*t.routes = append(*t.routes, route{pattern, roleNone})
	t.s.mux.HandleFunc(pattern, h)
}

// own registers h for pattern, a route of role need that checks the key
// itself (the WebSocket, whose key may come in the query).
func (t routeTable) own(pattern string, need Role, h http.HandlerFunc) {
	*t.routes = append(*t.routes, route{pattern, need})
	t.s.mux.HandleFunc(pattern, h)
}

// authFor guards the handler h of route pattern with the API keys: when any
// key is configured, a request needs a key of role need or above (401
// without a known key, 403 with a key of a role below), except on reads
// (need RoleRead) without APIKeyReads. It also bounds the request's time
// with RequestTimeout plus extra.
func (s *Server) authFor(pattern string, need Role, extra time.Duration, h http.HandlerFunc) http.HandlerFunc {
	open := len(s.keyring) == 0 || (need == RoleRead && !s.cfg.APIKeyReads)
	return func(w http.ResponseWriter, r *http.Request) {
		if !open {
			role, ok := s.keyring.role(r.Header.Get("X-API-Key"))
			if !ok {
				writeError(w, http.StatusUnauthorized, wire.CodeUnauthorized, "a valid X-API-Key header is required")
				return
			}
			if !role.Allows(need) {
				writeError(w, http.StatusForbidden, wire.CodeForbidden,
					"this key's role ("+string(role)+") may not call "+pattern+": that needs "+holders(need))
				return
			}
		}
		// A caller's W3C trace context: the parent of the spans of what it
		// submits.
		ctx := dtq.TraceContext(r.Context(), r.Header.Get("traceparent"))
		ctx, cancel := context.WithTimeout(ctx, s.cfg.RequestTimeout+extra)
		defer cancel()
		h(w, r.WithContext(ctx))
	}
}

// whoami serves GET /api/v1/whoami: the role of the request's key, so a
// client (the dashboard) can offer only what the key may do. Without any
// configured key everything is open: admin. A request without a key (reads
// are open, or it would have got 401) is "none"; one with a key the server
// does not know gets 401, reads open or not.
func (s *Server) whoami(w http.ResponseWriter, r *http.Request) {
	role := RoleAdmin
	if len(s.keyring) > 0 {
		key := r.Header.Get("X-API-Key")
		role = roleNone
		if key != "" {
			var ok bool
			if role, ok = s.keyring.role(key); !ok {
				writeError(w, http.StatusUnauthorized, wire.CodeUnauthorized, "the server knows no such X-API-Key")
				return
			}
		}
	}
	writeJSON(w, http.StatusOK, wire.Whoami{Role: string(role)})
}
