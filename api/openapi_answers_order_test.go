package api_test

import (
	"fmt"
	"slices"
)

// The probes of the order-key routes: part of TestOpenAPIAnswers.

// orderKeys provokes the answers of GET /api/v1/queues/{name}/order-keys
// and …/order-keys/{key}, on a queue no worker serves: a key's line, the
// keys in use page by page, and the 400s and 404s.
func (p *prober) orderKeys(e *env) {
	keys := "/api/v1/queues/lined/order-keys"
	p.do(e, 404, opOrderKeys, keys, "")
	p.do(e, 404, opOrderKey, keys+"/acct-1", "")
	var ids []string
	for range 3 {
		ids = append(ids, p.do(e, 201, opSubmit, "/api/v1/tasks", `{"task_type":"echo","queue":"lined","order_key":"acct-1"}`).str("id"))
	}
	for i := range 4 {
		p.do(e, 201, opSubmit, "/api/v1/tasks", fmt.Sprintf(`{"task_type":"echo","queue":"lined","order_key":"acct-%d"}`, i+2))
	}
	r := p.do(e, 200, opOrderKey, keys+"/acct-1", "")
	next, _ := r.body["next"].([]any)
	if r.str("in_flight") != ids[0] || r.body["waiting"] != 2.0 || len(next) != 2 || next[0] != ids[1] || next[1] != ids[2] {
		p.t.Errorf("line of acct-1 (%v): %s", ids, r.raw)
	}
	if r := p.do(e, 200, opOrderKey, keys+"/idle", ""); r.body["in_flight"] != nil || r.body["waiting"] != 0.0 {
		p.t.Errorf("line of a key without tasks: %s", r.raw)
	}
	var seen []string
	cursor := ""
	for range 10 {
		r := p.do(e, 200, opOrderKeys, keys+"?limit=2"+cursor, "")
		for _, k := range r.body["keys"].([]any) {
			k := k.(map[string]any)
			seen = append(seen, k["key"].(string))
			if k["key"] == "acct-1" && (k["in_flight"] != ids[0] || k["waiting"] != 2.0) {
				p.t.Errorf("acct-1 in the list: %s", r.raw)
			}
		}
		if r.str("next_cursor") == "" {
			break
		}
		cursor = "&cursor=" + r.str("next_cursor")
	}
	slices.Sort(seen)
	if !slices.Equal(slices.Compact(seen), []string{"acct-1", "acct-2", "acct-3", "acct-4", "acct-5"}) {
		p.t.Errorf("keys listed: %v", seen)
	}
	p.do(e, 400, opOrderKeys, "/api/v1/queues/bad%20queue/order-keys", "")
	p.do(e, 400, opOrderKeys, keys+"?limit=0", "")
	p.do(e, 400, opOrderKeys, keys+"?limit=1001", "")
	p.do(e, 400, opOrderKeys, keys+"?cursor=x", "")
	p.do(e, 400, opOrderKey, keys+"/a%7Cb", "")
	p.do(e, 400, opOrderKey, "/api/v1/queues/%2E%2E/order-keys/k", "")
}
