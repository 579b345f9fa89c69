package faults

import (
	"fmt"
	"strings"

	"github.com/dtq-dev/dtq"
)

// CheckCounters compares a drained queue's counters (Admin.Stats) with
// what its tasks say (State, read after the run drained; nothing trimmed,
// nothing requeued): every total must equal the transitions the tasks'
// histories and statuses record, and nothing may be left queued, running
// or scheduled. It returns one line per counter that is off, none when
// all are exact.
func CheckCounters(st *State, s *dtq.QueueStats) []string {
	var succeeded, cancelled, retried, dead int64
	for _, t := range st.Tasks {
		for _, x := range t.History {
			switch x.Outcome {
			case dtq.OutcomeRetried:
				retried++
			case dtq.OutcomeDead:
				dead++
			}
		}
		switch t.Status {
		case dtq.StatusSucceeded:
			succeeded++
		case dtq.StatusCancelled:
			cancelled++
		case dtq.StatusDead:
			if n := len(t.History); n == 0 || t.History[n-1].Outcome != dtq.OutcomeDead {
				dead++ // past the crash limit (its last run lost), or malformed
			}
		}
	}
	var off []string
	check := func(name string, got, want int64) {
		if got != want {
			off = append(off, fmt.Sprintf("%s %d, the tasks say %d", name, got, want))
		}
	}
	check("submitted_total", s.Submitted, int64(len(st.Tasks)))
	check("succeeded_total", s.Succeeded, succeeded)
	check("retried_total", s.Retried, retried)
	check("dead_total", s.Failed, dead)
	check("cancelled_total", s.Cancelled, cancelled)
	check("dead (letters)", s.Dead, int64(len(st.Dead)))
	check("queued", s.Queued, 0)
	check("running", s.Running, 0)
	check("scheduled", s.Scheduled, 0)
	return off
}

// PhantomCrashes lists the runs recorded as lost whose worker was alive
// all along (not in killed) and whose handler never started for that
// task (no start in the worker's trace): a crash that did not happen, as
// left by a claim or start whose answer the worker lost (CONTRACT 3.3.1b).
// traces holds each worker's trace, by worker id.
func PhantomCrashes(st *State, traces map[string][]TraceEvent, killed map[string]bool) []string {
	started := map[string]bool{} // worker + " " + task
	for w, tr := range traces {
		for _, e := range tr {
			if e.Kind == 'S' {
				started[w+" "+e.TaskID] = true
			}
		}
	}
	var out []string
	for _, t := range st.Tasks {
		for _, x := range t.History {
			if x.Outcome != dtq.OutcomeLost || killed[x.Worker] || strings.HasPrefix(x.Worker, "http:") {
				continue
			}
			if _, known := traces[x.Worker]; known && !started[x.Worker+" "+t.ID] {
				out = append(out, fmt.Sprintf("%s: run %d by %s recorded lost (%s), its handler never started", t.ID, x.Run, x.Worker, x.Error))
			}
		}
	}
	return out
}
