package api_test

import (
	"encoding/base64"
	"hash/crc32"
	"strconv"
	"strings"
	"time"
)

// Operations of the message queue routes.
const (
	opMQPut     = "POST /api/v1/mq/{queue}/topics/{topic}/messages"
	opMQTopic   = "GET /api/v1/mq/{queue}/topics/{topic}"
	opMQQueues  = "GET /api/v1/mq"
	opMQTopics  = "GET /api/v1/mq/{queue}/topics"
	opMQDead    = "GET /api/v1/mq/{queue}/dead"
	opMQLease   = "POST /api/v1/mq/{queue}/leases"
	opMQAck     = "POST /api/v1/mq/{queue}/leases/{lease}/ack"
	opMQExtend  = "POST /api/v1/mq/{queue}/leases/{lease}/extend"
	opMQRelease = "POST /api/v1/mq/{queue}/leases/{lease}/release"
	opMQNak     = "POST /api/v1/mq/{queue}/leases/{lease}/nak"
	opMQTerm    = "POST /api/v1/mq/{queue}/leases/{lease}/term"
)

// someMQLease has the form of a message lease token of queue "default"
// (as docs/workers.md describes it) but names no delivery.
var someMQLease = func() string {
	raw := "M1|default|dtq|w|30000|t|1-0|1|1|0|k"
	sum := strconv.FormatUint(uint64(crc32.ChecksumIEEE([]byte(raw))), 36)
	return base64.RawURLEncoding.EncodeToString([]byte(sum + "|" + raw))
}()

