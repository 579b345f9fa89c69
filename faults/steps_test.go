package faults

import (
	"os"
	"testing"
	"time"
)

// A step's fn running again before any record is allowed (its execution
// was interrupted); running after a record is what StepsRerun reports.
func TestStepsRerun(t *testing.T) {
	dir := t.TempDir()
	at := time.Unix(100, 0)
	lines := StepLine('F', "q-1", "s1", at) + StepLine('F', "q-1", "s1", at.Add(time.Second)) +
		StepLine('K', "q-1", "s1", at.Add(2*time.Second)) + StepLine('F', "q-1", "s2", at.Add(3*time.Second)) +
		StepLine('K', "q-1", "s2", at.Add(4*time.Second))
	if err := os.WriteFile(StepsFile(dir, "w1"), []byte(lines), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(StepsFile(dir, "w2"), []byte(StepLine('F', "q-1", "s2", at.Add(5*time.Second))), 0o644); err != nil {
		t.Fatal(err)
	}
	ev, err := ReadSteps(dir)
	if err != nil {
		t.Fatal(err)
	}
	rerun, ran, recorded := StepsRerun(ev)
	if len(rerun) != 1 || ran != 4 || recorded != 2 {
		t.Fatalf("rerun %q, ran %d, recorded %d; want s2 rerun on w2, 4 fns, 2 records", rerun, ran, recorded)
	}
}
