package main

import (
	"slices"
	"strings"
	"testing"

	"github.com/dtq-dev/dtq"
)

func TestAudit(t *testing.T) {
	forEachAPI(t, nil, func(t *testing.T, e *apiEnv) {
		if out := e.ok("audit"); out != "no audit entries\n" {
			t.Errorf("dtq audit with none printed %q", out)
		}
		id := e.submit("echo", "--queue", "parked")
		e.ok("cancel", id)
		e.ok("queue", "pause", "parked")
		e.ok("queue", "resume", "parked")

		out := e.ok("audit")
		ls := lines(out)
		if h := strings.Fields(ls[0]); !slices.Equal(h, []string{"TIME", "ACTION", "QUEUE", "TASK", "DETAIL"}) {
			t.Fatalf("dtq audit header:\n%s", out)
		}
		if len(ls) != 4 {
			t.Fatalf("dtq audit: want 3 entries:\n%s", out)
		}
		// Newest first.
		for i, action := range []string{"resume", "pause", "cancel"} {
			if row := strings.Fields(ls[1+i]); row[1] != action || row[2] != "parked" {
				t.Errorf("dtq audit line %d: %q, want action %s on parked", i+1, row, action)
			}
		}
		if row := rowOf(t, out, id); row[1] != "cancel" {
			t.Errorf("dtq audit cancel row: %q", row)
		}

		v := e.json("audit", "--limit", "1")
		entries, _ := v["entries"].([]any)
		if len(entries) != 1 {
			t.Fatalf("dtq audit --limit 1 --json: %v", v)
		}
		if en, _ := entries[0].(map[string]any); en["action"] != "resume" || en["queue"] != "parked" || en["time"] == "" {
			t.Errorf("dtq audit --json entry: %v", en)
		}
		e.fails([]string{"audit", "--limit", "0"}, "400 invalid_field: limit")
		e.fails([]string{"audit", "--limit", "many"}, `invalid argument "many" for "--limit"`)
		e.fails([]string{"audit", "extra"}, `unknown command "extra"`)
	})
}

// dtq audit --help lists every action the audit stream records (issue 30:
// it listed six).
func TestAuditHelpListsEveryAction(t *testing.T) {
	t.Parallel()
	out, _, err := execute(t, "audit", "--help")
	if err != nil {
		t.Fatal(err)
	}
	if list := strings.Join(dtq.AuditActions(), ", "); !strings.Contains(out, list) {
		t.Errorf("dtq audit --help does not list %q:\n%s", list, out)
	}
}