// messages provokes the answers of the message queue routes.
func (p *prober) messages(e *env) {
	base := "/api/v1/mq/orders"
	put := base + "/topics/new/messages"
	if r := p.do(e, 201, opMQPut, put, `{"data":"one","key":"o-1"}`); r.body["published"] != true || r.str("key") != "o-1" {
		p.t.Errorf("put: %s", r.raw)
	}
	if r := p.do(e, 200, opMQPut, put, `{"data_base64":"AAE=","key":"o-1"}`); r.body["published"] != false {
		p.t.Errorf("put of a live key: %s", r.raw)
	}
	p.do(e, 201, opMQPut, put, `{"data_base64":"AAE=","delay_seconds":0}`)
	if r := p.do(e, 429, opMQPut, put, `{"data":"x","max_size":2}`); r.errCode() != "topic_full" {
		p.t.Errorf("put past max_size: %s", r.raw)
	}
	p.do(e, 400, opMQPut, put, `{"data":"x","data_base64":"eA=="}`)
	p.do(e, 400, opMQPut, put, `{"key":"k"}`)
	p.do(e, 400, opMQPut, put, `{"data_base64":"not base64"}`)
	p.do(e, 400, opMQPut, put, `{"data":"x","key":""}`)
	p.do(e, 400, opMQPut, put, `{"data":"x","delay_seconds":-1}`)
	p.do(e, 400, opMQPut, base+"/topics/bad%20name/messages", `{"data":"x"}`)
	p.do(e, 400, opMQPut, "/api/v1/mq/bad%20queue/topics/t/messages", `{"data":"x"}`)
	p.do(e, 413, opMQPut, put, `{"data":"`+strings.Repeat("x", 9000)+`"}`)
	p.do(e, 415, opMQPut, put, `{"data":"x"}`, "Content-Type", "text/plain")
	if r := p.do(e, 200, opMQTopic, base+"/topics/new", ""); r.body["queued"] != 2.0 || r.str("group") != "dtq" {
		p.t.Errorf("topic counts: %s", r.raw)
	}
	p.do(e, 200, opMQTopic, base+"/topics/new?group=other", "")
	p.do(e, 400, opMQTopic, base+"/topics/new?group=", "")
	if r := p.do(e, 200, opMQQueues, "/api/v1/mq", ""); !strings.Contains(string(r.raw), `"orders"`) {
		p.t.Errorf("the message queues: %s", r.raw)
	}
	if r := p.do(e, 200, opMQTopics, base+"/topics", ""); !strings.Contains(string(r.raw), `{"topic":"new","group":"dtq","queued":2,"in_flight":0,"delayed":0}`) {
		p.t.Errorf("the topics of orders: %s", r.raw)
	}
	if r := p.do(e, 200, opMQTopics, "/api/v1/mq/never-used/topics?group=other", ""); string(r.raw) != "{\"topics\":[]}\n" {
		p.t.Errorf("the topics of a queue never used: %s", r.raw)
	}
	p.do(e, 400, opMQTopics, base+"/topics?group=", "")
	p.do(e, 400, opMQTopics, "/api/v1/mq/bad%20queue/topics", "")

	lease := func(body string) map[string]any {
		p.t.Helper()
		r := p.do(e, 200, opMQLease, base+"/leases", body)
		ls, _ := r.body["leases"].([]any)
		if len(ls) == 0 {
			p.t.Fatalf("lease: %s", r.raw)
		}
		return ls[0].(map[string]any)
	}
	first := lease(`{"worker":"py-1","topics":["new"],"max":1,"wait_seconds":1,"lease_seconds":30}`)
	tok := first["lease"].(string)
	if first["data"] != "one" || first["key"] != "o-1" || first["deliveries"] != 1.0 {
		p.t.Errorf("leased: %v", first)
	}
	p.do(e, 200, opMQExtend, base+"/leases/"+tok+"/extend", "")
	p.do(e, 201, opMQPut, base+"/topics/full/messages", `{"data":"f"}`)
	if r := p.do(e, 429, opMQRelease, base+"/leases/"+tok+"/release", `{"topic":"full","max_size":1}`); r.errCode() != "topic_full" {
		p.t.Errorf("release into a full topic: %s", r.raw)
	}
	p.do(e, 200, opMQRelease, base+"/leases/"+tok+"/release", `{"topic":"later"}`)
	p.do(e, 409, opMQRelease, base+"/leases/"+tok+"/release", `{"topic":"later"}`)
	second := lease(`{"worker":"py-1","topics":["new"]}`)["lease"].(string)
	if second == tok {
		p.t.Error("a second lease with the first one's token")
	}
	p.do(e, 200, opMQNak, base+"/leases/"+second+"/nak", `{"delay_seconds":3600}`)
	p.do(e, 409, opMQNak, base+"/leases/"+second+"/nak", "")
	moved := lease(`{"worker":"py-1","topics":["later"]}`)["lease"].(string)
	p.do(e, 200, opMQTerm, base+"/leases/"+moved+"/term", `{"reason":"bad order"}`)
	p.do(e, 409, opMQTerm, base+"/leases/"+moved+"/term", "")
	if r := p.do(e, 200, opMQDead, base+"/dead?limit=5", ""); !strings.Contains(string(r.raw), `"reason":"bad order"`) {
		p.t.Errorf("dead letters: %s", r.raw)
	}
	p.do(e, 400, opMQDead, base+"/dead?limit=0", "")
	last := lease(`{"worker":"py-1","topics":["full"]}`)["lease"].(string)
	p.do(e, 200, opMQNak, base+"/leases/"+last+"/nak", "")
	last = lease(`{"worker":"py-1","topics":["full"]}`)["lease"].(string)
	p.do(e, 200, opMQAck, base+"/leases/"+last+"/ack", "")
	p.do(e, 409, opMQAck, base+"/leases/"+last+"/ack", "")
	p.do(e, 409, opMQExtend, base+"/leases/"+last+"/extend", "")
	// an empty long poll: it waits (the bound is loose — a blocking read's
	// timer may fire a fraction of a millisecond early: 199.85 ms seen on
	// the embedded backend under load — the point is that it waited)
	start := time.Now()
	if r := p.do(e, 200, opMQLease, base+"/leases", `{"worker":"py-1","topics":["empty"],"wait_seconds":0.2}`); string(r.raw) != "{\"leases\":[]}\n" || time.Since(start) < 150*time.Millisecond {
		p.t.Errorf("an empty lease after %v: %s", time.Since(start), r.raw)
	}

	for _, body := range []string{`{"topics":["new"]}`, `{"worker":"w"}`, `{"worker":"w","topics":["a","a"]}`, `{"worker":"w","topics":["a"],"max":101}`,
		`{"worker":"w","topics":["a"],"wait_seconds":21}`, `{"worker":"w","topics":["a"],"lease_seconds":0}`, `{"worker":"a|b","topics":["a"]}`,
		`{"worker":"w","topics":["a b"]}`, `{"worker":"w","topics":["a"],"group":""}`,
		manyTopics(101)} {
		p.do(e, 400, opMQLease, base+"/leases", body)
	}
	p.do(e, 413, opMQLease, base+"/leases", `{"worker":"`+strings.Repeat("x", 9000)+`"}`)
	p.do(e, 415, opMQLease, base+"/leases", `{"worker":"w"}`, "Content-Type", "text/plain")
	for _, op := range []string{opMQAck, opMQExtend, opMQNak, opMQTerm} {
		path := strings.Replace(strings.TrimPrefix(op, "POST "), "{queue}", "orders", 1)
		p.do(e, 400, op, strings.Replace(path, "{lease}", "nonsense", 1), "")
		p.do(e, 400, op, strings.Replace(path, "{lease}", someMQLease, 1), "") // another queue's
	}
	other := base + "/leases/" + tok
	p.do(e, 400, opMQRelease, other+"/release", `{}`)
	p.do(e, 400, opMQRelease, other+"/release", `{"topic":"a b"}`)
	p.do(e, 400, opMQRelease, "/api/v1/mq/orders/leases/nonsense/release", `{"topic":"a"}`)
	p.do(e, 400, opMQNak, other+"/nak", `{"delay_seconds":-1}`)
	for _, op := range []string{opMQRelease, opMQNak, opMQTerm} {
		path := strings.Replace(strings.Replace(strings.TrimPrefix(op, "POST "), "{queue}", "orders", 1), "{lease}", tok, 1)
		p.do(e, 413, op, path, `{"reason":"`+strings.Repeat("x", 9000)+`"}`)
		p.do(e, 415, op, path, `{"topic":"a"}`, "Content-Type", "text/plain")
	}
}

// manyTopics is a lease request for n distinct topics.
func manyTopics(n int) string {
	names := make([]string, n)
	for i := range names {
		names[i] = `"t` + strconv.Itoa(i) + `"`
	}
	return `{"worker":"w","topics":[` + strings.Join(names, ",") + `]}`
}

// mqConcrete fills in a request of a message queue operation, or returns
// false for another operation.
func mqConcrete(key string) (body string, ok bool) {
	switch key {
	case opMQPut:
		return `{"data":"x"}`, true
	case opMQLease:
		return `{"worker":"w","topics":["t"]}`, true
	case opMQRelease:
		return `{"topic":"t"}`, true
	case opMQTopic, opMQDead, opMQAck, opMQExtend, opMQNak, opMQTerm:
		return "", true
	}
	return "", false
}
