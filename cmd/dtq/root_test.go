package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"
)

// runTimeout bounds every command a test runs; generous for a loaded
// machine, it only matters when something hangs.
const runTimeout = 2 * time.Minute

// execute runs the dtq command tree with args and returns what it wrote to
// its output and log writers. The writers are read only after the command
// returned, so the race detector reports any write made after that.
func execute(t *testing.T, args ...string) (out, errOut string, err error) {
	t.Helper()
	var o, e bytes.Buffer
	root := newRootCmd(&o, &e)
	root.SetArgs(args)
	ctx, cancel := context.WithTimeout(t.Context(), runTimeout)
	defer cancel()
	err = root.ExecuteContext(ctx)
	if ctx.Err() != nil {
		t.Fatalf("dtq %s: still running after %v", strings.Join(args, " "), runTimeout)
	}
	return o.String(), e.String(), err
}

func TestUnknownCommand(t *testing.T) {
	t.Parallel()
	out, _, err := execute(t, "frobnicate")
	if err == nil {
		t.Fatalf("dtq frobnicate: nil error, want unknown command (output %q)", out)
	}
	if !strings.Contains(err.Error(), "unknown command") || !strings.Contains(err.Error(), "frobnicate") {
		t.Errorf("dtq frobnicate: error %q, want it to name the unknown command", err)
	}
}

func TestUnknownFlag(t *testing.T) {
	t.Parallel()
	_, _, err := execute(t, "serve", "--no-such-flag")
	if err == nil || !strings.Contains(err.Error(), "no-such-flag") {
		t.Fatalf("dtq serve --no-such-flag: error %v, want one naming the flag", err)
	}
}

func TestRootHelpListsCommands(t *testing.T) {
	t.Parallel()
	out, _, err := execute(t, "--help")
	if err != nil {
		t.Fatalf("dtq --help: %v", err)
	}
	for _, cmd := range []string{"serve", "version"} {
		if !strings.Contains(out, cmd) {
			t.Errorf("dtq --help does not list %q:\n%s", cmd, out)
		}
	}
}
