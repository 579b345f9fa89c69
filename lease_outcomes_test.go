package dtq_test

import (
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/dtq-dev/dtq"
)

// EndLeases records many outcomes in one call, each answered in its
// place: completions, retryable and permanent failures, in two queues; a
// lost lease and a malformed token are answers, not the call's error; a
// retried call answers the statuses, changing nothing.
func TestEndLeasesRecordsEachOutcome(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		ctx := t.Context()
		ok1 := e.enqueue("a", 1, nil)
		ok2 := e.enqueue("a", 2, &dtq.EnqueueOpts{Queue: "other"})
		retry := e.enqueue("a", 3, &dtq.EnqueueOpts{MaxAttempts: 3})
		dead := e.enqueue("a", 4, nil)
		stale := e.enqueue("a", 5, nil)
		ls := e.lease(dtq.LeaseRequest{Worker: "w", Queues: []string{"default", "other"}, Max: 5, Timeout: 200 * time.Millisecond}, 5)
		byID := map[string]string{}
		for _, l := range ls {
			byID[l.Task.ID] = l.Token
		}
		// stale's lease lapses and another holder takes its task over.
		time.Sleep(300 * time.Millisecond)
		if err := extend(e, byID, ok1.ID, ok2.ID, retry.ID, dead.ID); err != nil {
			t.Fatal(err)
		}
		over := e.takeOver("w2", 200*time.Millisecond)
		if over.Task.ID != stale.ID {
			t.Fatalf("took over %s, want %s", over.Task.ID, stale.ID)
		}
		outs := []dtq.LeaseOutcome{
			{Token: byID[ok1.ID], Result: json.RawMessage(`{"n":1}`)},
			{Token: byID[retry.ID], Failure: &dtq.LeaseFailure{Error: "busy", RetryAfter: time.Minute}},
			{Token: "not-a-token"},
			{Token: byID[ok2.ID]},
			{Token: byID[dead.ID], Failure: &dtq.LeaseFailure{Error: "refused", Permanent: true}},
			{Token: byID[stale.ID], Result: json.RawMessage(`"late"`)},
		}
		want := []dtq.Status{dtq.StatusSucceeded, dtq.StatusScheduled, "", dtq.StatusSucceeded, dtq.StatusDead, ""}
		for round := range 2 {
			got, err := e.ls.EndLeases(ctx, outs)
			if err != nil {
				t.Fatal(err)
			}
			for i, g := range got {
				if g.Status != want[i] {
					t.Fatalf("round %d, outcome %d: %+v, want status %q", round, i, g, want[i])
				}
			}
			var ve *dtq.ValidationError
			if !errors.As(got[2].Err, &ve) || ve.Field != "lease" {
				t.Fatalf("round %d: a malformed token answered %v", round, got[2].Err)
			}
			if !errors.Is(got[5].Err, dtq.ErrLeaseLost) {
				t.Fatalf("round %d: a lapsed lease answered %+v, want ErrLeaseLost", round, got[5])
			}
		}
		for id, check := range map[string]func(*dtq.Task) bool{
			ok1.ID: func(t *dtq.Task) bool { return string(t.Result) == `{"n":1}` && len(t.History) == 1 },
			ok2.ID: func(t *dtq.Task) bool { return string(t.Result) == `null` },
			retry.ID: func(t *dtq.Task) bool {
				return t.LastError == "busy" && t.ScheduledAt.After(time.Now().Add(50*time.Second))
			},
			dead.ID: func(t *dtq.Task) bool {
				return t.Status == dtq.StatusDead && t.LastError == "refused" && len(t.History) == 1
			},
			stale.ID: func(t *dtq.Task) bool { return t.Status == dtq.StatusRunning && t.Worker == "http:w2" },
		} {
			got, err := e.c.Get(ctx, id)
			if err != nil || !check(got) {
				t.Fatalf("task %s after the outcomes: %+v %v", id, got, err)
			}
		}
		if _, err := e.ls.EndLeases(ctx, make([]dtq.LeaseOutcome, dtq.MaxLeaseOutcomes+1)); err == nil {
			t.Fatal("more outcomes than MaxLeaseOutcomes were taken")
		}
	})
}

// extend extends the leases of tasks ids (their tokens in byID).
func extend(e *env, byID map[string]string, ids ...string) error {
	for _, id := range ids {
		if _, _, err := e.ls.ExtendLease(e.t.Context(), byID[id]); err != nil {
			return err
		}
	}
	return nil
}
