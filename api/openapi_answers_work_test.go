package api_test

import (
	"encoding/base64"
	"net/url"
	"strings"
	"time"
)

// The probes of the routes of workers in other languages (leases), of
// workflows and of the filtered redrive: parts of TestOpenAPIAnswers.

// someLease has the form of a lease token but names no lease.
const someLease = "TDF8ZGVmYXVsdC0wMUFSWjNOREVLVFNWNFJSRkZRNjlHNUZBVnwwfDEtMHwxfDF8MHwxfDMwMDAwfGh0dHA6dw"

// workflows provokes the answers of the workflow routes.
// opListWF is the workflow list.
const opListWF = "GET /api/v1/workflows"

func (p *prober) workflows(e *env) {
	body := `{"root":{"chain":[{"task":{"task_type":"echo","payload":1}},{"parallel":[{"task":{"task_type":"echo"}},{"task":{"task_type":"fail","max_attempts":1}}],"on_complete":{"task":{"task_type":"echo"}}}]}}`
	r := p.do(e, 201, opWorkflow, "/api/v1/workflows", body)
	id := r.str("id")
	deadline := time.Now().Add(10 * time.Second)
	for r.str("status") == "RUNNING" && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
		r = p.do(e, 200, opGetWF, "/api/v1/workflows/"+id, "")
	}
	if r.str("status") != "SUCCEEDED" {
		p.t.Errorf("workflow: %s", r.raw)
	}
	p.do(e, 404, opGetWF, "/api/v1/workflows/"+unknownID, "")
	p.do(e, 400, opWorkflow, "/api/v1/workflows", `{"root":{"chain":[]}}`)
	p.do(e, 413, opWorkflow, "/api/v1/workflows", `{"root":{"task":{"task_type":"echo","payload":"`+strings.Repeat("x", 9000)+`"}}}`)
	p.do(e, 415, opWorkflow, "/api/v1/workflows", body, "Content-Type", "text/plain")
	p.do(e, 429, opWorkflow, "/api/v1/workflows", `{"queue":"tiny","root":{"parallel":[{"task":{"task_type":"echo"}},{"task":{"task_type":"echo"}}]}}`)
	idle := p.do(e, 201, opWorkflow, "/api/v1/workflows", `{"queue":"idle","root":{"chain":[{"task":{"task_type":"echo"}},{"task":{"task_type":"echo"}}]}}`).str("id")
	if r := p.do(e, 200, opCancelWF, "/api/v1/workflows/"+idle+"/cancel", ""); r.str("status") != "CANCELLED" {
		p.t.Errorf("cancelled: %s", r.raw)
	}
	p.do(e, 404, opCancelWF, "/api/v1/workflows/"+unknownID+"/cancel", "")
	keyed := `{"queue":"idle","root":{"task":{"task_type":"echo","payload":"k"}}}`
	first := p.do(e, 201, opWorkflow, "/api/v1/workflows", keyed, "Idempotency-Key", "wf-1").str("id")
	if r := p.do(e, 200, opWorkflow, "/api/v1/workflows", keyed, "Idempotency-Key", "wf-1"); r.str("id") != first || r.body["duplicate"] != true {
		p.t.Errorf("replay: %s, want %s with duplicate true", r.raw, first)
	}
	if r := p.do(e, 422, opWorkflow, "/api/v1/workflows", `{"queue":"idle","root":{"task":{"task_type":"echo","payload":"other"}}}`,
		"Idempotency-Key", "wf-1"); r.errCode() != "idempotency_key_reused" {
		p.t.Errorf("another workflow with the key: %s", r.raw)
	}
	// The list: newest first, filtered, paged.
	list := p.do(e, 200, opListWF, "/api/v1/workflows?queue=idle&limit=1", "")
	if ws, _ := list.body["workflows"].([]any); len(ws) != 1 || ws[0].(map[string]any)["id"] != first || list.str("next_cursor") == "" {
		p.t.Errorf("the newest workflow of queue idle: %s, want %s and a next cursor", list.raw, first)
	}
	next := p.do(e, 200, opListWF, "/api/v1/workflows?queue=idle&limit=5&cursor="+url.QueryEscape(list.str("next_cursor")), "")
	if ws, _ := next.body["workflows"].([]any); len(ws) != 1 || ws[0].(map[string]any)["id"] != idle || next.str("next_cursor") != "" {
		p.t.Errorf("the next page: %s, want %s and no more", next.raw, idle)
	}
	if r := p.do(e, 200, opListWF, "/api/v1/workflows?queue=idle&status=CANCELLED&created_after=2020-01-01T00:00:00Z", ""); !strings.Contains(string(r.raw), idle) ||
		strings.Contains(string(r.raw), first) {
		p.t.Errorf("CANCELLED workflows of queue idle: %s", r.raw)
	}
	p.do(e, 200, opListWF, "/api/v1/workflows", "")
	for _, bad := range []string{"status=DONE", "limit=0", "created_after=yesterday", "cursor=x", "queue=bad%20name",
		"created_after=2026-01-02T00:00:00Z&created_before=2026-01-01T00:00:00Z"} {
		p.do(e, 400, opListWF, "/api/v1/workflows?"+bad, "")
	}
}

