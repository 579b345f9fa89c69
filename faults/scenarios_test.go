//go:build faults

package faults

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/dtq-dev/dtq"
	"github.com/dtq-dev/dtq/internal/redistest"
)

// load runs for the scenario's load time.
const loadTime = 6 * time.Second

// warmUp lets the load run before the fault, so that the fault hits a
// system at work (a length of load, not a wait for a condition).
func warmUp() { time.Sleep(2 * time.Second) }

// restOfLoad lets the load run until loadTime after began.
func restOfLoad(began time.Time) { time.Sleep(time.Until(began.Add(loadTime))) }

// standalone starts a dedicated redis-server for a scenario.
func standalone(t *testing.T, opts *redistest.Options) (*redistest.Server, string) {
	s := redistest.Start(t, opts)
	return s, "redis://" + s.Addr
}

// 1. No fault: the yardstick.
func TestBaseline(t *testing.T) {
	_, url := standalone(t, &redistest.Options{AppendFsync: "everysec"})
	r := newRig(t, url, rigOpts{})
	stop := r.startLoad(loadOpts{})
	time.Sleep(loadTime) // the load's length, not a wait for a condition
	stop()
	rep := r.finish(nil)
	record(t, Row{Scenario: "1 baseline", Rep: rep, Recovery: -1})
	assertInvariants(t, rep, 0, true)
}

// restartedAfter returns, for each task, the first handler start after
// since by a worker other than not; ok is false until all have one.
func (r *rig) restartedAfter(tasks []string, since time.Time, not string) (latest time.Time, ok bool) {
	first := map[string]time.Time{}
	for _, e := range r.traces() {
		if e.Kind == 'S' && e.Worker != not && e.At.After(since) {
			if _, seen := first[e.TaskID]; !seen {
				first[e.TaskID] = e.At
			}
		}
	}
	for _, id := range tasks {
		at, seen := first[id]
		if !seen {
			return time.Time{}, false
		}
		if at.After(latest) {
			latest = at
		}
	}
	return latest, true
}

// 2. Worker processes SIGKILLed while handlers run (some after their side
// effect, before the outcome is recorded); each is restarted. The killed
// executions are taken over after the visibility timeout.
func TestWorkerKill(t *testing.T) {
	_, url := standalone(t, &redistest.Options{AppendFsync: "everysec"})
	const vt = 2 * time.Second
	r := newRig(t, url, rigOpts{workers: 3, visibility: vt})
	stop := r.startLoad(loadOpts{payload: func(n int) Payload { return Payload{SleepMS: 50 + n*37%150, AfterMS: 150} }})
	began := time.Now()
	warmUp()
	injected, kills := 0, 0
	var pickup time.Duration
	for round := 0; kills < 3; round++ {
		if round == 8 {
			t.Fatalf("only %d of 8 kills caught a handler running", kills)
		}
		id := fmt.Sprintf("w%d", round%3+1)
		victim := r.worker(id)
		r.waitInFlight(id)
		victim.signal(syscall.SIGKILL)
		killedAt := time.Now()
		if !victim.wait(10 * time.Second) {
			t.Fatalf("%s still runs 10s after SIGKILL", id)
		}
		if ws := victim.cmd.ProcessState.Sys().(syscall.WaitStatus); !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
			t.Fatalf("%s ended with %v, not by SIGKILL", id, victim.cmd.ProcessState)
		}
		// Its trace is final: the handlers it ran when it died.
		orphans := InFlight(r.trace(id))
		r.startWorker(fmt.Sprintf("%s.%d", id, round))
		r.mu.Lock()
		r.workers[id] = r.workers[fmt.Sprintf("%s.%d", id, round)]
		r.mu.Unlock()
		if len(orphans) == 0 {
			continue // every handler had just returned: not a mid-handler kill
		}
		kills++
		injected += len(orphans)
		var latest time.Time
		waitFor(t, 30*time.Second, "the killed executions restarted elsewhere", func() bool {
			var ok bool
			latest, ok = r.restartedAfter(orphans, killedAt, id)
			return ok
		})
		pickup = max(pickup, latest.Sub(killedAt))
	}
	restOfLoad(began)
	stop()
	rep := r.finish(nil)
	record(t, Row{Scenario: "2 worker SIGKILL mid-handler", Rep: rep, Injected: injected, Recovery: pickup,
		Notes: fmt.Sprintf("3 workers; %d kills caught %d handlers running; recovery: killed executions restarted (visibility timeout %v)", kills, injected, vt)})
	assertInvariants(t, rep, injected, true)
}

