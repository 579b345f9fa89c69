package api

import (
	"crypto/sha256"
	"crypto/subtle"
	"fmt"
	"strings"
)

// Role is what an API key may do. Every route names the least role that
// may call it (docs/api.md has the table; openapi.json says it per
// operation as x-dtq-role):
//
//   - RoleRead: every read (GET) route and the events WebSocket.
//   - RoleSubmit: read, and what a producer does: submit tasks, batches,
//     workflows and message-queue messages, cancel tasks and workflows,
//     signal tasks.
//   - RoleWorker: read, and what an HTTP worker or a message-queue
//     consumer does: the lease routes of /api/v1/leases and
//     /api/v1/mq/{queue}/leases.
//   - RoleAdmin: everything: dead-letter actions, queues, schedules,
//     limits, group weights — and what the other roles may.
//
// Submit and worker are not ordered: a producer takes no leases and a
// worker submits nothing (a handler that also submits uses a submit key for
// that).
type Role string

// The roles of an API key.
const (
	RoleRead   Role = "read"
	RoleSubmit Role = "submit"
	RoleWorker Role = "worker"
	RoleAdmin  Role = "admin"
)

// roleNone marks a route anyone may call (probes, the document) in the
// route table, and a request that sent no key in GET /api/v1/whoami.
const roleNone Role = "none"

// roles lists the roles, least first.
var roles = []Role{RoleRead, RoleSubmit, RoleWorker, RoleAdmin}

// valid reports whether r is one of the roles.
func (r Role) valid() bool {
	for _, v := range roles {
		if r == v {
			return true
		}
	}
	return false
}

// Allows reports whether a key of role r may call a route that needs role
// need: admin may call everything, every role may read, and otherwise only
// the role itself.
func (r Role) Allows(need Role) bool {
	return r == RoleAdmin || r == need || need == RoleRead
}

// holders names the roles that may call a route needing need, for a 403's
// message: "an admin key", "a submit or admin key".
func holders(need Role) string {
	if need == RoleAdmin {
		return "an admin key"
	}
	return "a " + string(need) + " or admin key"
}

// Key is one API key and its role.
type Key struct {
	Role Role
	Key  string
}

// ParseKeys parses a list of keys as the --api-keys flag takes it:
// comma-separated role:key entries ("read:k1,submit:k2"), spaces around an
// entry ignored. A key may hold a colon (the first one ends the role) but no
// comma. An error names the entry by its position and never quotes a key.
func ParseKeys(list string) ([]Key, error) {
	if strings.TrimSpace(list) == "" {
		return nil, nil
	}
	var keys []Key
	for i, entry := range strings.Split(list, ",") {
		entry = strings.TrimSpace(entry)
		role, key, ok := strings.Cut(entry, ":")
		if !ok {
			return nil, fmt.Errorf("entry %d is not role:key (roles: %s)", i+1, roleNames())
		}
		keys = append(keys, Key{Role: Role(strings.TrimSpace(role)), Key: key})
	}
	if err := checkKeyList("", keys, func(i int) string { return fmt.Sprintf("entry %d", i+1) }); err != nil {
		return nil, err
	}
	return keys, nil
}

// CheckKeys reports what is wrong with c's keys, naming the field: a
// Keys entry with an unknown role or an empty key, or a key given twice
// (APIKey included). New panics on such a Config; call CheckKeys first
// where the keys come from a user.
func (c *Config) CheckKeys() error {
	return checkKeyList(c.APIKey, c.Keys, func(i int) string { return fmt.Sprintf("Keys[%d]", i) })
}

// checkKeyList checks keys (and the admin key apiKey, if any); at names the
// entry of index i in an error.
func checkKeyList(apiKey string, keys []Key, at func(i int) string) error {
	seen := map[[sha256.Size]byte]string{}
	if apiKey != "" {
		seen[sha256.Sum256([]byte(apiKey))] = "APIKey"
	}
	for i, k := range keys {
		if !k.Role.valid() {
			return fmt.Errorf("%s: unknown role %q (roles: %s)", at(i), k.Role, roleNames())
		}
		if strings.TrimSpace(k.Key) == "" {
			return fmt.Errorf("%s: the %s key is empty", at(i), k.Role)
		}
		d := sha256.Sum256([]byte(k.Key))
		if prev, ok := seen[d]; ok {
			return fmt.Errorf("%s: its key is already given by %s (one key has one role)", at(i), prev)
		}
		seen[d] = at(i)
	}
	return nil
}

func roleNames() string {
	names := make([]string, len(roles))
	for i, r := range roles {
		names[i] = string(r)
	}
	return strings.Join(names, ", ")
}

// keyring holds the SHA-256 digests of the configured keys and their roles.
type keyring []keyDigest

type keyDigest struct {
	digest [sha256.Size]byte
	role   Role
}

// newKeyring returns the keys of c: APIKey as an admin key, then Keys.
func newKeyring(c *Config) keyring {
	var k keyring
	if c.APIKey != "" {
		k = append(k, keyDigest{sha256.Sum256([]byte(c.APIKey)), RoleAdmin})
	}
	for _, e := range c.Keys {
		k = append(k, keyDigest{sha256.Sum256([]byte(e.Key)), e.Role})
	}
	return k
}

// role returns the role of key, or false when it is none of the keys. It
// compares SHA-256 digests in constant time, with every key: neither the
// key's length nor a prefix nor which key matched leaks through timing.
func (k keyring) role(key string) (Role, bool) {
	got := sha256.Sum256([]byte(key))
	var role Role
	found := 0
	for _, e := range k {
		if subtle.ConstantTimeCompare(got[:], e.digest[:]) == 1 {
			role, found = e.role, 1
		}
	}
	return role, found == 1
}
