//go:build faults

package faults

import (
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/dtq-dev/dtq/internal/redistest"
)

// load runs for the scenario's load time.
const loadTime = 6 * time.Second

// standalone starts a dedicated redis-server for a scenario.
func standalone(t *testing.T, opts *redistest.Options) (*redistest.Server, string) {
	s := redistest.Start(t, opts)
	return s, "redis://" + s.Addr
}

// 1. No fault: the yardstick.
func TestBaseline(t *testing.T) {
	_, url := standalone(t, &redistest.Options{AppendFsync: "everysec"})
	r := newRig(t, url, rigOpts{})
	stop := r.startLoad(loadOpts{})
	time.Sleep(loadTime) // the load's length, not a wait for a condition
	stop()
	rep := r.finish(nil)
	record(t, Row{Scenario: "1 baseline", Rep: rep, Recovery: -1})
	assertInvariants(t, rep, 0, true)
}

var _ = strings.Contains
var _ = syscall.SIGKILL
