package api_test

import (
	"encoding/json"
	"maps"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/coder/websocket"
	"github.com/dtq-dev/dtq"
	"github.com/dtq-dev/dtq/api"
	"github.com/dtq-dev/dtq/internal/redisconn"
	"github.com/dtq-dev/dtq/internal/redistest"
)

const opWhoami = "GET /api/v1/whoami"

// roleKeys are the keys of the servers of the role tests: one per role,
// admin as APIKey (the --api-key of old) and as a Keys entry.
var roleKeys = map[string]string{
	"read":   "key-read",
	"submit": "key-submit",
	"worker": "key-worker",
	"admin":  "key-admin",
}

func rolesConfig(reads bool) api.Config {
	return api.Config{
		APIKey:      "key-old-admin",
		APIKeyReads: reads,
		Keys: []api.Key{
			{Role: api.RoleRead, Key: roleKeys["read"]},
			{Role: api.RoleSubmit, Key: roleKeys["submit"]},
			{Role: api.RoleWorker, Key: roleKeys["worker"]},
			{Role: api.RoleAdmin, Key: roleKeys["admin"]},
		},
	}
}

// allows is the role table of docs/api.md, written out: may a key of role
// have call a route of role need?
func allows(have, need string) bool {
	switch need {
	case "none", "read":
		return true
	case "submit":
		return have == "submit" || have == "admin"
	case "worker":
		return have == "worker" || have == "admin"
	}
	return have == "admin"
}

// TestRoles sends every route the server registers with the key of every
// role, with no key and with an unknown key, to a server that requires
// keys on reads too: a role the route allows is never answered 401 or
// 403, a role it does not is answered 403 forbidden (and nothing else),
// and a request without a known key 401 on every route that needs a role.
func TestRoles(t *testing.T) {
	forEachBackend(t, &opts{noWorker: true, api: rolesConfig(true)}, func(t *testing.T, e *env) {
		srv := api.New(e.c, redisconn.Wrap(e.b.Client), nil)
		t.Cleanup(srv.Close)
		table := api.RouteRoles(srv)
		for _, pattern := range slices.Sorted(maps.Keys(table)) {
			need := table[pattern]
			method, path, body := concrete(pattern)
			for _, have := range []string{"read", "submit", "worker", "admin"} {
				r := e.do(method, path, body, "X-API-Key", roleKeys[have])
				switch {
				case allows(have, need) && (r.status == http.StatusUnauthorized || r.status == http.StatusForbidden):
					t.Errorf("%s (role %s) with a %s key: %d, want it allowed: %s", pattern, need, have, r.status, r.raw)
				case !allows(have, need) && (r.status != http.StatusForbidden || r.errCode() != "forbidden"):
					t.Errorf("%s (role %s) with a %s key: %d, want 403 forbidden: %s", pattern, need, have, r.status, r.raw)
				case !allows(have, need) && !strings.Contains(r.errMessage(), "("+have+")"):
					t.Errorf("%s: the 403 does not name the key's role %s: %s", pattern, have, r.raw)
				}
			}
			// The admin key of --api-key may call everything.
			if r := e.do(method, path, body, "X-API-Key", "key-old-admin"); r.status == http.StatusUnauthorized || r.status == http.StatusForbidden {
				t.Errorf("%s with the APIKey: %d: %s", pattern, r.status, r.raw)
			}
			for _, key := range []string{"", "key-unknown", "key-rea"} {
				r := e.do(method, path, body, "X-API-Key", key)
				if want := need != "none"; (r.status == http.StatusUnauthorized) != want {
					t.Errorf("%s (role %s) with key %q: %d, want 401 %v: %s", pattern, need, key, r.status, want, r.raw)
				}
			}
		}
		if len(table) < 60 {
			t.Errorf("only %d routes in the table", len(table))
		}
	})
}

