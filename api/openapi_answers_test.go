package api_test

import (
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dtq-dev/dtq"
	"github.com/dtq-dev/dtq/api"
	"github.com/dtq-dev/dtq/internal/redisconn"
	"github.com/dtq-dev/dtq/internal/redistest"
)

// Operations, as the document's keys name them.
const (
	opSubmit     = "POST /api/v1/tasks"
	opBatch      = "POST /api/v1/tasks/batch"
	opGet        = "GET /api/v1/tasks/{id}"
	opList       = "GET /api/v1/tasks"
	opCancel     = "POST /api/v1/tasks/{id}/cancel"
	opSignal     = "POST /api/v1/tasks/{id}/signals/{name}"
	opDLQ        = "GET /api/v1/dlq"
	opRequeue    = "POST /api/v1/dlq/{id}/requeue"
	opDiscard    = "DELETE /api/v1/dlq/{id}"
	opRequeueAll = "POST /api/v1/dlq/requeue"
	opPurge      = "DELETE /api/v1/dlq"
	opQueues     = "GET /api/v1/queues"
	opQueue      = "GET /api/v1/queues/{name}"
	opPause      = "POST /api/v1/queues/{name}/pause"
	opDelQueue   = "DELETE /api/v1/queues/{name}"
	opResume     = "POST /api/v1/queues/{name}/resume"
	opWorkers    = "GET /api/v1/workers"
	opSchedules  = "GET /api/v1/schedules"
	opSchedule   = "GET /api/v1/schedules/{queue}/{name}"
	opPutSched   = "PUT /api/v1/schedules/{queue}/{name}"
	opLimits     = "GET /api/v1/limits"
	opLimit      = "GET /api/v1/limits/{queue}"
	opPutLimit   = "PUT /api/v1/limits/{queue}"
	opDelLimit   = "DELETE /api/v1/limits/{queue}"
	opGroups     = "GET /api/v1/queues/{name}/groups"
	opPutGroup   = "PUT /api/v1/queues/{name}/groups/{group}"
	opDelGroup   = "DELETE /api/v1/queues/{name}/groups/{group}"
	opOrderKeys  = "GET /api/v1/queues/{name}/order-keys"
	opHistory    = "GET /api/v1/history"
	opOrderKey   = "GET /api/v1/queues/{name}/order-keys/{key}"
	opPutType    = "PUT /api/v1/limits/{queue}/types/{type}"
	opDelType    = "DELETE /api/v1/limits/{queue}/types/{type}"
	opPutKey     = "PUT /api/v1/limits/{queue}/keys/{key}"
	opDelKey     = "DELETE /api/v1/limits/{queue}/keys/{key}"
	opDelSched   = "DELETE /api/v1/schedules/{queue}/{name}"
	opPauseSch   = "POST /api/v1/schedules/{queue}/{name}/pause"
	opResumeSch  = "POST /api/v1/schedules/{queue}/{name}/resume"
	opAudit      = "GET /api/v1/audit"
	opEvents     = "GET /ws/events"
	opHealth     = "GET /health"
	opReady      = "GET /ready"
	opOpenAPI    = "GET /api/v1/openapi.json"
	opWorkflow   = "POST /api/v1/workflows"
	opGetWF      = "GET /api/v1/workflows/{id}"
	opCancelWF   = "POST /api/v1/workflows/{id}/cancel"
	opLease      = "POST /api/v1/leases"
	opExtend     = "POST /api/v1/leases/{lease}/extend"
	opEndLeases  = "POST /api/v1/leases/outcomes"
	opComplete   = "POST /api/v1/leases/{lease}/complete"
	opFail       = "POST /api/v1/leases/{lease}/fail"
	opProgress   = "POST /api/v1/leases/{lease}/progress"
	opSteps      = "GET /api/v1/leases/{lease}/steps"
	opStep       = "PUT /api/v1/leases/{lease}/steps/{name}"
	opSleep      = "POST /api/v1/leases/{lease}/sleep"
	opWait       = "POST /api/v1/leases/{lease}/wait"
	opChild      = "POST /api/v1/leases/{lease}/child"
	opRedrive    = "POST /api/v1/dlq/redrive"
	opRunNow     = "POST /api/v1/tasks/{id}/run-now"
	opBulk       = "POST /api/v1/tasks/bulk"
	opQuiet      = "POST /api/v1/workers/{id}/quiet"
	opStop       = "POST /api/v1/workers/{id}/stop"
)

