package store

import (
	"strings"
	"testing"
)

// libBlocks loses no line of lib.lua's code, and each block is one
// definition: every line of code is in exactly one block.
func TestLibBlocksCoverLib(t *testing.T) {
	t.Parallel()
	var code []string
	for _, l := range strings.Split(libSource, "\n") {
		if strings.TrimSpace(l) != "" && !strings.HasPrefix(l, "--") {
			code = append(code, l)
		}
	}
	var got []string
	for _, b := range libIndex {
		for _, l := range strings.Split(b.text, "\n") {
			if strings.TrimSpace(l) != "" && !strings.HasPrefix(l, "--") {
				got = append(got, l)
			}
		}
	}
	if strings.Join(got, "\n") != strings.Join(code, "\n") {
		t.Fatalf("lib.lua's %d lines of code became %d in %d blocks", len(code), len(got), len(libIndex))
	}
	if len(libIndex) < 30 {
		t.Fatalf("only %d definitions found in lib.lua", len(libIndex))
	}
}

// libFor keeps what a script names and what that names, and nothing else.
func TestLibForKeepsWhatIsNamed(t *testing.T) {
	t.Parallel()
	lib := libFor("admit(KEYS[1], KEYS[2], ARGV[1], ARGV[2], ARGV[3], KEYS[3], KEYS[4])")
	for _, want := range []string{"local function admit(", "local function readd(", "local function group_window(", "local GROUP_WINDOW ="} {
		if !strings.Contains(lib, want) {
			t.Errorf("libFor(admit) lacks %q", want)
		}
	}
	for _, not := range []string{"born_ulid", "trim_band", "scope_take"} {
		if strings.Contains(lib, not) {
			t.Errorf("libFor(admit) has %s", not)
		}
	}
	if got := libFor("return 1"); strings.Contains(got, "local") {
		t.Errorf("libFor of a script naming nothing: %q", got)
	}
}
