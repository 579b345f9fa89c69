package api

import (
	"encoding/base64"
	"net/http"
	"net/url"
	"path"
	"strings"

	"github.com/coder/websocket"
	"github.com/dtq-dev/dtq/api/wire"
	"github.com/dtq-dev/dtq/internal/keys"
)

// events serves GET /ws/events: a WebSocket of task lifecycle events, one
// text frame per event holding the JSON of a wire.Event, optionally only of
// the queues named by ?queue= (repeatable, or comma-separated).
//
// Everything a request can get wrong is answered before the upgrade, in the
// API's error shape: 401 (API key, with APIKeyReads), 400 (queue filter,
// handshake headers), 403 (Origin), 426 (not a WebSocket handshake), and 503
// after Server.Close. The API key may come in the X-API-Key header or, since
// browsers cannot set headers on a WebSocket, in the api_key query parameter.
func (s *Server) events(w http.ResponseWriter, r *http.Request) {
	if !s.wsAuthorized(r) {
		writeError(w, http.StatusUnauthorized, wire.CodeUnauthorized, "a valid X-API-Key header or api_key query parameter is required")
		return
	}
	queues, err := wsQueues(r.URL.Query()["queue"])
	if err != nil {
		s.writeErr(w, r, err)
		return
	}
	if err := s.checkOrigin(r); err != nil {
		s.writeErr(w, r, err)
		return
	}
	if err := checkHandshake(w, r); err != nil {
		s.writeErr(w, r, err)
		return
	}
	// Register before the upgrade: once the client sees 101, it misses no
	// event the hub receives.
	cl, ok := s.hub.add(r.Context(), queues)
	if !ok {
		writeError(w, http.StatusServiceUnavailable, wire.CodeUnavailable, "the server is shutting down")
		return
	}
	defer s.hub.remove(cl)
	// The Origin was checked above, with the same rules as the websocket
	// package's; skipping its check keeps one answer (and no log.Printf of a
	// bad pattern).
	conn, err := websocket.Accept(w, r, &websocket.AcceptOptions{InsecureSkipVerify: true})
	if err != nil {
		s.log.Warn("websocket upgrade failed", "path", r.URL.Path, "error", err)
		return
	}
	s.hub.serve(r.Context(), conn, cl)
}

// wsAuthorized reports whether r may open the events route: always unless
// APIKeyReads, then with a key of any role (every role may read) in the
// X-API-Key header or the api_key query parameter (compared as SHA-256
// digests, in constant time).
func (s *Server) wsAuthorized(r *http.Request) bool {
	if len(s.keyring) == 0 || !s.cfg.APIKeyReads {
		return true
	}
	_, header := s.keyring.role(r.Header.Get("X-API-Key"))
	_, query := s.keyring.role(r.URL.Query().Get("api_key"))
	return header || query
}

// wsQueues parses the ?queue= values: each a queue name or a comma-separated
// list of them. No value means every queue (nil).
func wsQueues(values []string) (map[string]bool, error) {
	if len(values) == 0 {
		return nil, nil
	}
	queues := make(map[string]bool)
	for _, v := range values {
		for q := range strings.SplitSeq(v, ",") {
			if err := keys.CheckName("queue", q); err != nil {
				return nil, &httpError{http.StatusBadRequest, wire.CodeInvalid, err.Error()}
			}
			queues[q] = true
		}
	}
	return queues, nil
}

// checkOrigin allows a request without an Origin header (not a browser), an
// Origin whose host is the request's Host, and one matching an entry of
// AllowedOrigins, as websocket.AcceptOptions.OriginPatterns match them: a
// path.Match pattern of the host, or of scheme://host when it has "://".
func (s *Server) checkOrigin(r *http.Request) error {
	origin := r.Header.Get("Origin")
	if origin == "" {
		return nil
	}
	u, err := url.Parse(origin)
	if err != nil {
		return &httpError{http.StatusForbidden, wire.CodeForbiddenOrigin, "the Origin header is not a URL"}
	}
	if strings.EqualFold(r.Host, u.Host) {
		return nil
	}
	for _, p := range s.cfg.AllowedOrigins {
		target := u.Host
		if strings.Contains(p, "://") {
			target = u.Scheme + "://" + u.Host
		}
		if ok, err := path.Match(strings.ToLower(p), strings.ToLower(target)); ok && err == nil {
			return nil
		}
	}
	return &httpError{http.StatusForbidden, wire.CodeForbiddenOrigin, sprintf("Origin %q is not allowed", origin)}
}

// checkHandshake checks what websocket.Accept checks, so that a bad request
// gets its answer in the API's error shape.
func checkHandshake(w http.ResponseWriter, r *http.Request) error {
	if !r.ProtoAtLeast(1, 1) || !headerHasToken(r.Header, "Connection", "upgrade") || !headerHasToken(r.Header, "Upgrade", "websocket") {
		w.Header().Set("Connection", "Upgrade")
		w.Header().Set("Upgrade", "websocket")
		return &httpError{http.StatusUpgradeRequired, wire.CodeUpgradeRequired, "this route is a WebSocket: send an HTTP/1.1 upgrade request"}
	}
	if r.Header.Get("Sec-WebSocket-Version") != "13" {
		w.Header().Set("Sec-WebSocket-Version", "13")
		return badRequest("Sec-WebSocket-Version must be 13")
	}
	k := r.Header.Values("Sec-WebSocket-Key")
	if len(k) != 1 {
		return badRequest("one Sec-WebSocket-Key header is required")
	}
	if v, err := base64.StdEncoding.DecodeString(strings.TrimSpace(k[0])); err != nil || len(v) != 16 {
		return badRequest("Sec-WebSocket-Key must be 16 bytes in base64")
	}
	return nil
}

// headerHasToken reports whether a comma-separated header of h holds token,
// ignoring case.
func headerHasToken(h http.Header, name, token string) bool {
	for _, v := range h.Values(name) {
		for t := range strings.SplitSeq(v, ",") {
			if strings.EqualFold(strings.TrimSpace(t), token) {
				return true
			}
		}
	}
	return false
}

// warnBadOrigins logs each entry of AllowedOrigins that is not a valid
// path.Match pattern: it matches no origin. (New has no error to return.)
func (s *Server) warnBadOrigins() {
	for _, p := range s.cfg.AllowedOrigins {
		if _, err := path.Match(p, ""); err != nil {
			s.log.Warn("AllowedOrigins entry is not a valid pattern; it matches no origin", "pattern", p)
		}
	}
}