// unknownID has the form of a task id but names no task.
const unknownID = "default-01ARZ3NDEKTSV4RRFFQ69G5FAV"

// TestOpenAPIAnswers provokes every answer the document lists, on real
// servers, and checks each against the document: its status is listed for
// the operation, its body matches the schema (every property declared,
// every required one present, types, enums, ranges, patterns), and the
// Location and Retry-After headers are sent exactly where documented. An
// answer the document lists and no request here provokes fails the test
// too.
func TestOpenAPIAnswers(t *testing.T) {
	t.Parallel()
	s := loadSpec(t)
	redistest.ForEachBackend(t, func(t *testing.T, b *redistest.Backend) {
		p := &prober{t: t, spec: s, ops: s.operations(), seen: map[string]bool{}}
		open := newEnv(t, b, &opts{
			engine: dtq.Config{MaxPayloadBytes: 1024, QueueMaxDepth: map[string]int64{"tiny": 1}},
			api:    api.Config{MaxBodyBytes: 8192, MaxBatch: 4},
		})
		done := p.tasks(open)
		p.deadLetters(open, done)
		p.workflows(open)
		p.leases(open)
		p.messages(open)
		p.redrive(open)
		p.bulk(open)
		p.workerControl(open)
		p.admin(open)
		p.schedules(open)
		p.limits(open)
		p.orderKeys(open)
		p.history(open)
		p.events(open)
		p.closed(open)
		p.keyed(newEnv(t, b, &opts{noWorker: true, api: api.Config{APIKey: "k", APIKeyReads: true}}), true)
		p.keyed(newEnv(t, b, &opts{noWorker: true, api: api.Config{APIKey: "k"}}), false)
		p.roles(newEnv(t, b, &opts{noWorker: true, api: rolesConfig(false)}))
		// A namespace of its own: the other envs' workers finish tasks with
		// their own (default) retention.
		short := *b
		short.Namespace += "-short"
		p.crossSite(open)
		p.expired(newEnv(t, &short, &opts{engine: dtq.Config{Retention: 50 * time.Millisecond}}))
		p.down()
		for key, op := range p.ops {
			if op["x-mounted-by"] == "process" {
				continue
			}
			for status := range op["responses"].(map[string]any) {
				if !p.seen[key+" "+status] {
					t.Errorf("openapi.json lists %s %s, which no request here provoked", key, status)
				}
			}
		}
	})
}

// prober sends requests, checks each answer against the document and
// records which (operation, status) pairs it saw.
type prober struct {
	t    *testing.T
	spec *spec
	ops  map[string]map[string]any
	seen map[string]bool // "METHOD /path status"
}

// do sends a request for operation op and checks that it answers want.
func (p *prober) do(e *env, want int, op, path, body string, headers ...string) *resp {
	p.t.Helper()
	method, _, _ := strings.Cut(op, " ")
	r := e.do(method, path, body, headers...)
	if r.status != want {
		p.t.Errorf("%s %s %.200s: status %d, want %d: %s", method, path, body, r.status, want, r.raw)
	}
	p.answer(op, r.status, r.header, r.raw)
	return r
}

