package api_test

// The probes of the history route: part of TestOpenAPIAnswers.

// history provokes the answers of GET /api/v1/history: a stretch of every
// queue, one of a queue (after the probes before it ran tasks on it), and
// the 400s and the 404.
func (p *prober) history(e *env) {
	r := p.do(e, 200, opHistory, "/api/v1/history?last=10m", "")
	if r.str("step") != "minute" {
		p.t.Errorf("history of every queue: %s", r.raw)
	}
	if b, _ := r.body["buckets"].([]any); len(b) < 10 || len(b) > 11 {
		p.t.Errorf("10 minutes of buckets: %d", len(b))
	}
	p.do(e, 200, opHistory, "/api/v1/history?queue=default&type=echo&step=hour&last=24h", "")
	p.do(e, 404, opHistory, "/api/v1/history?queue=nothing-here", "")
	for _, bad := range []string{"?step=day", "?since=yesterday", "?last=-1h", "?last=1h&since=2026-12-01T00:00:00Z",
		"?step=minute&last=48h", "?queue=a%20b", "?type=a%20b", "?since=2026-12-01T00:00:00Z&until=2026-11-01T00:00:00Z"} {
		p.do(e, 400, opHistory, "/api/v1/history"+bad, "")
	}
}
