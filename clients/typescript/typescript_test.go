// Package typescript_test runs the TypeScript library's own tests
// (clients/typescript/test/*.test.mjs, node:test) from `go test ./...`: it builds dtq,
// starts a redis-server and `dtq serve` on it (and a `dtq api` that requires
// an API key, for the 401 test), installs the library's pinned dev
// dependencies with `npm ci` when node_modules is missing, and runs
// `node --test` against them with DTQ_API_URL set, streaming its output.
// A missing node or npm fails the test (make deps installs nodejs); it is
// never skipped.
package typescript_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/dtq-dev/dtq/internal/proctest"
	"github.com/dtq-dev/dtq/internal/redistest"
)

// binary is the dtq binary built for this test run.
var binary string

func TestMain(m *testing.M) {
	os.Exit(proctest.Main(m, "typescript", nil, &binary, redistest.Main))
}

// testKey is the API key of the keyed server.
const testKey = "ts-test-key"

// TestTypeScriptLibrary runs `node --test test/*.test.mjs` against dtq serve on a real
// Redis: the client calls and typed errors, the worker (outcomes, retries,
// cancel, timeout, steps, durable sleep, signals, graceful stop, batch
// leasing), the message queue, and the freshness of the committed dist/.
func TestTypeScriptLibrary(t *testing.T) {
	node := lookPath(t, "node")
	installDeps(t)
	srv := redistest.Start(t, nil)
	redisURL := "redis://" + srv.Addr
	serve := proctest.Start(t, binary, &proctest.StartOpts{DropDTQEnv: true, CheckAtStop: true},
		"serve", "--redis", redisURL, "--addr", "127.0.0.1:0", "--queues", "default")
	keyed := proctest.Start(t, binary, &proctest.StartOpts{DropDTQEnv: true},
		"api", "--redis", redisURL, "--addr", "127.0.0.1:0", "--api-key", testKey)

	// The test files by name: given a folder, node --test would also run
	// every other .mjs in it (the conformance worker, the helpers).
	files, err := filepath.Glob("test/*.test.mjs")
	if err != nil || len(files) == 0 {
		t.Fatalf("no test/*.test.mjs: %v", err)
	}
	cmd := exec.Command(node, append([]string{"--test", "--test-concurrency=1", "--test-reporter=spec"}, files...)...)
	cmd.Env = append(envWithoutDTQ(), "DTQ_API_URL="+serve.URL, "DTQ_TEST_KEYED_URL="+keyed.URL, "DTQ_TEST_API_KEY="+testKey,
		"DTQ_TEST_REDIS_URL="+redisURL)
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatalf("node --test: %v", err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("node --test failed (%v): its output is above", err)
		}
	case <-time.After(8 * time.Minute):
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-done
		t.Fatal("node --test did not end within 8 minutes")
	}
	serve.CheckNoPanic()
}

// lookPath finds a runtime the test needs, or fails naming what installs it.
func lookPath(t *testing.T, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		t.Fatalf("%s is not installed (make deps installs nodejs and npm): %v", name, err)
	}
	return p
}

// installDeps runs `npm ci` (the dev dependencies pinned in
// package-lock.json: typescript, for the dist freshness test) when
// node_modules is missing.
func installDeps(t *testing.T) {
	t.Helper()
	if _, err := os.Stat("node_modules/typescript/package.json"); err == nil {
		return
	}
	npm := lookPath(t, "npm")
	cmd := exec.Command(npm, "ci", "--no-audit", "--no-fund")
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("npm ci in clients/typescript: %v", err)
	}
}

// envWithoutDTQ is this process's environment without DTQ_ variables, so
// that only the test's own settings reach the library.
func envWithoutDTQ() []string {
	var out []string
	for _, kv := range os.Environ() {
		if len(kv) < 4 || kv[:4] != "DTQ_" {
			out = append(out, kv)
		}
	}
	return out
}