// answer checks one answer of op against the document.
func (p *prober) answer(op string, status int, h http.Header, raw []byte) {
	p.t.Helper()
	o := p.ops[op]
	if o == nil {
		p.t.Errorf("openapi.json has no operation %s", op)
		return
	}
	code := strconv.Itoa(status)
	p.seen[op+" "+code] = true
	r := p.spec.response(o, code)
	if r == nil {
		p.t.Errorf("%s answered %d, which openapi.json does not list: %s", op, status, raw)
		return
	}
	headers, _ := r["headers"].(map[string]any)
	for _, name := range []string{"Location", "Retry-After"} {
		_, documented := headers[name]
		if sent := h.Get(name) != ""; sent != documented {
			p.t.Errorf("%s %d: header %s sent %v, documented %v", op, status, name, sent, documented)
		}
	}
	content, _ := r["content"].(map[string]any)
	if len(content) == 0 {
		return
	}
	media, ok := content["application/json"].(map[string]any)
	if !ok {
		p.t.Errorf("%s %d: documented without application/json", op, status)
		return
	}
	if ct := h.Get("Content-Type"); ct != "application/json" {
		p.t.Errorf("%s %d: Content-Type %q", op, status, ct)
	}
	v, err := decode(raw)
	if err != nil {
		p.t.Errorf("%s %d: body is not JSON: %v: %s", op, status, err, raw)
		return
	}
	for _, problem := range p.spec.validate(media["schema"], v) {
		p.t.Errorf("%s %d: %s\n%s", op, status, problem, raw)
	}
}

