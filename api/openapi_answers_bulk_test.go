package api_test

import "strings"

// The probes of the bulk route: part of TestOpenAPIAnswers.

// bulk provokes the answers of POST /api/v1/tasks/bulk: a dry run and a
// cancel by filter, a selection with a skipped task, the 400s, the 404,
// the 413 and the 415.
func (p *prober) bulk(e *env) {
	for range 2 {
		p.do(e, 201, opSubmit, "/api/v1/tasks", `{"task_type":"echo","queue":"bulky","delay_seconds":3600}`)
	}
	filter := `"filter":{"queue":"bulky","status":"SCHEDULED","task_type":"echo","id_prefix":"bulky-","error_contains":"","created_after":"2026-01-01T00:00:00Z"}`
	if r := p.do(e, 200, opBulk, "/api/v1/tasks/bulk", `{"action":"cancel",`+filter+`,"dry_run":true}`); r.body["matched"] != 2.0 || r.body["done"] != 0.0 {
		p.t.Errorf("dry run: %s", r.raw)
	}
	if r := p.do(e, 200, opBulk, "/api/v1/tasks/bulk", `{"action":"cancel",`+filter+`,"limit":1,"rate_per_second":10}`); r.body["done"] != 1.0 || r.body["more"] != true {
		p.t.Errorf("cancel one of two: %s", r.raw)
	}
	r := p.do(e, 200, opBulk, "/api/v1/tasks/bulk", `{"action":"delete","ids":["`+unknownID+`"]}`)
	if !strings.Contains(string(r.raw), `"skipped":[{"id":"`+unknownID+`","reason":"not_found"}]`) {
		p.t.Errorf("delete of an unknown task: %s", r.raw)
	}
	for _, bad := range []string{`{"action":"purge","ids":["x"]}`, `{"action":"cancel"}`, `{"action":"cancel","ids":["a"],"filter":{}}`,
		`{"action":"cancel","filter":{"status":"DEAD"}}`, `{"action":"cancel","filter":{"queue":"a b"}}`, `{"action":"cancel","ids":["a"],"limit":0}`,
		`{"action":"cancel","ids":["a"],"rate_per_second":"fast"}`, `{"action":"cancel","filter":{},"limit":10000,"rate_per_second":1}`,
		`{"action":"cancel","ids":["a"],"extra":1}`} {
		p.do(e, 400, opBulk, "/api/v1/tasks/bulk", bad)
	}
	p.do(e, 404, opBulk, "/api/v1/tasks/bulk", `{"action":"cancel","filter":{"queue":"nothing-here"}}`)
	p.do(e, 413, opBulk, "/api/v1/tasks/bulk", `{"action":"cancel","ids":["`+strings.Repeat("x", 9000)+`"]}`)
	p.do(e, 415, opBulk, "/api/v1/tasks/bulk", `{"action":"cancel","ids":["a"]}`, "Content-Type", "text/plain")
}
