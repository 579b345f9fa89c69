package api_test

import "strings"

// The probes of the schedule and limit routes: part of TestOpenAPIAnswers.

// schedules provokes the answers of the schedule routes.
func (p *prober) schedules(e *env) {
	path := "/api/v1/schedules/default/nightly"
	body := `{"cron":"0 3 * * *","time_zone":"Europe/Berlin","task_type":"echo","payload":{"k":1},"priority":3,"max_attempts":2,"timeout_seconds":1.5,"missed":"catch_up","catch_up_max":4}`
	r := p.do(e, 201, opPutSched, path, body)
	if r.str("name") != "nightly" || r.str("next_run") == "" || r.header.Get("Location") != path {
		p.t.Errorf("created schedule: %s", r.raw)
	}
	p.do(e, 200, opPutSched, path, `{"cron":"@every 1h","task_type":"echo"}`)
	p.do(e, 400, opPutSched, path, `{"cron":"61 * * * *","task_type":"echo"}`)
	p.do(e, 400, opPutSched, "/api/v1/schedules/default/bad%20name", `{"cron":"@hourly","task_type":"echo"}`)
	p.do(e, 400, opPutSched, path, `{"task_type":"echo"}`)
	p.do(e, 413, opPutSched, path, `{"cron":"@hourly","task_type":"echo","payload":"`+strings.Repeat("x", 9000)+`"}`)
	p.do(e, 415, opPutSched, path, `{"cron":"@hourly","task_type":"echo"}`, "Content-Type", "text/plain")
	p.do(e, 200, opSchedule, path, "")
	p.do(e, 404, opSchedule, "/api/v1/schedules/default/none", "")
	p.do(e, 400, opSchedule, "/api/v1/schedules/bad%20queue/nightly", "")
	if r := p.do(e, 200, opSchedules, "/api/v1/schedules", ""); len(r.body["schedules"].([]any)) != 1 {
		p.t.Errorf("list: %s", r.raw)
	}
	p.do(e, 200, opSchedules, "/api/v1/schedules?queue=default", "")
	p.do(e, 400, opSchedules, "/api/v1/schedules?queue=bad%20queue", "")
	if r := p.do(e, 200, opPauseSch, path+"/pause", ""); r.body["paused"] != true || r.body["next_run"] != nil {
		p.t.Errorf("paused: %s", r.raw)
	}
	p.do(e, 404, opPauseSch, "/api/v1/schedules/default/none/pause", "")
	p.do(e, 400, opPauseSch, "/api/v1/schedules/bad%20queue/nightly/pause", "")
	if r := p.do(e, 200, opResumeSch, path+"/resume", ""); r.body["paused"] != false || r.str("next_run") == "" {
		p.t.Errorf("resumed: %s", r.raw)
	}
	p.do(e, 404, opResumeSch, "/api/v1/schedules/default/none/resume", "")
	p.do(e, 400, opResumeSch, "/api/v1/schedules/bad%20queue/nightly/resume", "")
	p.do(e, 200, opDelSched, path, "")
	p.do(e, 404, opDelSched, path, "")
	p.do(e, 400, opDelSched, "/api/v1/schedules/bad%20queue/nightly", "")
}