// leases provokes the answers of the lease routes, on a queue no Go
// worker serves.
func (p *prober) leases(e *env) {
	lease := func(body string) (token string) {
		p.t.Helper()
		r := p.do(e, 200, opLease, "/api/v1/leases", body)
		ls, _ := r.body["leases"].([]any)
		if len(ls) != 1 {
			p.t.Fatalf("lease: %s", r.raw)
		}
		return ls[0].(map[string]any)["lease"].(string)
	}
	for range 3 {
		p.do(e, 201, opSubmit, "/api/v1/tasks", `{"task_type":"remote","queue":"remote","payload":{"n":1}}`)
	}
	tok := lease(`{"worker":"py-1","queues":["remote"],"task_types":["remote"],"max":1,"wait_seconds":1,"lease_seconds":30}`)
	p.do(e, 200, opExtend, "/api/v1/leases/"+tok+"/extend", "")
	p.do(e, 204, opProgress, "/api/v1/leases/"+tok+"/progress", `{"fraction":0.5,"note":"half"}`)
	if r := p.do(e, 200, opGet, "/api/v1/tasks/"+leasedTask(tok), ""); !strings.Contains(string(r.raw), `"note":"half"`) {
		p.t.Errorf("the leased task's progress: %s", r.raw)
	}
	if r := p.do(e, 200, opStep, "/api/v1/leases/"+tok+"/steps/charge", `{"result":{"charge":"ch_1"}}`); r.body["recorded"] != true {
		p.t.Errorf("a step recorded: %s", r.raw)
	}
	if r := p.do(e, 200, opStep, "/api/v1/leases/"+tok+"/steps/charge", `{"result":{"charge":"ch_2"}}`); r.body["recorded"] != false ||
		!strings.Contains(string(r.raw), `"ch_1"`) {
		p.t.Errorf("a step recorded again: %s, want the first record", r.raw)
	}
	if r := p.do(e, 200, opSteps, "/api/v1/leases/"+tok+"/steps", ""); !strings.Contains(string(r.raw), `"charge":{"charge":"ch_1"}`) {
		p.t.Errorf("the leased task's steps: %s", r.raw)
	}
	if r := p.do(e, 200, opComplete, "/api/v1/leases/"+tok+"/complete", `{"result":{"ok":true}}`); r.str("status") != "SUCCEEDED" {
		p.t.Errorf("completed: %s", r.raw)
	}
	p.do(e, 409, opExtend, "/api/v1/leases/"+tok+"/extend", "")
	tok = lease(`{"worker":"py-1","queues":["remote"]}`)
	if r := p.do(e, 200, opFail, "/api/v1/leases/"+tok+"/fail", `{"error":"boom","class":"retryable","retry_after_seconds":3600}`); r.str("status") != "SCHEDULED" {
		p.t.Errorf("failed: %s", r.raw)
	}
	// a lease lost to a takeover: its holder's complete and fail are refused
	stale := lease(`{"worker":"py-1","queues":["remote"],"lease_seconds":0.05}`)
	deadline := time.Now().Add(10 * time.Second)
	for {
		r := p.do(e, 200, opLease, "/api/v1/leases", `{"worker":"py-2","queues":["remote"],"lease_seconds":0.05,"wait_seconds":0.1}`)
		if ls, _ := r.body["leases"].([]any); len(ls) == 1 {
			break
		}
		if time.Now().After(deadline) {
			p.t.Fatal("the stale lease's task was not taken over")
		}
	}
	p.do(e, 409, opComplete, "/api/v1/leases/"+stale+"/complete", `{"result":1}`)
	p.endLeases(e, stale, lease)
	p.do(e, 409, opFail, "/api/v1/leases/"+stale+"/fail", `{"error":"late"}`)
	p.do(e, 409, opProgress, "/api/v1/leases/"+stale+"/progress", `{"fraction":1}`)
	p.do(e, 409, opStep, "/api/v1/leases/"+stale+"/steps/late", `{"result":1}`)
	p.do(e, 400, opStep, "/api/v1/leases/"+someLease+"/steps/x", `{}`)
	p.do(e, 400, opStep, "/api/v1/leases/"+someLease+"/steps/"+strings.Repeat("n", 129), `{"result":1}`)
	p.do(e, 413, opStep, "/api/v1/leases/"+someLease+"/steps/x", `{"result":"`+strings.Repeat("x", 9000)+`"}`)
	p.do(e, 415, opStep, "/api/v1/leases/"+someLease+"/steps/x", `{"result":1}`, "Content-Type", "text/plain")
	p.do(e, 400, opSteps, "/api/v1/leases/not-a-token/steps", "")

	// a durable sleep and wait over the lease protocol: over at once, or
	// the lease ends with the task suspended; a signal resumes it
	p.do(e, 201, opSubmit, "/api/v1/tasks", `{"task_type":"remote","queue":"sleepy"}`)
	tok = lease(`{"worker":"py-1","queues":["sleepy"],"wait_seconds":5}`)
	if r := p.do(e, 200, opSleep, "/api/v1/leases/"+tok+"/sleep", `{"step":"none","seconds":0}`); r.body["over"] != true {
		p.t.Errorf("a sleep of 0s: %s, want over", r.raw)
	}
	r := p.do(e, 200, opWait, "/api/v1/leases/"+tok+"/wait", `{"signal":"go","timeout_seconds":3600}`)
	if sp, _ := r.body["suspended"].(map[string]any); r.body["over"] != false || sp["for"] != "signal" || sp["name"] != "go" {
		p.t.Errorf("a wait: %s, want suspended for signal go", r.raw)
	}
	p.do(e, 409, opSleep, "/api/v1/leases/"+tok+"/sleep", `{"step":"nap","seconds":60}`)
	p.do(e, 409, opWait, "/api/v1/leases/"+tok+"/wait", `{"signal":"other","timeout_seconds":60}`)
	p.do(e, 200, opSignal, "/api/v1/tasks/"+leasedTask(tok)+"/signals/go", `{"payload":{"ok":1}}`)
	tok = lease(`{"worker":"py-1","queues":["sleepy"],"wait_seconds":5}`)
	if r := p.do(e, 200, opWait, "/api/v1/leases/"+tok+"/wait", `{"signal":"go","timeout_seconds":3600}`); r.body["over"] != true ||
		!strings.Contains(string(r.raw), `"payload":{"ok":1}`) {
		p.t.Errorf("the resumed wait: %s, want over with the payload", r.raw)
	}
	// an awaited child over the lease protocol: the lease ends while the
	// child runs; a later lease of the task gets the child's end
	kid := `{"step":"kid","task":{"task_type":"remote","queue":"kids","payload":{"w":1}}}`
	r = p.do(e, 200, opChild, "/api/v1/leases/"+tok+"/child", kid)
	if sp, _ := r.body["suspended"].(map[string]any); r.body["over"] != false || sp["for"] != "child" {
		p.t.Errorf("a child: %s, want suspended for it", r.raw)
	}
	kidTok := lease(`{"worker":"py-2","queues":["kids"],"wait_seconds":5}`)
	p.do(e, 200, opComplete, "/api/v1/leases/"+kidTok+"/complete", `{"result":{"thumb":1}}`)
	tok = lease(`{"worker":"py-1","queues":["sleepy"],"wait_seconds":10}`)
	if r := p.do(e, 200, opChild, "/api/v1/leases/"+tok+"/child", kid); r.body["over"] != true ||
		!strings.Contains(string(r.raw), `"status":"SUCCEEDED","result":{"thumb":1}`) {
		p.t.Errorf("the child, again: %s, want its end", r.raw)
	}
	p.do(e, 429, opChild, "/api/v1/leases/"+tok+"/child", `{"step":"full","task":{"task_type":"echo","queue":"tiny"}}`)
	p.do(e, 400, opChild, "/api/v1/leases/"+tok+"/child", `{"task":{"task_type":"echo"}}`)
	p.do(e, 400, opChild, "/api/v1/leases/"+tok+"/child", `{"step":"x","task":{}}`)
	p.do(e, 409, opChild, "/api/v1/leases/"+stale+"/child", `{"step":"late","task":{"task_type":"echo","queue":"idle"}}`)
	p.do(e, 413, opChild, "/api/v1/leases/"+someLease+"/child", `{"step":"`+strings.Repeat("x", 9000)+`"}`)
	p.do(e, 415, opChild, "/api/v1/leases/"+someLease+"/child", `{}`, "Content-Type", "text/plain")
	p.do(e, 400, opSleep, "/api/v1/leases/"+tok+"/sleep", `{"seconds":1}`)
	p.do(e, 400, opSleep, "/api/v1/leases/"+tok+"/sleep", `{"step":"x","seconds":-1}`)
	p.do(e, 400, opWait, "/api/v1/leases/"+tok+"/wait", `{"signal":"x"}`)
	p.do(e, 413, opSleep, "/api/v1/leases/"+someLease+"/sleep", `{"step":"`+strings.Repeat("x", 9000)+`"}`)
	p.do(e, 413, opWait, "/api/v1/leases/"+someLease+"/wait", `{"signal":"`+strings.Repeat("x", 9000)+`"}`)
	p.do(e, 415, opSleep, "/api/v1/leases/"+someLease+"/sleep", `{}`, "Content-Type", "text/plain")
	p.do(e, 415, opWait, "/api/v1/leases/"+someLease+"/wait", `{}`, "Content-Type", "text/plain")
	p.do(e, 400, opProgress, "/api/v1/leases/"+someLease+"/progress", `{"fraction":2}`)
	p.do(e, 400, opProgress, "/api/v1/leases/"+someLease+"/progress", `{"note":"no fraction"}`)
	p.do(e, 413, opProgress, "/api/v1/leases/"+someLease+"/progress", `{"fraction":1,"note":"`+strings.Repeat("x", 9000)+`"}`)
	p.do(e, 415, opProgress, "/api/v1/leases/"+someLease+"/progress", `{"fraction":1}`, "Content-Type", "text/plain")
	p.do(e, 400, opLease, "/api/v1/leases", `{"queues":["remote"]}`)
	p.do(e, 400, opLease, "/api/v1/leases", `{"worker":"w","wait_seconds":25}`)
	p.do(e, 413, opLease, "/api/v1/leases", `{"worker":"`+strings.Repeat("x", 9000)+`"}`)
	p.do(e, 415, opLease, "/api/v1/leases", `{"worker":"w"}`, "Content-Type", "text/plain")
	p.do(e, 200, opPutLimit, "/api/v1/limits/metered", `{"max_running":1}`)
	p.do(e, 201, opSubmit, "/api/v1/tasks", `{"task_type":"remote","queue":"metered"}`)
	p.do(e, 201, opSubmit, "/api/v1/tasks", `{"task_type":"remote","queue":"metered"}`)
	if r := p.do(e, 200, opLease, "/api/v1/leases", `{"worker":"w","queues":["metered"],"max":2}`); len(r.body["leases"].([]any)) != 1 {
		p.t.Errorf("a queue limited to 1: %s", r.raw)
	}
	p.do(e, 200, opDelLimit, "/api/v1/limits/metered", "")
	p.do(e, 400, opExtend, "/api/v1/leases/nonsense/extend", "")
	p.do(e, 400, opComplete, "/api/v1/leases/nonsense/complete", `{"result":1}`)
	p.do(e, 400, opComplete, "/api/v1/leases/"+someLease+"/complete", `{"result":1,"extra":2}`)
	p.do(e, 413, opComplete, "/api/v1/leases/"+someLease+"/complete", `{"result":"`+strings.Repeat("x", 9000)+`"}`)
	p.do(e, 415, opComplete, "/api/v1/leases/"+someLease+"/complete", `{"result":1}`, "Content-Type", "text/plain")
	p.do(e, 400, opFail, "/api/v1/leases/"+someLease+"/fail", `{"class":"retryable"}`)
	p.do(e, 400, opFail, "/api/v1/leases/"+someLease+"/fail", `{"error":"x","class":"maybe"}`)
	p.do(e, 413, opFail, "/api/v1/leases/"+someLease+"/fail", `{"error":"`+strings.Repeat("x", 9000)+`"}`)
	p.do(e, 415, opFail, "/api/v1/leases/"+someLease+"/fail", `{"error":"x"}`, "Content-Type", "text/plain")
}

