// Package e2e holds black-box tests: they build the dtq binary, start it as
// a child process (on the embedded backend or on a redis-server the test
// started) and talk to it over HTTP only.
package e2e

import (
	"fmt"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/dtq-dev/dtq/internal/proctest"
	"github.com/dtq-dev/dtq/internal/redistest"
)

// binary is the dtq binary built for this test run.
var binary string

func TestMain(m *testing.M) {
	os.Exit(proctest.Main(m, "e2e", &proctest.BuildOpts{Race: true}, &binary, redistest.Main))
}

// start runs `dtq args...` with env added to the environment, waits until
// it logs "dtq is ready", and stops it (SIGTERM) at cleanup.
func start(t *testing.T, env []string, args ...string) *proctest.Proc {
	t.Helper()
	return proctest.Start(t, binary, &proctest.StartOpts{Env: env}, args...)
}

// redisURL returns the URL of the test's shared redis-server.
func redisURL(t *testing.T) string {
	return "redis://" + redistest.Shared(t).Addr
}

// metrics returns the process's /metrics text.
func metrics(p *proctest.Proc) string {
	r := p.Must(http.StatusOK, "GET", "/metrics", "")
	return string(r.Raw)
}

// waitMetric polls the /metrics of procs until series sums to want over
// them, failing after 10 s. (A worker counts an execution just after its
// outcome is recorded in Redis, so the API can show a task done before its
// worker's metrics do.)
func waitMetric(t *testing.T, series string, want float64, procs ...*proctest.Proc) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		got := 0.0
		for _, p := range procs {
			got += metricValue(t, metrics(p), series)
		}
		if got == want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the metrics count %s = %v, want %v", series, got, want)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// metricValue returns the value of the series named exactly series (with
// its labels), 0 when it is absent.
func metricValue(t *testing.T, text, series string) float64 {
	t.Helper()
	for _, line := range strings.Split(text, "\n") {
		if v, ok := strings.CutPrefix(line, series+" "); ok {
			var f float64
			if _, err := fmt.Sscan(v, &f); err != nil {
				t.Fatalf("metric %s: %q", series, line)
			}
			return f
		}
	}
	return 0
}
