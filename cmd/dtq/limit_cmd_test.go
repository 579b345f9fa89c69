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
		if out := e.ok("limit", "set", "reports", "--max-running", "5"); out != "queue reports: at most 5 running at once (0 in use)\n" {
			t.Errorf("dtq limit set printed %q", out)
		}
		out := e.ok("limit", "list")
		if h := strings.Fields(lines(out)[0]); !slices.Equal(h, []string{"QUEUE", "OF", "MAX", "RUNNING", "IN", "USE", "WAITING", "RATE"}) {
			t.Fatalf("dtq limit list header:\n%s", out)
		}
		if row := rowOf(t, out, "reports"); !slices.Equal(row, []string{"reports", "queue", "5", "0", "-", "-"}) {
			t.Errorf("dtq limit list row: %q", row)
		}
		if v := e.json("limit", "list"); len(v["limits"].([]any)) != 1 {
			t.Errorf("dtq limit list --json: %v", v)
		}
		if out := e.ok("limit", "set", "api", "--rate", "50", "--per", "2s", "--burst", "5", "--max-running", "3"); out != "queue api: at most 3 running at once (0 in use); at most 50 starts per 2s, bursts of 5\n" {
			t.Errorf("dtq limit set --rate printed %q", out)
		}
		if row := rowOf(t, e.ok("limit", "list"), "api"); !slices.Equal(row, []string{"api", "queue", "3", "0", "-", "50/2s", "burst", "5"}) {
			t.Errorf("dtq limit list row of api: %q", row)
		}
		// A task type's and a limit key's limits.
		out = e.ok("limit", "set", "api", "--type", "report/build", "--max-running", "2")
		if !strings.Contains(out, "  type report/build: at most 2 running at once (0 in use), 0 waiting\n") {
			t.Errorf("dtq limit set --type printed %q", out)
		}
		e.ok("limit", "set", "api", "--limit-key", "*", "--rate", "5")
		list := e.ok("limit", "list")
		if !strings.Contains(list, "type report/build") || !strings.Contains(list, "limit key *") {
			t.Errorf("dtq limit list with scoped limits:\n%s", list)
		}
		e.fails([]string{"limit", "set", "api", "--type", "t", "--limit-key", "k", "--max-running", "1"}, "none of the others can be")
		e.fails([]string{"limit", "set", "api", "--limit-key", "a b", "--max-running", "1"}, "400 invalid_field: limit_key")
		if out := e.ok("limit", "rm", "api", "--type", "report/build"); strings.Contains(out, "report/build") {
			t.Errorf("dtq limit rm --type printed %q", out)
		}
		e.ok("limit", "rm", "api", "--limit-key", "*")
		e.ok("limit", "rm", "api")
		if out := e.ok("limit", "rm", "reports"); out != "queue reports: no limits\n" {
			t.Errorf("dtq limit rm printed %q", out)
		}
		if out := e.ok("limit", "list"); out != "no limits\n" {
			t.Errorf("dtq limit list after rm printed %q", out)
		}
		e.fails([]string{"limit", "set", "reports", "--max-running", "0"}, "400 invalid_field: max_running")
		e.fails([]string{"limit", "set", "reports", "--max-running", "many"}, "invalid argument")
		e.fails([]string{"limit", "set", "reports", "--max-running", "2000000"}, "400 invalid_field: max_running")
		e.fails([]string{"limit", "set", "reports", "--rate", "10", "--burst", "11"}, "400 invalid_field: burst")
		e.fails([]string{"limit", "set", "reports", "--burst", "2"}, "--per and --burst go with --rate")
		e.fails([]string{"limit", "set", "reports"}, "give --max-running, --rate or both")
		e.fails([]string{"limit", "set", "bad name", "--max-running", "3"}, "400 invalid_field: queue")
		e.fails([]string{"limit", "rm", ".."}, "400 invalid_field: queue")
		e.fails([]string{"limit", "set"}, "accepts 1 arg(s), received 0")
	})
}