// tasks provokes the answers of the task routes and returns the id of a
// SUCCEEDED task.
func (p *prober) tasks(e *env) string {
	done := p.do(e, 201, opSubmit, "/api/v1/tasks", `{"task_type":"echo","payload":{"n":1,"s":["a","é"]},"priority":7,"max_attempts":3,"timeout_seconds":2.5}`).str("id")
	e.waitStatus(done, "SUCCEEDED")
	p.do(e, 200, opGet, "/api/v1/tasks/"+done, "")
	p.do(e, 404, opGet, "/api/v1/tasks/"+unknownID, "")
	later := p.do(e, 201, opSubmit, "/api/v1/tasks", `{"task_type":"echo","queue":"default","delay_seconds":3600}`).str("id")
	p.do(e, 200, opGet, "/api/v1/tasks/"+later, "")
	if r := p.do(e, 200, opList, "/api/v1/tasks?limit=10", ""); len(r.body["tasks"].([]any)) < 2 {
		p.t.Errorf("list: %s", r.raw)
	}
	p.do(e, 200, opList, "/api/v1/tasks?queue=default&status=SCHEDULED&type=echo", "")
	if r := p.do(e, 200, opList, "/api/v1/tasks?id_prefix="+later[:len(later)-6]+"&created_after=2020-01-01T00:00:00Z&created_before=2999-01-01T00:00:00Z", ""); !strings.Contains(string(r.raw), later) {
		p.t.Errorf("search by id prefix: %s", r.raw)
	}
	p.do(e, 200, opList, "/api/v1/tasks?error=boom", "")
	napping := p.do(e, 201, opSubmit, "/api/v1/tasks", `{"task_type":"nap"}`).str("id") // sleeps an hour
	e.waitStatus(napping, "SCHEDULED")
	if r := p.do(e, 200, opList, "/api/v1/tasks?suspended=true", ""); !strings.Contains(string(r.raw), `"suspended":{"for":"sleep","name":"nap"`) {
		p.t.Errorf("list of suspended tasks: %s", r.raw)
	}
	p.do(e, 400, opList, "/api/v1/tasks?suspended=maybe", "")
	p.do(e, 400, opList, "/api/v1/tasks?created_after=yesterday", "")
	p.do(e, 400, opList, "/api/v1/tasks?limit=0", "")
	grouped := p.do(e, 201, opSubmit, "/api/v1/tasks", `{"task_type":"echo","group":"acme"}`).str("id")
	if r := p.do(e, 200, opGet, "/api/v1/tasks/"+grouped, ""); r.body["group"] != "acme" {
		p.t.Errorf("a grouped task: %s", r.raw)
	}
	p.do(e, 400, opSubmit, "/api/v1/tasks", `{"task_type":"echo","group":""}`)
	p.do(e, 400, opSubmit, "/api/v1/tasks", `{"task_type":"echo","group":"a|b"}`)
	// an order key: the second task of a key waits for the first (held
	// by a queue no worker serves)
	ordered := `{"task_type":"echo","queue":"idle","order_key":"acct-7"}`
	p.do(e, 201, opSubmit, "/api/v1/tasks", ordered)
	second := p.do(e, 201, opSubmit, "/api/v1/tasks", ordered)
	if second.body["order_key"] != "acct-7" || second.body["order_waiting"] != true {
		p.t.Errorf("the second task of an order key: %s, want order_waiting", second.raw)
	}
	if r := p.do(e, 200, opQueue, "/api/v1/queues/idle", ""); r.body["order_waiting"] != 1.0 {
		p.t.Errorf("queue stats with a task waiting for its order key: %s", r.raw)
	}
	p.do(e, 400, opSubmit, "/api/v1/tasks", `{"task_type":"echo","order_key":""}`)
	p.do(e, 400, opSubmit, "/api/v1/tasks", `{"task_type":"echo","order_key":"a b"}`)

	once := `{"task_type":"echo","payload":"once"}`
	first := p.do(e, 201, opSubmit, "/api/v1/tasks", once, "Idempotency-Key", "k1").str("id")
	e.waitStatus(first, "SUCCEEDED")
	p.do(e, 200, opSubmit, "/api/v1/tasks", once, "Idempotency-Key", "k1")
	p.do(e, 422, opSubmit, "/api/v1/tasks", `{"task_type":"echo","payload":"twice"}`, "Idempotency-Key", "k1")
	uniq := `{"task_type":"echo","queue":"idle","payload":{"u":1},"unique":{"key":"one","states":["QUEUED","RUNNING"],"period_seconds":3600}}`
	held := p.do(e, 201, opSubmit, "/api/v1/tasks", uniq).str("id")
	if r := p.do(e, 200, opSubmit, "/api/v1/tasks", uniq); r.str("id") != held || r.body["duplicate"] != true {
		p.t.Errorf("unique duplicate: %s, want %s with duplicate true", r.raw, held)
	}
	p.do(e, 400, opSubmit, "/api/v1/tasks", `{"task_type":"echo","unique":{"states":["DONE"]}}`)
	p.do(e, 400, opSubmit, "/api/v1/tasks", `{"task_type":"echo","unique":{"period_seconds":0.5}}`)
	p.do(e, 400, opSubmit, "/api/v1/tasks", `{"task_type":"echo","unique":{}}`, "Idempotency-Key", "k-u")
	deb := func(n int) string {
		return `{"task_type":"echo","queue":"idle","payload":{"d":` + strconv.Itoa(n) + `},"debounce":{"key":"doc-7","period_seconds":3600,"max_wait_seconds":7200}}`
	}
	pending := p.do(e, 201, opSubmit, "/api/v1/tasks", deb(1))
	if r := p.do(e, 200, opSubmit, "/api/v1/tasks", deb(2)); r.str("id") != pending.str("id") || r.body["debounced"] != true ||
		r.body["status"] != "SCHEDULED" || string(r.raw) == "" || r.body["payload"].(map[string]any)["d"] != float64(2) {
		p.t.Errorf("debounced submission: %s, want %s joined (debounced true) with payload {\"d\":2}", r.raw, pending.str("id"))
	}
	p.do(e, 400, opSubmit, "/api/v1/tasks", `{"task_type":"echo","debounce":{"key":"k","period_seconds":1,"max_wait_seconds":0.5}}`)
	p.do(e, 400, opSubmit, "/api/v1/tasks", `{"task_type":"echo","debounce":{"key":"k","period_seconds":1}}`, "Idempotency-Key", "k-d")
	idle := `{"task_type":"echo","queue":"idle"}` // no worker takes it
	p.do(e, 201, opSubmit, "/api/v1/tasks", idle, "Idempotency-Key", "k2")
	p.do(e, 409, opSubmit, "/api/v1/tasks", idle, "Idempotency-Key", "k2")

	p.do(e, 400, opSubmit, "/api/v1/tasks", `{"task_type":`)
	p.do(e, 400, opSubmit, "/api/v1/tasks", `{"task_type":"echo","priority":10}`)
	p.do(e, 413, opSubmit, "/api/v1/tasks", `{"task_type":"echo","payload":"`+strings.Repeat("x", 2000)+`"}`)
	p.do(e, 413, opSubmit, "/api/v1/tasks", `{"task_type":"echo","payload":"`+strings.Repeat("x", 9000)+`"}`)
	p.do(e, 415, opSubmit, "/api/v1/tasks", `{"task_type":"echo"}`, "Content-Type", "text/plain")
	tiny := `{"task_type":"echo","queue":"tiny"}` // at most one unfinished task
	p.do(e, 201, opSubmit, "/api/v1/tasks", tiny)
	p.do(e, 429, opSubmit, "/api/v1/tasks", tiny)

	r := p.do(e, 200, opBatch, "/api/v1/tasks/batch", `{"tasks":[{"task_type":"echo","payload":[1]},{"task_type":""},`+tiny+
		`,{"task_type":"echo","payload":"`+strings.Repeat("x", 2000)+`"}]}`)
	var statuses []int
	for _, item := range r.body["results"].([]any) {
		statuses = append(statuses, int(item.(map[string]any)["status"].(float64)))
	}
	if !slices.Equal(statuses, []int{201, 400, 429, 413}) {
		p.t.Errorf("batch: %s", r.raw)
	}
	p.do(e, 400, opBatch, "/api/v1/tasks/batch", `{}`)
	p.do(e, 413, opBatch, "/api/v1/tasks/batch", `{"tasks":[{},{},{},{},{}]}`)
	p.do(e, 415, opBatch, "/api/v1/tasks/batch", `{"tasks":[]}`, "Content-Type", "text/plain")

	p.do(e, 200, opCancel, "/api/v1/tasks/"+later+"/cancel", "")
	p.do(e, 409, opCancel, "/api/v1/tasks/"+done+"/cancel", "")
	p.do(e, 404, opCancel, "/api/v1/tasks/"+unknownID+"/cancel", "")

	waiting := p.do(e, 201, opSubmit, "/api/v1/tasks", idle).str("id") // no worker takes it
	p.do(e, 200, opSignal, "/api/v1/tasks/"+waiting+"/signals/approved", `{"payload":{"by":"ann"}}`)
	p.do(e, 409, opSignal, "/api/v1/tasks/"+waiting+"/signals/approved", `{}`)
	p.do(e, 409, opSignal, "/api/v1/tasks/"+done+"/signals/approved", `{}`)
	p.do(e, 404, opSignal, "/api/v1/tasks/"+unknownID+"/signals/approved", `{}`)
	p.do(e, 400, opSignal, "/api/v1/tasks/"+waiting+"/signals/"+strings.Repeat("n", 129), `{}`)
	p.do(e, 413, opSignal, "/api/v1/tasks/"+waiting+"/signals/x", `{"payload":"`+strings.Repeat("x", 9000)+`"}`)
	p.do(e, 415, opSignal, "/api/v1/tasks/"+waiting+"/signals/x", `{}`, "Content-Type", "text/plain")
	return done
}

