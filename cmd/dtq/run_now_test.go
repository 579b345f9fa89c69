package main

import (
	"strings"
	"testing"

	"github.com/dtq-dev/dtq"
)

func TestRunNow(t *testing.T) {
	forEachAPI(t, nil, func(t *testing.T, e *apiEnv) {
		later := e.submit("echo", "--delay", "1h")
		out := e.ok("run-now", later)
		if out != later+" runs now (status QUEUED)\n" && out != later+" runs now (status RUNNING)\n" {
			t.Errorf("dtq run-now printed %q", out)
		}
		e.waitStatus(later, dtq.StatusSucceeded)
		e.fails([]string{"run-now", later}, "409 not_scheduled: the task is not waiting in the schedule")
		e.fails([]string{"run-now", "default-01ARZ3NDEKTSV4RRFFQ69G5FAV"}, "404 not_found: no such task")
		e.fails([]string{"run-now"}, "accepts 1 arg(s), received 0")
		if v := e.json("run-now", e.submit("echo", "--delay", "1h")); !strings.HasPrefix(v["id"].(string), "default-") {
			t.Errorf("dtq run-now --json: %v", v)
		}
	})
}
