package main

import (
	"strings"
	"testing"
)

// TestClientCommandsListed: the root help lists every client command, and
// each has the API flags.
func TestClientCommandsListed(t *testing.T) {
	t.Parallel()
	out, _, err := execute(t, "--help")
	if err != nil {
		t.Fatalf("dtq --help: %v", err)
	}
	for _, cmd := range []string{"submit", "get", "list", "cancel", "dlq", "retry-dlq", "queue", "workers", "audit"} {
		if !strings.Contains(out, "\n  "+cmd+" ") {
			t.Errorf("dtq --help does not list %q:\n%s", cmd, out)
		}
	}
	for _, args := range [][]string{
		{"submit"}, {"get"}, {"list"}, {"cancel"},
		{"dlq", "list"}, {"dlq", "requeue"}, {"dlq", "discard"}, {"dlq", "purge"}, {"retry-dlq"},
		{"queue", "list"}, {"queue", "stats"}, {"queue", "pause"}, {"queue", "resume"},
		{"workers"}, {"audit"},
	} {
		out, _, err := execute(t, append(args, "--help")...)
		if err != nil {
			t.Fatalf("dtq %s --help: %v", strings.Join(args, " "), err)
		}
		for _, flag := range []string{"--api-url", "--api-key", "--json", "--timeout"} {
			if !strings.Contains(out, flag) {
				t.Errorf("dtq %s --help does not list %s:\n%s", strings.Join(args, " "), flag, out)
			}
		}
	}
}
