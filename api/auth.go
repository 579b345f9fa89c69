package api

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"net/http"
	"time"

	"github.com/dtq-dev/dtq"
	"github.com/dtq-dev/dtq/api/wire"
)

// auth guards a handler with the API key: required on mutating and admin
// routes when a key is configured, and on reads too with APIKeyReads. The
// comparison is between SHA-256 digests, in constant time. It also bounds
// the request's time with RequestTimeout.
func (s *Server) auth(read bool, h http.HandlerFunc) http.HandlerFunc {
	return s.authFor(read, 0, h)
}

// authFor is auth whose request may take extra time beyond RequestTimeout
// (a long poll's wait).
func (s *Server) authFor(read bool, extra time.Duration, h http.HandlerFunc) http.HandlerFunc {
	open := s.keyHash == nil || (read && !s.cfg.APIKeyReads)
	return func(w http.ResponseWriter, r *http.Request) {
		if !open {
			got := sha256.Sum256([]byte(r.Header.Get("X-API-Key")))
			if subtle.ConstantTimeCompare(got[:], s.keyHash) != 1 {
				writeError(w, http.StatusUnauthorized, wire.CodeUnauthorized, "a valid X-API-Key header is required")
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
