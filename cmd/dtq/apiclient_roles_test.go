package main

import (
	"testing"

	"github.com/dtq-dev/dtq/api"
)

// TestAPIKeyRoles: a key whose role may not do what a command asks fails
// with the server's 403, which names the key's role and the role needed,
// and says which key the CLI sent; a key of that role succeeds.
func TestAPIKeyRoles(t *testing.T) {
	forEachAPI(t, &apiEnvOpts{api: api.Config{Keys: []api.Key{
		{Role: api.RoleRead, Key: "reader"},
		{Role: api.RoleSubmit, Key: "producer"},
		{Role: api.RoleAdmin, Key: "operator"},
	}}}, func(t *testing.T, e *apiEnv) {
		e.fails([]string{"submit", "echo", "--api-key", "reader"},
			"403 forbidden: this key's role (read) may not call POST /api/v1/tasks: that needs a submit or admin key",
			"use a key of the role named")
		id := e.submit("echo", "--api-key", "producer")
		e.ok("get", id, "--api-key", "reader")
		for _, args := range [][]string{
			{"queue", "pause", "default"},
			{"dlq", "purge", "--all-queues", "--yes"},
			{"dlq", "requeue", "default-01ARZ3NDEKTSV4RRFFQ69G5FAV"},
		} {
			e.fails(append(args, "--api-key", "producer"), "403 forbidden: this key's role (submit) may not call", "that needs an admin key", "--api-key or DTQ_API_KEY")
		}
		e.ok("queue", "pause", "default", "--api-key", "operator")
	})
}
