package api

import (
	_ "embed"
	"net/http"
)

// openAPI is the OpenAPI 3.1 document of the API, written by hand. Its
// test checks it against the routes the Server registers and against real
// answers: a route or a response field added without it fails that test.
//
//go:embed openapi.json
var openAPI []byte

// openapi serves GET /api/v1/openapi.json.
func (s *Server) openapi(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	w.Write(openAPI)
}
