package faults

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/dtq-dev/dtq"
)

func task(id, key string, status dtq.Status, outcomes ...dtq.Outcome) *dtq.Task {
	p, _ := json.Marshal(Payload{Key: key})
	t := &dtq.Task{ID: id, Queue: "q", Type: TaskType, Payload: p, Status: status}
	for i, o := range outcomes {
		t.History = append(t.History, dtq.Execution{Run: i + 1, Outcome: o})
	}
	return t
}

func effect(id, key string) Effect { return Effect{TaskID: id, Key: key, Worker: "w"} }

func ok(key, id string) Submit { return Submit{Key: key, Answer: OK, TaskID: id} }

// A clean run: every submission executed once and SUCCEEDED.
func TestCheckClean(t *testing.T) {
	t.Parallel()
	r := Check(Input{
		Ledger:  []Submit{ok("k1", "q-1"), ok("k2", "q-2"), {Key: "k3", Answer: Failed}},
		Effects: []Effect{effect("q-1", "k1"), effect("q-2", "k2")},
		State:   &State{Tasks: []*dtq.Task{task("q-1", "k1", dtq.StatusSucceeded, dtq.OutcomeSucceeded), task("q-2", "k2", dtq.StatusSucceeded, dtq.OutcomeLost, dtq.OutcomeSucceeded)}},
	})
	if r.Submitted != 3 || r.OK != 2 || r.Failed != 1 || r.Executed != 2 || r.Succeeded != 2 {
		t.Fatalf("counts: %+v", r)
	}
	if len(r.Lost)+r.Duplicated+len(r.Unexpected)+len(r.MultipleTerminal)+len(r.BadDead) != 0 {
		t.Fatalf("a clean run reported problems: %+v", r)
	}
}

// Every kind of problem is found and named.
func TestCheckFindsProblems(t *testing.T) {
	t.Parallel()
	r := Check(Input{
		Ledger: []Submit{
			ok("never-ran", "q-1"),    // SUCCEEDED without an effect
			ok("stuck", "q-2"),        // still QUEUED
			ok("gone", "q-3"),         // not in Redis
			ok("twice", "q-4"),        // two effects
			ok("two-terminal", "q-5"), // two ok executions in history
			ok("dead", "q-6"),         // DEAD, dead-lettered
			{Key: "refused", Answer: Failed, Err: "OOM"},
			{Key: "unknown-ran", Answer: Unknown},
			{Key: "unknown-stuck", Answer: Unknown},
		},
		Effects: []Effect{
			effect("q-4", "twice"), effect("q-4", "twice"),
			effect("q-5", "two-terminal"),
			effect("q-6", "dead"),
			effect("q-9", "stranger"),    // never submitted
			effect("q-7", "refused"),     // a refused submission ran
			effect("q-8", "unknown-ran"), // fine
			effect("q-1x", "stuck"),      // a second task for an OK key
		},
		State: &State{
			Tasks: []*dtq.Task{
				task("q-1", "never-ran", dtq.StatusSucceeded, dtq.OutcomeSucceeded),
				task("q-2", "stuck", dtq.StatusQueued),
				task("q-4", "twice", dtq.StatusSucceeded, dtq.OutcomeLost, dtq.OutcomeSucceeded),
				task("q-5", "two-terminal", dtq.StatusSucceeded, dtq.OutcomeSucceeded, dtq.OutcomeSucceeded),
				task("q-6", "dead", dtq.StatusDead, dtq.OutcomeDead),
				task("q-8", "unknown-ran", dtq.StatusSucceeded, dtq.OutcomeSucceeded),
				task("q-10", "unknown-stuck", dtq.StatusRunning),
			},
			Dead: []dtq.DeadLetter{{Task: task("q-6", "dead", dtq.StatusDead), Reason: "boom"}},
		},
	})
	wantLost := []string{"dead", "gone", "never-ran", "stuck", "unknown-stuck"}
	if !reflect.DeepEqual(r.LostKeys, wantLost) {
		t.Errorf("lost keys %v, want %v\n%s", r.LostKeys, wantLost, strings.Join(r.Lost, "\n"))
	}
	if r.Duplicated != 1 || len(r.DuplicatedTasks) != 1 || !strings.HasPrefix(r.DuplicatedTasks[0], "q-4 ") {
		t.Errorf("duplicated %d %v, want 1 (q-4)", r.Duplicated, r.DuplicatedTasks)
	}
	if len(r.Unexpected) != 3 {
		t.Errorf("unexpected %v, want 3 (stranger, refused, second task of stuck)", r.Unexpected)
	}
	if len(r.MultipleTerminal) != 1 || !strings.HasPrefix(r.MultipleTerminal[0], "q-5:") {
		t.Errorf("multiple terminal %v, want q-5", r.MultipleTerminal)
	}
	if len(r.BadDead) != 1 || !strings.Contains(r.BadDead[0], "boom") {
		t.Errorf("bad dead letters %v, want q-6's", r.BadDead)
	}
	if r.UnknownWritten != 2 {
		t.Errorf("unknown written %d, want 2", r.UnknownWritten)
	}
}

// A task written by a try whose answer never came, then replaced by a
// later try's task (the first was lost in a failover), counts its
// executions as duplicates of the key, not as unexpected.
func TestCheckSuperseded(t *testing.T) {
	t.Parallel()
	r := Check(Input{
		Ledger:  []Submit{{Key: "k", Answer: OK, TaskID: "q-2", Ambiguous: 1}},
		Effects: []Effect{effect("q-1", "k"), effect("q-2", "k")},
		State:   &State{Tasks: []*dtq.Task{task("q-2", "k", dtq.StatusSucceeded, dtq.OutcomeSucceeded)}},
	})
	if r.Duplicated != 1 || len(r.Unexpected) != 0 || len(r.Lost) != 0 {
		t.Fatalf("duplicated %d %v, unexpected %v, lost %v", r.Duplicated, r.DuplicatedTasks, r.Unexpected, r.Lost)
	}
}