// redrive provokes the answers of the filtered redrive.
func (p *prober) redrive(e *env) {
	dead := p.do(e, 201, opSubmit, "/api/v1/tasks", `{"task_type":"fail","queue":"redrive","max_attempts":1}`).str("id")
	// the env's worker serves default only: lease and fail it for good
	r := p.do(e, 200, opLease, "/api/v1/leases", `{"worker":"w","queues":["redrive"]}`)
	tok := r.body["leases"].([]any)[0].(map[string]any)["lease"].(string)
	p.do(e, 200, opFail, "/api/v1/leases/"+tok+"/fail", `{"error":"S3 timed out","class":"permanent"}`)
	if r := p.do(e, 200, opRedrive, "/api/v1/dlq/redrive", `{"queue":"redrive","task_type":"fail","error_contains":"s3","dead_after":"2020-01-01T00:00:00Z","dry_run":true}`); r.body["matched"] != 1.0 || r.body["requeued"] != 0.0 {
		p.t.Errorf("dry run: %s", r.raw)
	}
	if r := p.do(e, 200, opRedrive, "/api/v1/dlq/redrive", `{"queue":"redrive","error_contains":"s3","limit":10,"rate_per_second":50}`); r.body["requeued"] != 1.0 {
		p.t.Errorf("redrive: %s", r.raw)
	}
	if r := p.do(e, 200, opGet, "/api/v1/tasks/"+dead, ""); r.str("status") != "QUEUED" {
		p.t.Errorf("the redriven task: %s", r.raw)
	}
	p.do(e, 404, opRedrive, "/api/v1/dlq/redrive", `{"queue":"no-such-queue","dry_run":true}`)
	p.do(e, 400, opRedrive, "/api/v1/dlq/redrive", `{"limit":10000,"rate_per_second":1}`)
	p.do(e, 400, opRedrive, "/api/v1/dlq/redrive", `{"dead_after":"yesterday"}`)
	p.do(e, 413, opRedrive, "/api/v1/dlq/redrive", `{"error_contains":"`+strings.Repeat("x", 9000)+`"}`)
	p.do(e, 415, opRedrive, "/api/v1/dlq/redrive", `{"dry_run":true}`, "Content-Type", "text/plain")
}

