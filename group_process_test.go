package dtq_test

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/dtq-dev/dtq"
)

// Fair scheduling across groups, with separate worker processes: group a
// holds 10,000 queued tasks when b submits 10 and c 50; all of b's and c's
// start before a's 200th (read from the workers' effect log, in start
// order). Without groups they would start after a's 10,000.
func TestGroupsServedFairlyAcrossProcesses(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		ctx := t.Context()
		submit := func(group string, n int) []string {
			reqs := make([]dtq.EnqueueRequest, n)
			for i := range reqs {
				reqs[i] = dtq.EnqueueRequest{Type: "nap", Payload: 1, Opts: &dtq.EnqueueOpts{Group: group}}
			}
			var ids []string
			for len(reqs) > 0 {
				batch := reqs[:min(len(reqs), 500)]
				reqs = reqs[len(batch):]
				res, err := e.c.EnqueueMany(ctx, batch)
				if err != nil {
					t.Fatal(err)
				}
				for _, r := range res {
					if r.Err != nil {
						t.Fatal(r.Err)
					}
					ids = append(ids, r.Task.ID)
				}
			}
			return ids
		}
		submit("a", 10_000)
		small := append(submit("b", 10), submit("c", 50)...)
		st, err := dtq.NewAdmin(e.c).Stats(ctx, dtq.DefaultQueue)
		if err != nil {
			t.Fatal(err)
		}
		if st.Queued != 10_060 || st.GroupWaiting != 10_060-30 {
			t.Fatalf("stats %+v: want 10,060 queued, 10,030 of them waiting for their group's turn", st)
		}
		log := filepath.Join(t.TempDir(), "effects")
		for _, id := range []string{"w1", "w2"} {
			startChildWorker(t, e, id, 5*time.Second, childEffectsEnv+"="+log, childConcurrencyEnv+"=4")
		}
		for _, id := range small {
			e.waitStatus(id, dtq.StatusSucceeded, 60*time.Second)
		}
		aStarts, seen := 0, map[string]int{}
		for _, ef := range readEffects(t, log) {
			if !ef.start {
				continue
			}
			if ef.group == "a" {
				aStarts++
				continue
			}
			seen[ef.group]++
			if aStarts >= 200 {
				t.Fatalf("a %s task started after a's 200th (%d of b, %d of c before it)", ef.group, seen["b"], seen["c"])
			}
		}
		if seen["b"] != 10 || seen["c"] != 50 {
			t.Fatalf("the log shows %d starts of b and %d of c, want 10 and 50", seen["b"], seen["c"])
		}
		t.Logf("b's and c's 60 tasks started among a's first %d", aStarts)
	})
}
