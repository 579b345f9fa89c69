package main

import (
	"slices"
	"strings"
	"testing"
)

func TestLimitCommands(t *testing.T) {
	forEachAPI(t, nil, func(t *testing.T, e *apiEnv) {
		if out := e.ok("limit", "list"); out != "no limits\n" {
			t.Errorf("dtq limit list with none printed %q", out)
		}
		if out := e.ok("limit", "set", "reports", "5"); out != "queue reports: at most 5 running at once (0 in use)\n" {
			t.Errorf("dtq limit set printed %q", out)
		}
		out := e.ok("limit", "list")
		if h := strings.Fields(lines(out)[0]); !slices.Equal(h, []string{"QUEUE", "MAX", "RUNNING", "IN", "USE"}) {
			t.Fatalf("dtq limit list header:\n%s", out)
		}
		if row := rowOf(t, out, "reports"); !slices.Equal(row, []string{"reports", "5", "0"}) {
			t.Errorf("dtq limit list row: %q", row)
		}
		if v := e.json("limit", "list"); len(v["limits"].([]any)) != 1 {
			t.Errorf("dtq limit list --json: %v", v)
		}
		if out := e.ok("limit", "rm", "reports"); out != "queue reports: no concurrency limit\n" {
			t.Errorf("dtq limit rm printed %q", out)
		}
		if out := e.ok("limit", "list"); out != "no limits\n" {
			t.Errorf("dtq limit list after rm printed %q", out)
		}
		e.fails([]string{"limit", "set", "reports", "0"}, "MAX_RUNNING must be a whole number of at least 1")
		e.fails([]string{"limit", "set", "reports", "many"}, "MAX_RUNNING must be a whole number of at least 1")
		e.fails([]string{"limit", "set", "reports", "2000000"}, "400 invalid_field: max_running")
		e.fails([]string{"limit", "set", "bad name", "3"}, "400 invalid_field: queue")
		e.fails([]string{"limit", "rm", ".."}, "400 invalid_field: queue")
		e.fails([]string{"limit", "set", "reports"}, "accepts 2 arg(s), received 1")
	})
}