// leasedTask returns the task id a lease token names.
func leasedTask(token string) string {
	raw, _ := base64.RawURLEncoding.DecodeString(token)
	parts := strings.Split(string(raw), "|")
	if len(parts) < 2 {
		return ""
	}
	return parts[1]
}

// endLeases provokes the answers of POST /api/v1/leases/outcomes: each
// outcome answered in its place — recorded, lost (stale), malformed.
func (p *prober) endLeases(e *env, stale string, lease func(string) string) {
	p.t.Helper()
	for range 2 {
		p.do(e, 201, opSubmit, "/api/v1/tasks", `{"task_type":"remote","queue":"remote"}`)
	}
	ok, bad := lease(`{"worker":"py-3","queues":["remote"]}`), lease(`{"worker":"py-3","queues":["remote"]}`)
	body := `{"outcomes":[{"lease":"` + ok + `","result":{"n":1}},{"lease":"` + bad + `","error":"no","class":"permanent"},` +
		`{"lease":"` + stale + `","result":1},{"lease":"` + ok + `","result":1,"error":"both"},{"lease":"x"}]}`
	r := p.do(e, 200, opEndLeases, "/api/v1/leases/outcomes", body)
	want := `{"outcomes":[{"lease":"` + ok + `","status":"SUCCEEDED"},{"lease":"` + bad + `","status":"DEAD"},` +
		`{"lease":"` + stale + `","error":{"code":"lease_lost","message":"the lease is lost: it timed out and its task was taken over, or the task ended otherwise; nothing was changed"}},` +
		`{"lease":"` + ok + `","error":{"code":"invalid_field","message":"result must not be given with error: an outcome is a completion or a failure"}},` +
		`{"lease":"x","error":{"code":"invalid_field","message":"lease is not a lease token"}}]}`
	if got := strings.TrimSpace(string(r.raw)); got != want {
		p.t.Errorf("outcomes:\n got %s\nwant %s", got, want)
	}
	p.do(e, 400, opEndLeases, "/api/v1/leases/outcomes", `{"outcomes":[]}`)
	p.do(e, 400, opEndLeases, "/api/v1/leases/outcomes", `{}`)
	p.do(e, 415, opEndLeases, "/api/v1/leases/outcomes", `{"outcomes":[{"lease":"x"}]}`, "Content-Type", "text/plain")
	p.do(e, 413, opEndLeases, "/api/v1/leases/outcomes", `{"outcomes":[{"lease":"`+strings.Repeat("x", 9000)+`"}]}`)
}
