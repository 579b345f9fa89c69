// Package python_test runs the Python client library's own tests
// (clients/python/tests, unittest) against `dtq serve` on a redis-server of
// their own, so that `go test ./...` (make test, CI) runs them.
package python_test

import (
	"os"
	"os/exec"
	"strconv"
	"syscall"
	"testing"

	"github.com/dtq-dev/dtq/internal/proctest"
	"github.com/dtq-dev/dtq/internal/redistest"
)

// binary is the dtq binary built for this test run.
var binary string

func TestMain(m *testing.M) {
	os.Exit(proctest.Main(m, "python", nil, &binary, redistest.Main))
}

// The server's API key and queue depth bound: the tests check that a wrong
// key is refused (dtq.Unauthorized) and a full queue answers dtq.QueueFull.
const (
	apiKey   = "py-test-key"
	maxDepth = 300
)

// TestPythonLibrary runs `python3 -m unittest discover -s tests` with
// DTQ_API_URL and DTQ_API_KEY set for a fresh `dtq serve`, streaming its
// output; it fails when any Python test fails (or python3 is missing: make
// deps installs it; a missing runtime is a failure, not a skip).
func TestPythonLibrary(t *testing.T) {
	python, err := exec.LookPath("python3")
	if err != nil {
		t.Fatalf("python3 is not installed (make deps installs it): %v", err)
	}
	srv := redistest.Start(t, nil)
	serve := proctest.Start(t, binary, &proctest.StartOpts{DropDTQEnv: true}, "serve", "--redis", "redis://"+srv.Addr,
		"--addr", "127.0.0.1:0", "--queues", "default", "--api-key", apiKey, "--max-depth", strconv.Itoa(maxDepth))
	cmd := exec.Command(python, "-m", "unittest", "discover", "-v", "-s", "tests")
	cmd.Dir = "." // clients/python: the tests import the package from here
	cmd.Env = append(envWithoutDTQ(), "DTQ_API_URL="+serve.URL, "DTQ_API_KEY="+apiKey,
		"DTQ_TEST_MAX_DEPTH="+strconv.Itoa(maxDepth), "PYTHONDONTWRITEBYTECODE=1", "PYTHONUNBUFFERED=1")
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Run(); err != nil {
		t.Fatalf("the Python tests failed (%v): see their output above", err)
	}
	serve.CheckNoPanic()
}

// envWithoutDTQ is this process's environment without its DTQ_ variables.
func envWithoutDTQ() []string {
	var out []string
	for _, kv := range os.Environ() {
		if len(kv) < 4 || kv[:4] != "DTQ_" {
			out = append(out, kv)
		}
	}
	return out
}