// deadLetters provokes the answers of the DLQ routes; done is a SUCCEEDED
// task.
func (p *prober) deadLetters(e *env, done string) {
	dead := p.do(e, 201, opSubmit, "/api/v1/tasks", `{"task_type":"fail","max_attempts":1}`).str("id")
	e.waitStatus(dead, "DEAD")
	p.do(e, 200, opGet, "/api/v1/tasks/"+dead, "")
	if r := p.do(e, 200, opDLQ, "/api/v1/dlq?queue=default&limit=10", ""); len(r.body["dead_letters"].([]any)) == 0 {
		p.t.Errorf("dlq: %s", r.raw)
	}
	p.do(e, 400, opDLQ, "/api/v1/dlq?limit=0", "")
	p.do(e, 200, opRequeue, "/api/v1/dlq/"+dead+"/requeue", "")
	p.do(e, 409, opRequeue, "/api/v1/dlq/"+done+"/requeue", "")
	p.do(e, 404, opRequeue, "/api/v1/dlq/"+unknownID+"/requeue", "")
	e.waitStatus(dead, "DEAD")
	p.do(e, 200, opDiscard, "/api/v1/dlq/"+dead, "")
	p.do(e, 409, opDiscard, "/api/v1/dlq/"+done, "")
	p.do(e, 404, opDiscard, "/api/v1/dlq/"+unknownID, "")

	again := p.do(e, 201, opSubmit, "/api/v1/tasks", `{"task_type":"fail","max_attempts":1}`).str("id")
	e.waitStatus(again, "DEAD")
	p.do(e, 200, opRequeueAll, "/api/v1/dlq/requeue?queue=default", "")
	e.waitStatus(again, "DEAD")
	p.do(e, 200, opRequeueAll, "/api/v1/dlq/requeue", "")
	p.do(e, 400, opRequeueAll, "/api/v1/dlq/requeue?queue=bad!", "")
	p.do(e, 404, opRequeueAll, "/api/v1/dlq/requeue?queue=no-such-queue", "")
	e.waitStatus(again, "DEAD")
	p.do(e, 200, opPurge, "/api/v1/dlq?queue=default", "")
	p.do(e, 200, opPurge, "/api/v1/dlq", "")
	p.do(e, 400, opPurge, "/api/v1/dlq?queue=bad!", "")
	p.do(e, 404, opPurge, "/api/v1/dlq?queue=no-such-queue", "")

	later := p.do(e, 201, opSubmit, "/api/v1/tasks", `{"task_type":"echo","delay_seconds":3600}`).str("id")
	if r := p.do(e, 200, opRunNow, "/api/v1/tasks/"+later+"/run-now", ""); r.str("status") == "SCHEDULED" {
		p.t.Errorf("run now: %s", r.raw)
	}
	e.waitStatus(later, "SUCCEEDED")
	if r := p.do(e, 409, opRunNow, "/api/v1/tasks/"+later+"/run-now", ""); r.errCode() != "not_scheduled" {
		p.t.Errorf("run now of a finished task: %s", r.raw)
	}
	p.do(e, 404, opRunNow, "/api/v1/tasks/"+unknownID+"/run-now", "")
}

