package api

import (
	"crypto/sha256"
	"crypto/subtle"
	"net/http"
)

// auth guards a handler with the API key: required on mutating and admin
// routes when a key is configured, and on reads too with APIKeyReads. The
// comparison is between SHA-256 digests, in constant time.
func (s *Server) auth(read bool, h http.HandlerFunc) http.HandlerFunc {
	if s.keyHash == nil || (read && !s.cfg.APIKeyReads) {
		return h
	}
	return func(w http.ResponseWriter, r *http.Request) {
		got := sha256.Sum256([]byte(r.Header.Get("X-API-Key")))
		if subtle.ConstantTimeCompare(got[:], s.keyHash) != 1 {
			writeError(w, http.StatusUnauthorized, codeUnauthorized, "a valid X-API-Key header is required")
			return
		}
		h(w, r)
	}
}
