package main

import (
	"runtime"
	"strings"
	"testing"
)

func TestVersion(t *testing.T) {
	t.Parallel()
	out, errOut, err := execute(t, "version")
	if err != nil {
		t.Fatalf("dtq version: %v", err)
	}
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) != 1 || !strings.HasPrefix(lines[0], "dtq ") || !strings.HasSuffix(out, "\n") {
		t.Fatalf("dtq version printed %q, want one line starting %q", out, "dtq ")
	}
	if !strings.Contains(lines[0], runtime.Version()) {
		t.Errorf("dtq version line %q does not name the Go version %s", lines[0], runtime.Version())
	}
	if errOut != "" {
		t.Errorf("dtq version wrote to the log writer: %q", errOut)
	}
}

func TestVersionRejectsArgs(t *testing.T) {
	t.Parallel()
	if _, _, err := execute(t, "version", "extra"); err == nil {
		t.Fatal("dtq version extra: nil error, want one for the unexpected argument")
	}
}