// Without APIKeyReads the read routes stay open whatever the keys, and the
// others still need their role.
func TestRolesReadsOpen(t *testing.T) {
	forEachBackend(t, &opts{noWorker: true, api: rolesConfig(false)}, func(t *testing.T, e *env) {
		e.must(http.StatusOK, "GET", "/api/v1/queues", "")
		e.must(http.StatusOK, "GET", "/api/v1/queues", "", "X-API-Key", "key-unknown")
		e.must(http.StatusUnauthorized, "POST", "/api/v1/tasks", `{"task_type":"echo"}`)
		e.must(http.StatusForbidden, "POST", "/api/v1/tasks", `{"task_type":"echo"}`, "X-API-Key", roleKeys["read"])
		e.must(http.StatusForbidden, "POST", "/api/v1/queues/default/pause", "", "X-API-Key", roleKeys["submit"])
		id := e.must(http.StatusCreated, "POST", "/api/v1/tasks", `{"task_type":"echo"}`, "X-API-Key", roleKeys["submit"]).str("id")
		e.must(http.StatusOK, "POST", "/api/v1/tasks/"+id+"/cancel", "", "X-API-Key", roleKeys["submit"])
		r := e.must(http.StatusForbidden, "DELETE", "/api/v1/dlq", "", "X-API-Key", roleKeys["worker"])
		if want := "this key's role (worker) may not call DELETE /api/v1/dlq: that needs an admin key"; r.errMessage() != want {
			t.Errorf("403 message %q, want %q", r.errMessage(), want)
		}
		if got := e.do("DELETE", "/api/v1/dlq", "", "X-API-Key", roleKeys["admin"]); got.status != http.StatusOK {
			t.Errorf("purge with an admin key: %d %s", got.status, got.raw)
		}
	})
}

// GET /api/v1/whoami answers each key's role, "none" without a key while
// reads are open, 401 for an unknown key, and admin on a server without
// keys.
func TestWhoami(t *testing.T) {
	t.Parallel()
	redistest.ForEachBackend(t, func(t *testing.T, b *redistest.Backend) {
		role := func(e *env, key string) string {
			t.Helper()
			return e.must(http.StatusOK, "GET", "/api/v1/whoami", "", "X-API-Key", key).str("role")
		}
		open := newEnv(t, b, &opts{noWorker: true})
		if got := role(open, ""); got != "admin" {
			t.Errorf("no keys configured: role %q, want admin", got)
		}
		if got := role(open, "anything"); got != "admin" {
			t.Errorf("no keys configured, a key sent: role %q, want admin", got)
		}
		keyed := newEnv(t, b, &opts{noWorker: true, api: rolesConfig(false)})
		for want, key := range roleKeys {
			if got := role(keyed, key); got != want {
				t.Errorf("key of role %s: whoami says %q", want, got)
			}
		}
		if got := role(keyed, "key-old-admin"); got != "admin" {
			t.Errorf("APIKey: whoami says %q, want admin", got)
		}
		if got := role(keyed, ""); got != "none" {
			t.Errorf("no key, reads open: whoami says %q, want none", got)
		}
		keyed.must(http.StatusUnauthorized, "GET", "/api/v1/whoami", "", "X-API-Key", "key-unknown")
		closed := newEnv(t, b, &opts{noWorker: true, api: rolesConfig(true)})
		closed.must(http.StatusUnauthorized, "GET", "/api/v1/whoami", "")
		if got := role(closed, roleKeys["read"]); got != "read" {
			t.Errorf("reads closed, read key: whoami says %q", got)
		}
	})
}

// The events WebSocket needs only a read key, in the header or the query.
func TestRolesEvents(t *testing.T) {
	forEachBackend(t, &opts{noWorker: true}, func(t *testing.T, e *env) {
		w := e.wsServer(&wsOpts{api: rolesConfig(true)})
		w.refused(http.StatusUnauthorized, "unauthorized", "")
		w.refused(http.StatusUnauthorized, "unauthorized", "?api_key=key-unknown")
		for _, key := range roleKeys {
			w.dial("", "X-API-Key", key).c.Close(websocket.StatusNormalClosure, "")
			w.dial("?api_key="+key).c.Close(websocket.StatusNormalClosure, "")
		}
	})
}