// After a data loss, a task gone from Redis is judged by its status at
// the loss: SUCCEEDED then is fine, anything else is lost.
func TestCheckFlushed(t *testing.T) {
	t.Parallel()
	r := Check(Input{
		Ledger:  []Submit{ok("done", "q-1"), ok("queued", "q-2"), ok("running", "q-3"), ok("after", "q-4")},
		Effects: []Effect{effect("q-1", "done"), effect("q-3", "running"), effect("q-4", "after")},
		State:   &State{Tasks: []*dtq.Task{task("q-4", "after", dtq.StatusSucceeded, dtq.OutcomeSucceeded)}},
		Flushed: map[string]dtq.Status{"q-1": dtq.StatusSucceeded, "q-2": dtq.StatusQueued, "q-3": dtq.StatusRunning},
	})
	if want := []string{"queued", "running"}; !reflect.DeepEqual(r.LostKeys, want) {
		t.Fatalf("lost %v, want %v", r.Lost, want)
	}
	if len(r.Unexpected)+len(r.MultipleTerminal) != 0 {
		t.Fatalf("%+v", r)
	}
}

// The SUCCEEDED-status checks: a DEAD task outside the stream and a
// SUCCEEDED task in it.
func TestCheckDeadLetters(t *testing.T) {
	t.Parallel()
	r := Check(Input{
		Ledger:  []Submit{ok("a", "q-1"), ok("b", "q-2")},
		Effects: []Effect{effect("q-1", "a"), effect("q-2", "b")},
		State: &State{
			Tasks: []*dtq.Task{task("q-1", "a", dtq.StatusDead, dtq.OutcomeDead), task("q-2", "b", dtq.StatusSucceeded, dtq.OutcomeSucceeded)},
			Dead:  []dtq.DeadLetter{{Task: task("q-2", "b", dtq.StatusDead), Reason: "x"}},
		},
	})
	if len(r.BadDead) != 2 || len(r.MultipleTerminal) != 1 {
		t.Fatalf("bad dead %v, multiple terminal %v", r.BadDead, r.MultipleTerminal)
	}
}

// A task cancelled on purpose while it ran must end CANCELLED: it is not
// lost for not succeeding, and is named when it ends otherwise.
func TestCheckCancelled(t *testing.T) {
	t.Parallel()
	r := Check(Input{
		Ledger:  []Submit{ok("c", "q-1"), ok("ran", "q-2")},
		Effects: []Effect{effect("q-2", "ran")},
		State: &State{Tasks: []*dtq.Task{task("q-1", "c", dtq.StatusCancelled, dtq.OutcomeLost),
			task("q-2", "ran", dtq.StatusSucceeded, dtq.OutcomeSucceeded)}},
		Cancelled: map[string]bool{"q-1": true, "q-2": true},
	})
	if len(r.Lost) != 0 || len(r.MultipleTerminal) != 0 {
		t.Fatalf("lost %v, multiple terminal %v", r.Lost, r.MultipleTerminal)
	}
	if want := []string{"q-2: cancelled while it ran, but SUCCEEDED"}; !reflect.DeepEqual(r.Uncancelled, want) {
		t.Fatalf("uncancelled %v, want %v", r.Uncancelled, want)
	}
}

func TestRecovery(t *testing.T) {
	t.Parallel()
	t0 := time.Unix(1000, 0)
	ledger := []Submit{
		{Answer: OK, Sent: t0.Add(-time.Second), Done: t0.Add(time.Second)}, // sent before the end: ignored
		{Answer: Unknown, Sent: t0.Add(100 * time.Millisecond), Done: t0.Add(200 * time.Millisecond)},
		{Answer: OK, Sent: t0.Add(300 * time.Millisecond), Done: t0.Add(400 * time.Millisecond)},
	}
	trace := []TraceEvent{{Kind: 'S', At: t0.Add(-time.Millisecond)}, {Kind: 'S', At: t0.Add(700 * time.Millisecond)}}
	if got := Recovery(t0, ledger, trace); got != 700*time.Millisecond {
		t.Fatalf("recovery %v, want 700ms", got)
	}
	if got := Recovery(t0, ledger, nil); got != -1 {
		t.Fatalf("recovery without a start %v, want -1", got)
	}
}

func TestInFlight(t *testing.T) {
	t.Parallel()
	tr := []TraceEvent{{Kind: 'S', TaskID: "a"}, {Kind: 'S', TaskID: "b"}, {Kind: 'R', TaskID: "a"}, {Kind: 'S', TaskID: "c"}, {Kind: 'X', TaskID: "c"}, {Kind: 'S', TaskID: "d"}}
	if got := InFlight(tr); !reflect.DeepEqual(got, []string{"b", "d"}) {
		t.Fatalf("in flight %v, want [b d]", got)
	}
	// a returned, its outcome recorded; c returned (X), not recorded yet:
	// a kill now runs b, c and d again
	tr = append(tr, TraceEvent{Kind: 'D', TaskID: "a"})
	if got := InFlight(tr); !reflect.DeepEqual(got, []string{"b", "d"}) {
		t.Fatalf("in flight with a D event %v, want [b d]", got)
	}
	if got := Unrecorded(tr); !reflect.DeepEqual(got, []string{"b", "c", "d"}) {
		t.Fatalf("unrecorded %v, want [b c d]", got)
	}
}
