package main

import (
	"strings"
	"testing"
)

// dtq signal records a signal once; a second one, and one to an unknown
// task, are refused with the API's words; dtq get shows the record.
func TestSignal(t *testing.T) {
	forEachAPI(t, nil, func(t *testing.T, e *apiEnv) {
		parked := e.submit("echo", "--queue", "parked") // no worker takes it
		if out := e.ok("signal", parked, "approved", "--payload", `{"by":"ann"}`); out != "signal approved delivered to "+parked+"\n" {
			t.Errorf("dtq signal printed %q", out)
		}
		e.fails([]string{"signal", parked, "approved"}, "409 signal_delivered")
		e.fails([]string{"signal", "default-01ARZ3NDEKTSV4RRFFQ69G5FAV", "approved"}, "404 not_found: no such task")
		e.fails([]string{"signal", parked, "x", "--payload", "{"}, "--payload is not valid JSON")
		e.fails([]string{"signal", parked, ""}, "the signal name must not be empty")
		if out := e.ok("get", parked); !strings.Contains(out, "approved") || !strings.Contains(out, `{"by":"ann"}`) {
			t.Errorf("dtq get does not show the signal's record:\n%s", out)
		}
	})
}