// staleReports returns, per task, how worker id's log says its execution's
// outcome was refused: "fenced" (the finish script rejected it: the task
// is run by another execution now) or "dropped" (the worker learned the
// task was taken over and did not send it).
func staleReports(t *testing.T, p *proc) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, l := range strings.Split(p.stderr(), "\n") {
		var rec struct {
			Msg    string `json:"msg"`
			TaskID string `json:"task_id"`
		}
		if json.Unmarshal([]byte(l), &rec) != nil || rec.TaskID == "" {
			continue
		}
		switch {
		case strings.HasPrefix(rec.Msg, "task outcome rejected"):
			out[rec.TaskID] = "fenced"
		case strings.HasPrefix(rec.Msg, "task taken over by another worker"):
			out[rec.TaskID] = "dropped"
		}
	}
	return out
}

// 3. A worker SIGSTOPped past the visibility timeout while its handlers
// run; other workers take its tasks over; SIGCONT: its handlers (which
// ignore their context) finish and do their side effect again, and their
// late completions must be refused.
func TestWorkerStop(t *testing.T) {
	_, url := standalone(t, &redistest.Options{AppendFsync: "everysec"})
	const vt = 2 * time.Second
	r := newRig(t, url, rigOpts{workers: 2, visibility: vt})
	stop := r.startLoad(loadOpts{rate: 8, payload: func(n int) Payload { return Payload{SleepMS: 400 + n*37%400, IgnoreCtx: true} }})
	began := time.Now()
	warmUp()
	victim := r.worker("w1")
	var frozen []string
	var stoppedAt time.Time
	for try := 0; len(frozen) == 0; try++ {
		if try == 5 {
			t.Fatal("SIGSTOP never caught a handler running")
		}
		r.waitInFlight("w1")
		victim.signal(syscall.SIGSTOP)
		stoppedAt = time.Now()
		waitFor(t, 5*time.Second, "w1 stopped", func() bool { return procState(victim.cmd.Process.Pid) == "T" })
		if frozen = InFlight(r.trace("w1")); len(frozen) == 0 {
			victim.signal(syscall.SIGCONT)
		}
	}
	ctx := context.Background()
	waitFor(t, 30*time.Second, "the stopped worker's tasks taken over", func() bool {
		for _, id := range frozen {
			task, err := r.client.Get(ctx, id)
			if err != nil || task.Worker == "w1" {
				if time.Since(stoppedAt) > 20*time.Second {
					j, _ := json.Marshal(task)
					t.Logf("not taken over: %s %v", j, err)
				}
				return false
			}
		}
		return true
	})
	takeover := time.Since(stoppedAt)
	if procState(victim.cmd.Process.Pid) != "T" {
		t.Fatal("w1 is no longer stopped at the takeover")
	}
	victim.signal(syscall.SIGCONT)
	var reports map[string]string
	waitFor(t, 30*time.Second, "w1 reporting its stale executions refused", func() bool {
		reports = staleReports(t, victim)
		for _, id := range frozen {
			if reports[id] == "" {
				return false
			}
		}
		return true
	})
	restOfLoad(began)
	stop()
	rep := r.finish(nil)
	fenced := 0
	for _, id := range frozen {
		if reports[id] == "fenced" {
			fenced++
		}
		task, err := r.client.Get(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		var byW1 []dtq.Outcome
		oks := 0
		for _, x := range task.History {
			if x.Worker == "w1" {
				byW1 = append(byW1, x.Outcome)
			}
			if x.Outcome == dtq.OutcomeSucceeded {
				oks++
			}
		}
		if task.Status != dtq.StatusSucceeded || task.Worker == "w1" || oks != 1 || len(byW1) != 1 || byW1[0] != dtq.OutcomeLost {
			t.Errorf("task %s: %s by %s, w1's executions %v, %d succeeded; want SUCCEEDED by another worker once, w1's run lost", id, task.Status, task.Worker, byW1, oks)
		}
	}
	effects, _ := ReadEffects(r.dir)
	late := 0
	for _, e := range effects {
		for _, id := range frozen {
			if e.TaskID == id && e.Worker == "w1" {
				late++
			}
		}
	}
	record(t, Row{Scenario: "3 worker SIGSTOP past the visibility timeout, SIGCONT", Rep: rep, Injected: len(frozen), Recovery: takeover,
		Notes: fmt.Sprintf("%d handlers frozen; taken over after the visibility timeout (%v); after SIGCONT %d of them did their side effect late; every late completion refused (%d by the fence in Redis, %d dropped by the worker on learning it lost the task)",
			len(frozen), vt, late, fenced, len(frozen)-fenced)})
	assertInvariants(t, rep, len(frozen), true)
}

// 4. SIGTERM while handlers run, with a short grace period: the worker
// hands its unfinished executions back at once (not after the visibility
// timeout) and another worker picks them up.
func TestWorkerTerm(t *testing.T) {
	_, url := standalone(t, &redistest.Options{AppendFsync: "everysec"})
	const vt = 15 * time.Second
	r := newRig(t, url, rigOpts{workers: 2, visibility: vt, shutdown: 200 * time.Millisecond})
	stop := r.startLoad(loadOpts{rate: 8, payload: func(n int) Payload { return Payload{SleepMS: 600 + n*37%900} }})
	began := time.Now()
	warmUp()
	victim := r.worker("w1")
	r.waitInFlight("w1")
	victim.signal(syscall.SIGTERM)
	termAt := time.Now()
	if !victim.wait(10 * time.Second) {
		t.Fatal("w1 still runs 10s after SIGTERM")
	}
	if code := victim.cmd.ProcessState.ExitCode(); code != 0 {
		t.Fatalf("w1 exited with %d after SIGTERM:\n%s", code, victim.stderr())
	}
	r.startWorker("w3")
	var handed []string
	for _, e := range r.trace("w1") {
		if e.Kind == 'X' {
			handed = append(handed, e.TaskID)
		}
	}
	if len(handed) == 0 {
		t.Fatalf("SIGTERM interrupted no handler (all finished within the grace period)")
	}
	var latest time.Time
	waitFor(t, 30*time.Second, "the handed-back tasks restarted", func() bool {
		var ok bool
		latest, ok = r.restartedAfter(handed, termAt, "w1")
		return ok
	})
	pickup := latest.Sub(termAt)
	// Handed back, not reclaimed: reclaiming waits for the visibility
	// timeout. (A boundary between two mechanisms, not a speed target.)
	if pickup >= vt {
		t.Errorf("handed-back tasks restarted %v after SIGTERM: not before the visibility timeout %v", pickup, vt)
	}
	restOfLoad(began)
	stop()
	rep := r.finish(nil)
	for _, id := range handed {
		task, err := r.client.Get(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		if len(task.History) < 2 || task.History[0].Worker != "w1" || task.History[0].Outcome != dtq.OutcomeRetried {
			t.Errorf("handed-back task %s: history %+v; want w1's run recorded as a retry", id, task.History)
		}
	}
	record(t, Row{Scenario: "4 worker SIGTERM under load (grace 200ms)", Rep: rep, Injected: len(handed), Recovery: pickup,
		Notes: fmt.Sprintf("%d running handlers handed back; all restarted elsewhere %v after SIGTERM (visibility timeout %v)", len(handed), fmtDur(pickup), vt)})
	assertInvariants(t, rep, len(handed), true)
}

var _ = os.Getpid