// admin provokes the answers of the queue, worker, audit and probe routes.
func (p *prober) admin(e *env) {
	if r := p.do(e, 200, opQueues, "/api/v1/queues", ""); len(r.body["queues"].([]any)) == 0 {
		p.t.Errorf("queues: %s", r.raw)
	}
	if r := p.do(e, 200, opQueue, "/api/v1/queues/default", ""); r.body["suspended"] != float64(1) {
		p.t.Errorf("queue default with a sleeping task: %s", r.raw)
	}
	p.do(e, 400, opQueue, "/api/v1/queues/bad!", "")
	p.do(e, 404, opQueue, "/api/v1/queues/no-such-queue", "")
	p.do(e, 200, opPause, "/api/v1/queues/default/pause", "")
	p.do(e, 400, opPause, "/api/v1/queues/bad!/pause", "")
	p.do(e, 404, opPause, "/api/v1/queues/no-such-queue/pause", "")
	p.do(e, 200, opResume, "/api/v1/queues/default/resume", "")
	p.do(e, 400, opResume, "/api/v1/queues/bad!/resume", "")
	p.do(e, 404, opResume, "/api/v1/queues/no-such-queue/resume", "")
	p.do(e, 404, opDelQueue, "/api/v1/queues/no-such-queue", "")
	if r := p.do(e, 200, opQueues, "/api/v1/queues", ""); strings.Contains(string(r.raw), "no-such-queue") {
		p.t.Errorf("admin actions on a queue that does not exist made it: %s", r.raw)
	}
	p.do(e, 201, opSubmit, "/api/v1/tasks", `{"task_type":"echo","queue":"doomed","delay_seconds":3600}`)
	if r := p.do(e, 409, opDelQueue, "/api/v1/queues/doomed", ""); r.errCode() != "queue_not_empty" {
		p.t.Errorf("delete of a queue holding work: %s", r.raw)
	}
	p.do(e, 400, opDelQueue, "/api/v1/queues/doomed?force=maybe", "")
	p.do(e, 400, opDelQueue, "/api/v1/queues/bad!", "")
	if r := p.do(e, 200, opDelQueue, "/api/v1/queues/doomed?force=true", ""); r.body["scheduled"] != float64(1) {
		p.t.Errorf("forced delete: %s", r.raw)
	}
	if r := p.do(e, 200, opWorkers, "/api/v1/workers", ""); len(r.body["workers"].([]any)) == 0 {
		p.t.Errorf("workers: %s", r.raw)
	}
	if r := p.do(e, 200, opAudit, "/api/v1/audit?limit=50", ""); len(r.body["entries"].([]any)) < 5 {
		p.t.Errorf("audit: %s", r.raw)
	}
	p.do(e, 400, opAudit, "/api/v1/audit?limit=0", "")
	p.do(e, 200, opHealth, "/health", "")
	p.do(e, 200, opReady, "/ready", "")
	p.do(e, 200, opOpenAPI, "/api/v1/openapi.json", "")

	// Route-level answers, documented once for every path.
	errSchema := map[string]any{"$ref": "#/components/schemas/Error"}
	for _, c := range []struct {
		method, path string
		status       int
	}{{"PUT", "/api/v1/tasks", 405}, {"GET", "/api/v1/nothing", 404}} {
		r := e.do(c.method, c.path, "")
		v, _ := decode(r.raw)
		if r.status != c.status || c.status == 405 && r.header.Get("Allow") == "" {
			p.t.Errorf("%s %s: %d, Allow %q", c.method, c.path, r.status, r.header.Get("Allow"))
		}
		for _, problem := range p.spec.validate(errSchema, v) {
			p.t.Errorf("%s %s: %s", c.method, c.path, problem)
		}
	}
}

