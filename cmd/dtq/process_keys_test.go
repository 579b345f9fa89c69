package main

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
)

// --api-keys gives keys with roles besides the admin key of --api-key: a
// read key may not submit (403), a submit key may, the admin key may
// pause, and GET /api/v1/whoami names each key's role.
func TestServeAPIKeys(t *testing.T) {
	t.Parallel()
	addr := freeAddr(t)
	base := "http://" + addr
	call := func(method, path, key, body string) (int, string) {
		t.Helper()
		req, err := http.NewRequestWithContext(t.Context(), method, base+path, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("X-API-Key", key)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		raw, _ := io.ReadAll(res.Body)
		return res.StatusCode, string(raw)
	}
	log, err := runWhile(t, addr, func() {
		for key, want := range map[string]string{"r-1": "read", "s-1": "submit", "w-1": "worker", "a-0": "admin", "a-1": "admin"} {
			code, body := call("GET", "/api/v1/whoami", key, "")
			var who struct{ Role string }
			if err := json.Unmarshal([]byte(body), &who); code != http.StatusOK || err != nil || who.Role != want {
				t.Errorf("whoami with %s: %d %s, want role %s", key, code, body, want)
			}
		}
		if code, body := call("POST", "/api/v1/tasks", "r-1", `{"task_type":"echo"}`); code != http.StatusForbidden {
			t.Errorf("submit with a read key: %d %s, want 403", code, body)
		}
		if code, body := call("POST", "/api/v1/tasks", "s-1", `{"task_type":"echo"}`); code != http.StatusCreated {
			t.Errorf("submit with a submit key: %d %s, want 201", code, body)
		}
		if code, body := call("POST", "/api/v1/queues/default/pause", "a-0", ""); code != http.StatusOK {
			t.Errorf("pause with --api-key: %d %s, want 200", code, body)
		}
	}, "serve", "--addr", addr, "--api-key", "a-0", "--api-keys", "read:r-1, submit:s-1,worker:w-1,admin:a-1")
	if err != nil {
		t.Fatalf("dtq serve: %v\n%s", err, log)
	}
	for _, secret := range []string{"r-1", "s-1", "w-1", "a-0", "a-1"} {
		if strings.Contains(log, secret) {
			t.Errorf("the log shows the key %s:\n%s", secret, log)
		}
	}
}

// A bad --api-keys is refused at start, naming the flag and the entry
// and quoting no key.
func TestServeAPIKeysRefused(t *testing.T) {
	t.Parallel()
	for keys, want := range map[string]string{
		"reader:secret-1":               `--api-keys (DTQ_API_KEYS): entry 1: unknown role "reader" (roles: read, submit, worker, admin)`,
		"read:secret-1,secret-2":        "--api-keys (DTQ_API_KEYS): entry 2 is not role:key",
		"read:secret-1,submit:secret-1": "--api-keys (DTQ_API_KEYS): entry 2: its key is already given by entry 1",
		"submit:secret-0":               "--api-keys (DTQ_API_KEYS): entry 1: its key is the admin key of --api-key",
		"worker:":                       "--api-keys (DTQ_API_KEYS): entry 1: the worker key is empty",
	} {
		_, _, err := execute(t, "serve", "--addr", "127.0.0.1:0", "--api-key", "secret-0", "--api-keys", keys)
		if err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("--api-keys %q: %v, want %q", keys, err, want)
			continue
		}
		if strings.Contains(err.Error(), "secret") {
			t.Errorf("--api-keys %q: the error quotes a key: %v", keys, err)
		}
	}
}