// TestParseKeys checks the --api-keys list: each role, spaces, a colon in
// a key; and that a bad entry is refused with its position and without
// quoting any key.
func TestParseKeys(t *testing.T) {
	t.Parallel()
	keys, err := api.ParseKeys(" read:r1, submit:s:1 ,worker:w1,admin:a1,read:r2")
	if err != nil {
		t.Fatal(err)
	}
	want := []api.Key{{Role: api.RoleRead, Key: "r1"}, {Role: api.RoleSubmit, Key: "s:1"}, {Role: api.RoleWorker, Key: "w1"},
		{Role: api.RoleAdmin, Key: "a1"}, {Role: api.RoleRead, Key: "r2"}}
	if !slices.Equal(keys, want) {
		t.Errorf("ParseKeys: %v, want %v", keys, want)
	}
	if keys, err := api.ParseKeys(" "); err != nil || keys != nil {
		t.Errorf("ParseKeys of nothing: %v, %v", keys, err)
	}
	for list, msg := range map[string]string{
		"read:k1,writer:secret-2":      `entry 2: unknown role "writer" (roles: read, submit, worker, admin)`,
		"secret-1":                     "entry 1 is not role:key (roles: read, submit, worker, admin)",
		"read:secret-1,":               "entry 2 is not role:key",
		"read:":                        "entry 1: the read key is empty",
		"read:secret-1,admin:secret-1": "entry 2: its key is already given by entry 1 (one key has one role)",
		"Admin:secret-1":               `entry 1: unknown role "Admin"`,
	} {
		_, err := api.ParseKeys(list)
		if err == nil || !strings.HasPrefix(err.Error(), msg) {
			t.Errorf("ParseKeys(%q): %v, want %q", list, err, msg)
			continue
		}
		if strings.Contains(err.Error(), "secret") {
			t.Errorf("ParseKeys(%q): the error quotes a key: %v", list, err)
		}
	}
	c := api.Config{APIKey: "a", Keys: []api.Key{{Role: api.RoleRead, Key: "a"}}}
	if err := c.CheckKeys(); err == nil || err.Error() != "Keys[0]: its key is already given by APIKey (one key has one role)" {
		t.Errorf("CheckKeys with APIKey repeated: %v", err)
	}
	c = api.Config{Keys: []api.Key{{Role: "root", Key: "a"}}}
	func() {
		defer func() {
			if r := recover(); r == nil || !strings.Contains(r.(string), `Config.Keys[0]: unknown role "root"`) {
				t.Errorf("New with an unknown role: recovered %v", r)
			}
		}()
		b := redistest.Embedded(t)
		client, err := dtq.NewClient(redisconn.Wrap(b.Client), &dtq.Config{Namespace: redistest.Namespace(t)})
		if err != nil {
			t.Fatal(err)
		}
		api.New(client, redisconn.Wrap(b.Client), &c).Close()
	}()
}

// TestRolesDocumented holds openapi.json to the route table: every
// operation's x-dtq-role is the role its route is registered with, and its
// security says the same (none: [], read: the key optional, others: the
// key required).
func TestRolesDocumented(t *testing.T) {
	t.Parallel()
	s := loadSpec(t)
	b := redistest.Embedded(t)
	c, err := dtq.NewClient(redisconn.Wrap(b.Client), &dtq.Config{Namespace: redistest.Namespace(t)})
	if err != nil {
		t.Fatal(err)
	}
	srv := api.New(c, redisconn.Wrap(b.Client), nil)
	t.Cleanup(srv.Close)
	table := api.RouteRoles(srv)
	for key, op := range s.operations() {
		documented, _ := op["x-dtq-role"].(string)
		if op["x-mounted-by"] == "process" {
			if documented != "none" {
				t.Errorf("%s: x-dtq-role %q, want none", key, documented)
			}
			continue
		}
		if registered, ok := table[key]; !ok {
			t.Errorf("%s: not in the route table", key)
		} else if documented != registered {
			t.Errorf("%s: x-dtq-role %q, but the route is registered with role %q", key, documented, registered)
		}
		sec, _ := json.Marshal(op["security"])
		var want string
		switch documented {
		case "none":
			want = `[]`
		case "read":
			want = `[{},{"apiKey":[]}]`
			if key == opEvents {
				want = `[{},{"apiKey":[]},{"apiKeyQuery":[]}]`
			}
		default:
			want = `[{"apiKey":[]}]`
		}
		if string(sec) != want {
			t.Errorf("%s: role %s, security %s, want %s", key, documented, sec, want)
		}
		if _, has403 := op["responses"].(map[string]any)["403"]; documented != "none" && documented != "read" && !has403 {
			t.Errorf("%s: role %s, but no 403 is documented", key, documented)
		}
	}
	for key := range table {
		if s.operations()[key] == nil {
			t.Errorf("%s is in the route table, not in openapi.json", key)
		}
	}
}

// roles provokes the 403 forbidden of every route a read key may not call
// (for TestOpenAPIAnswers).
func (p *prober) roles(e *env) {
	for _, key := range sortedKeys(anyMap(p.ops)) {
		role, _ := p.ops[key]["x-dtq-role"].(string)
		if role == "none" || role == "read" {
			continue
		}
		method, path, body := concrete(key)
		r := e.do(method, path, body, "X-API-Key", roleKeys["read"])
		if r.status != http.StatusForbidden || r.errCode() != "forbidden" {
			p.t.Errorf("%s with a read key: %d: %s", key, r.status, r.raw)
		}
		p.answer(key, r.status, r.header, r.raw)
	}
}
