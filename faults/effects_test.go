package faults

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The logs are read while workers write them: a last line without its
// newline (being written, or cut short by a kill) is left out, and the
// complete lines before it are read.
func TestLogsReadOnlyCompleteLines(t *testing.T) {
	dir := t.TempDir()
	trace := "S t1 1000\nR t1 2000\nR fau"
	if err := os.WriteFile(filepath.Join(dir, "trace-w1.log"), []byte(trace), 0o644); err != nil {
		t.Fatal(err)
	}
	tr, err := ReadTrace(dir, "w1")
	if err != nil {
		t.Fatalf("a trace with a partial last line: %v", err)
	}
	if len(tr) != 2 || tr[0].Kind != 'S' || tr[1].Kind != 'R' || tr[1].At != time.Unix(0, 2000) {
		t.Fatalf("trace events: %+v", tr)
	}

	e := Effect{TaskID: "t1", Key: "k1", Attempt: 1, Worker: "w1", PID: 7, Start: time.Unix(0, 5), At: time.Unix(0, 9)}
	effects, err := ParseEffects(strings.NewReader(e.Line() + "t2 k2 1 0 w1"))
	if err != nil {
		t.Fatalf("effects with a partial last line: %v", err)
	}
	if len(effects) != 1 || effects[0] != e {
		t.Fatalf("effects: %+v", effects)
	}

	// A malformed complete line is still an error.
	if _, err := ParseEffects(strings.NewReader("t2 k2 1 0 w1\n")); err == nil {
		t.Fatal("a malformed complete effect line was accepted")
	}
}
