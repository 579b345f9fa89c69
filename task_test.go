package dtq

import (
	"testing"

	"github.com/dtq-dev/dtq/internal/store"
)

// Every outcome code the store writes in a task's history reads as one of
// the Outcomes an Observer gets: one vocabulary for users, the stored
// codes kept as they are.
func TestHistoryOutcomeWords(t *testing.T) {
	t.Parallel()
	for code, want := range map[store.Outcome]Outcome{
		store.OutcomeOK:      OutcomeSucceeded,
		store.OutcomeRetry:   OutcomeRetried,
		store.OutcomeDead:    OutcomeDead,
		store.OutcomeCancel:  OutcomeCancelled,
		store.OutcomeCrashed: OutcomeLost,
	} {
		if got := historyOutcome(code); got != want {
			t.Errorf("stored %q reads %q, want %q", code, got, want)
		}
		r := &store.Record{History: []store.Execution{{Run: 1, Outcome: code}}}
		if got := taskOf(r).History[0].Outcome; got != want {
			t.Errorf("taskOf: stored %q reads %q, want %q", code, got, want)
		}
	}
}
