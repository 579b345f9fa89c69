package main

import (
	"slices"
	"strings"
	"testing"
)

func TestGroupCommands(t *testing.T) {
	forEachAPI(t, nil, func(t *testing.T, e *apiEnv) {
		// A queue that does not exist (no submission, no worker): 404 (an
		// admin action makes no queue).
		e.fails([]string{"group", "list", "nowhere"}, `404 not_found: no such queue "nowhere"`)
		e.fails([]string{"group", "rm", "nowhere", "acme"}, `404 not_found: no such queue "nowhere"`)
		e.submit("echo")
		if out := e.ok("group", "list", "default"); out != "no weighted groups (every group weighs 1)\n" {
			t.Errorf("dtq group list with none printed %q", out)
		}
		if out := e.ok("group", "set", "default", "acme", "--weight", "3"); out != "group acme of queue default: weight 3\n" {
			t.Errorf("dtq group set printed %q", out)
		}
		out := e.ok("group", "list", "default")
		if h := strings.Fields(lines(out)[0]); !slices.Equal(h, []string{"GROUP", "WEIGHT", "WAITING"}) {
			t.Fatalf("dtq group list header:\n%s", out)
		}
		if row := rowOf(t, out, "acme"); !slices.Equal(row, []string{"acme", "3", "0"}) {
			t.Errorf("dtq group list row: %q", row)
		}
		if out := e.ok("group", "rm", "default", "acme"); out != "group acme of queue default: weight 1\n" {
			t.Errorf("dtq group rm printed %q", out)
		}
		e.fails([]string{"group", "set", "default", "acme", "--weight", "101"}, "400 invalid_field: weight")
		e.fails([]string{"group", "set", "default", "a b", "--weight", "2"}, "400 invalid_field: group")
		e.fails([]string{"group", "set", "default", "acme"}, "give --weight")
		e.fails([]string{"group", "list", ".."}, "400 invalid_field: queue")
	})
}