// wsHandshake is a valid WebSocket upgrade request's headers.
var wsHandshake = []string{"Connection", "Upgrade", "Upgrade", "websocket", "Sec-WebSocket-Version", "13", "Sec-WebSocket-Key", "dGhlIHNhbXBsZSBub25jZQ=="}

func concrete(key string) (method, path, body string) {
	method, tmpl, _ := strings.Cut(key, " ")
	lease := someLease
	if strings.HasPrefix(tmpl, "/api/v1/mq/") {
		lease = someMQLease
	}
	path = strings.NewReplacer("{lease}", lease, "{id}", unknownID, "{name}", "default", "{queue}", "default", "{type}", "echo", "{key}", "k", "{group}", "acme", "{topic}", "t").Replace(tmpl)
	if body, ok := mqConcrete(key); ok {
		return method, path, body
	}
	switch key {
	case opPutSched:
		body = `{"cron":"@hourly","task_type":"echo"}`
	case opPutLimit, opPutType, opPutKey:
		body = `{"max_running":1}`
	case opPutGroup:
		body = `{"weight":2}`
	case opSubmit:
		body = `{"task_type":"echo"}`
	case opBatch:
		body = `{"tasks":[{"task_type":"echo"}]}`
	case opWorkflow:
		body = `{"root":{"task":{"task_type":"echo"}}}`
	case opLease:
		body = `{"worker":"w"}`
	case opComplete:
		body = `{"result":1}`
	case opFail:
		body = `{"error":"x"}`
	case opEndLeases:
		body = `{"outcomes":[{"lease":"` + lease + `"}]}`
	case opProgress:
		body = `{"fraction":0.5}`
	case opSignal:
		body = `{}`
	case opSleep:
		body = `{"step":"x","seconds":1}`
	case opWait:
		body = `{"signal":"x","timeout_seconds":1}`
	case opChild:
		body = `{"step":"x","task":{"task_type":"echo"}}`
	case opStep:
		body = `{"result":1}`
	case opRedrive:
		body = `{"dry_run":true}`
	case opBulk:
		body = `{"action":"cancel","filter":{},"dry_run":true}`
	}
	return method, path, body
}

// keyed sends every operation without an API key to a server that has one
// (and requires it on reads too if reads): the operations whose security
// requires the key must answer 401, and only those.
func (p *prober) keyed(e *env, reads bool) {
	for _, key := range sortedKeys(anyMap(p.ops)) {
		op := p.ops[key]
		if op["x-mounted-by"] == "process" {
			continue
		}
		sec := op["security"].([]any)
		optional := slices.ContainsFunc(sec, func(r any) bool { return len(r.(map[string]any)) == 0 })
		want401 := len(sec) > 0 && (!optional || reads)
		method, path, body := concrete(key)
		r := e.do(method, path, body)
		if (r.status == http.StatusUnauthorized) != want401 {
			p.t.Errorf("key on reads %v: %s answered %d without the key: %s", reads, key, r.status, r.raw)
		}
		p.answer(key, r.status, r.header, r.raw)
	}
	p.do(e, 201, opSubmit, "/api/v1/tasks", `{"task_type":"echo"}`, "X-API-Key", "k")
}

