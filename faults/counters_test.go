package faults

import (
	"strings"
	"testing"

	"github.com/dtq-dev/dtq"
)

func TestCheckCounters(t *testing.T) {
	st := &State{
		Tasks: []*dtq.Task{
			{ID: "a", Status: dtq.StatusSucceeded, History: []dtq.Execution{{Outcome: dtq.OutcomeRetried}, {Outcome: dtq.OutcomeSucceeded}}},
			{ID: "b", Status: dtq.StatusDead, History: []dtq.Execution{{Outcome: dtq.OutcomeDead}}},
			{ID: "c", Status: dtq.StatusDead, History: []dtq.Execution{{Outcome: dtq.OutcomeLost}}}, // past the crash limit
			{ID: "d", Status: dtq.StatusCancelled},
		},
		Dead: []dtq.DeadLetter{{}, {}},
	}
	exact := &dtq.QueueStats{Submitted: 4, Succeeded: 1, Retried: 1, Failed: 2, Cancelled: 1, Dead: 2}
	if off := CheckCounters(st, exact); len(off) != 0 {
		t.Fatalf("exact counters reported off: %v", off)
	}
	drift := *exact
	drift.Failed, drift.Retried, drift.Queued = 1, 0, 1
	off := CheckCounters(st, &drift)
	if len(off) != 3 || !strings.Contains(strings.Join(off, "\n"), "dead_total 1, the tasks say 2") {
		t.Fatalf("drift reported as %v", off)
	}
}

func TestPhantomCrashes(t *testing.T) {
	st := &State{Tasks: []*dtq.Task{
		{ID: "a", History: []dtq.Execution{{Run: 1, Worker: "w1", Outcome: dtq.OutcomeLost}, {Run: 2, Worker: "w2", Outcome: dtq.OutcomeSucceeded}}},
		{ID: "b", History: []dtq.Execution{{Run: 1, Worker: "w1", Outcome: dtq.OutcomeLost}, {Run: 2, Worker: "w2", Outcome: dtq.OutcomeSucceeded}}},
		{ID: "c", History: []dtq.Execution{{Run: 1, Worker: "w3", Outcome: dtq.OutcomeLost}, {Run: 2, Worker: "w2", Outcome: dtq.OutcomeSucceeded}}},
	}}
	traces := map[string][]TraceEvent{
		"w1": {{Kind: 'S', TaskID: "a", Worker: "w1"}}, // a's handler started on w1: a real crash
		"w2": {{Kind: 'S', TaskID: "a"}, {Kind: 'S', TaskID: "b"}, {Kind: 'S', TaskID: "c"}},
		"w3": nil, // killed
	}
	got := PhantomCrashes(st, traces, map[string]bool{"w3": true})
	if len(got) != 1 || !strings.HasPrefix(got[0], "b: run 1 by w1") {
		t.Fatalf("phantom crashes %v, want b's run 1 only", got)
	}
}
