package api

import "time"

// SetWSTimings sets the ping interval and the write (and pong) timeout of
// s's WebSocket clients. Call it before s serves.
func SetWSTimings(s *Server, ping, write time.Duration) {
	s.hub.ping, s.hub.writeTimeout = ping, write
}

// WSClients returns the number of WebSocket clients s serves.
func WSClients(s *Server) int { return s.hub.count() }