// crossSite sends every state-changing operation as a browser would from
// another site: each must answer 403 forbidden_origin.
func (p *prober) crossSite(e *env) {
	for _, key := range sortedKeys(anyMap(p.ops)) {
		method, path, body := concrete(key)
		if method != http.MethodPost && method != http.MethodDelete && method != http.MethodPut {
			continue
		}
		r := p.do(e, 403, key, path, body, "Sec-Fetch-Site", "cross-site")
		if r.errCode() != "forbidden_origin" {
			p.t.Errorf("%s from another site: %s", key, r.raw)
		}
		p.do(e, 403, key, path, body, "Origin", "https://evil.example")
	}
}

// expired provokes the 410 of an idempotent replay whose original task has
// expired (the engine's retention is shorter than its idempotency window).
func (p *prober) expired(e *env) {
	body := `{"task_type":"echo","payload":"gone"}`
	id := p.do(e, 201, opSubmit, "/api/v1/tasks", body, "Idempotency-Key", "k-expired").str("id")
	// Only a finished task expires, and with 50 ms retention SUCCEEDED may
	// be too brief to observe: wait for the task to be gone.
	deadline := time.Now().Add(wsWait)
	for e.do("GET", "/api/v1/tasks/"+id, "").status != http.StatusNotFound {
		if time.Now().After(deadline) {
			p.t.Fatalf("task %s did not expire", id)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if r := p.do(e, 410, opSubmit, "/api/v1/tasks", body, "Idempotency-Key", "k-expired"); r.errCode() != "expired" {
		p.t.Errorf("replay of an expired task: %s", r.raw)
	}
	wf := `{"root":{"task":{"task_type":"echo","payload":"gone"}}}`
	wid := p.do(e, 201, opWorkflow, "/api/v1/workflows", wf, "Idempotency-Key", "wf-expired").str("id")
	for e.do("GET", "/api/v1/workflows/"+wid, "").status != http.StatusNotFound {
		if time.Now().After(deadline) {
			p.t.Fatalf("workflow %s did not expire", wid)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if r := p.do(e, 410, opWorkflow, "/api/v1/workflows", wf, "Idempotency-Key", "wf-expired"); r.errCode() != "expired" || !strings.Contains(string(r.raw), `"task_id":"`+wid+`"`) {
		p.t.Errorf("replay of an expired workflow: %s", r.raw)
	}
}

// down sends every operation to a server whose Redis connection fails:
// each answers 503, except those that do not touch Redis. (The connection
// is closed rather than the server stopped: with a stopped server the
// client library retries read-only commands until the request's context
// ends.)
func (p *prober) down() {
	b := redistest.Embedded(p.t)
	c, err := dtq.NewClient(redisconn.Wrap(b.Client), &dtq.Config{Namespace: redistest.Namespace(p.t)})
	if err != nil {
		p.t.Fatal(err)
	}
	as := api.New(c, redisconn.Wrap(b.Client), nil)
	defer as.Close()
	hs := httptest.NewServer(as.Handler())
	defer hs.Close()
	b.Client.Close()
	e := &env{t: p.t, c: c, srv: hs}
	for _, key := range sortedKeys(anyMap(p.ops)) {
		if p.ops[key]["x-mounted-by"] == "process" {
			continue
		}
		method, path, body := concrete(key)
		r := e.do(method, path, body)
		noRedis := key == opHealth || key == opOpenAPI || key == opEvents || key == opWhoami
		if (r.status == http.StatusServiceUnavailable) == noRedis {
			p.t.Errorf("Redis down: %s answered %d: %s", key, r.status, r.raw)
		}
		p.answer(key, r.status, r.header, r.raw)
	}
}

func anyMap[V any](m map[string]V) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}
