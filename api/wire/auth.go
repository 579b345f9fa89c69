package wire

// Whoami is the answer of GET /api/v1/whoami: the role of the request's
// X-API-Key — "read", "submit", "worker" or "admin" — or "none" when it
// sent no key while reads are open. A server without any key answers
// "admin": everything is open.
type Whoami struct {
	Role string `json:"role"`
}