// limits provokes the answers of the limit routes.
func (p *prober) limits(e *env) {
	path := "/api/v1/limits/capped"
	// Before the queue exists: a read or a removal is 404, a PUT makes it.
	p.do(e, 404, opLimit, path, "")
	p.do(e, 404, opDelLimit, path, "")
	p.do(e, 404, opDelType, path+"/types/t", "")
	p.do(e, 404, opDelKey, path+"/keys/k", "")
	p.do(e, 404, opGroups, "/api/v1/queues/capped/groups", "")
	p.do(e, 404, opDelGroup, "/api/v1/queues/capped/groups/acme", "")
	if r := p.do(e, 200, opPutLimit, path, `{"max_running":3}`); r.body["max_running"] != float64(3) || r.str("queue") != "capped" {
		p.t.Errorf("set: %s", r.raw)
	}
	if r := p.do(e, 200, opPutLimit, path, `{"rate":100,"per_seconds":1,"burst":10}`); r.body["rate"] != float64(100) || r.body["max_running"] != float64(0) {
		p.t.Errorf("set a rate (replacing the concurrency limit): %s", r.raw)
	}
	p.do(e, 400, opPutLimit, path, `{"rate":10,"burst":11}`)
	p.do(e, 400, opPutLimit, path, `{"rate":10,"per_seconds":0.0001}`)
	p.do(e, 400, opPutLimit, path, `{"burst":2}`)
	p.do(e, 400, opPutLimit, path, `{"max_running":0}`)
	p.do(e, 400, opPutLimit, path, `{}`)
	p.do(e, 400, opPutLimit, path, `{"max_running":1000001}`)
	p.do(e, 400, opPutLimit, "/api/v1/limits/bad%20queue", `{"max_running":1}`)
	p.do(e, 413, opPutLimit, path, `{"max_running":1,"x":"`+strings.Repeat("x", 9000)+`"}`)
	p.do(e, 415, opPutLimit, path, `{"max_running":1}`, "Content-Type", "text/plain")
	if r := p.do(e, 200, opLimits, "/api/v1/limits", ""); len(r.body["limits"].([]any)) != 1 {
		p.t.Errorf("list: %s", r.raw)
	}
	p.do(e, 400, opLimit, "/api/v1/limits/bad%20queue", "")
	if r := p.do(e, 200, opDelLimit, path, ""); r.body["max_running"] != float64(0) {
		p.t.Errorf("removed: %s", r.raw)
	}
	p.do(e, 400, opDelLimit, "/api/v1/limits/%2E%2E", "")
	if r := p.do(e, 200, opLimits, "/api/v1/limits", ""); len(r.body["limits"].([]any)) != 0 {
		p.t.Errorf("list after removal: %s", r.raw)
	}

	// A group's weight.
	groups := "/api/v1/queues/capped/groups"
	if r := p.do(e, 200, opPutGroup, groups+"/acme", `{"weight":3}`); r.body["weight"] != 3.0 {
		p.t.Errorf("set a group's weight: %s", r.raw)
	}
	if r := p.do(e, 200, opGroups, groups, ""); !strings.Contains(string(r.raw), `"group":"acme","weight":3`) {
		p.t.Errorf("groups: %s", r.raw)
	}
	p.do(e, 400, opPutGroup, groups+"/acme", `{"weight":101}`)
	p.do(e, 400, opPutGroup, groups+"/a%7Cb", `{"weight":2}`)
	p.do(e, 400, opPutGroup, groups+"/acme", `{}`)
	p.do(e, 413, opPutGroup, groups+"/acme", `{"weight":1,"x":"`+strings.Repeat("x", 9000)+`"}`)
	p.do(e, 415, opPutGroup, groups+"/acme", `{"weight":1}`, "Content-Type", "text/plain")
	p.do(e, 400, opGroups, "/api/v1/queues/bad%20queue/groups", "")
	p.do(e, 200, opDelGroup, groups+"/acme", "")
	p.do(e, 400, opDelGroup, groups+"/a%20b", "")
	if r := p.do(e, 200, opGroups, groups, ""); len(r.body["groups"].([]any)) != 0 {
		p.t.Errorf("groups after the reset: %s", r.raw)
	}

	// A task type's and a limit key's limits.
	typed := path + "/types/report%2Fbuild"
	if r := p.do(e, 200, opPutType, typed, `{"max_running":2,"rate":5,"per_seconds":1}`); !strings.Contains(string(r.raw), `"task_type":"report/build","max_running":2`) {
		p.t.Errorf("set a type's limits: %s", r.raw)
	}
	if r := p.do(e, 200, opPutKey, path+"/keys/*", `{"max_running":1}`); !strings.Contains(string(r.raw), `"limit_key":"*","max_running":1`) {
		p.t.Errorf("set each key's limits: %s", r.raw)
	}
	p.do(e, 200, opPutKey, path+"/keys/cust-1", `{"rate":3}`)
	p.do(e, 400, opPutKey, path+"/keys/a%7Cb", `{"max_running":1}`)
	p.do(e, 400, opPutType, path+"/types/t", `{}`)
	p.do(e, 400, opPutType, "/api/v1/limits/bad%20queue/types/t", `{"max_running":1}`)
	p.do(e, 413, opPutType, typed, `{"max_running":1,"x":"`+strings.Repeat("x", 9000)+`"}`)
	p.do(e, 413, opPutKey, path+"/keys/k", `{"max_running":1,"x":"`+strings.Repeat("x", 9000)+`"}`)
	p.do(e, 415, opPutType, typed, `{"max_running":1}`, "Content-Type", "text/plain")
	p.do(e, 415, opPutKey, path+"/keys/k", `{"max_running":1}`, "Content-Type", "text/plain")
	if r := p.do(e, 200, opLimits, "/api/v1/limits", ""); len(r.body["limits"].([]any)) != 1 {
		p.t.Errorf("list with a type's limits: %s", r.raw)
	}
	p.do(e, 200, opDelType, typed, "")
	p.do(e, 400, opDelType, "/api/v1/limits/%2E%2E/types/t", "")
	p.do(e, 200, opDelKey, path+"/keys/*", "")
	p.do(e, 400, opDelKey, path+"/keys/a%20b", "")
	if r := p.do(e, 200, opDelKey, path+"/keys/cust-1", ""); strings.Contains(string(r.raw), "scopes") {
		p.t.Errorf("after removing every scoped limit: %s", r.raw)
	}
}
