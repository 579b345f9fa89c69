//go:build faults

package faults

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/dtq-dev/dtq"
	"github.com/dtq-dev/dtq/internal/redistest"
)

// 13. A worker SIGSTOPped while its handlers run; their tasks are
// cancelled (accepted while RUNNING) and taken over by the other worker
// once the visibility timeout passes: they end CANCELLED there, and no
// execution of them starts after its cancel was accepted.
func TestCancelOnFrozenWorker(t *testing.T) {
	_, url := standalone(t, &redistest.Options{AppendFsync: "everysec"})
	const vt = 2 * time.Second
	r := newRig(t, url, rigOpts{workers: 2, visibility: vt})
	stop := r.startLoad(loadOpts{rate: 20, payload: func(n int) Payload { return Payload{SleepMS: 300 + n*37%500} }})
	began := time.Now()
	warmUp()
	victim := r.worker("w1")
	var frozen []string
	for try := 0; len(frozen) == 0; try++ {
		if try == 5 {
			t.Fatal("SIGSTOP never caught a handler running")
		}
		r.waitInFlight("w1")
		victim.signal(syscall.SIGSTOP)
		waitFor(t, 5*time.Second, "w1 stopped", func() bool { return procState(victim.cmd.Process.Pid) == "T" })
		if frozen = InFlight(r.trace("w1")); len(frozen) == 0 {
			victim.signal(syscall.SIGCONT)
		}
	}
	ctx := context.Background()
	accepted := map[string]time.Time{} // task -> when its cancel was answered
	r.cancelled = map[string]bool{}
	for _, id := range frozen {
		task, err := r.client.Cancel(ctx, id)
		if errors.Is(err, dtq.ErrNotCancellable) {
			continue // its outcome was recorded just before the freeze
		}
		if err != nil {
			t.Fatal(err)
		}
		if task.Status != dtq.StatusRunning || !task.CancelRequested {
			t.Fatalf("cancel of %s answered %s (cancel requested %v), want RUNNING with the cancel requested", id, task.Status, task.CancelRequested)
		}
		accepted[id] = time.Now()
		r.cancelled[id] = true
	}
	if len(accepted) == 0 {
		t.Fatal("no frozen task was still running to be cancelled")
	}
	cancelAt := time.Now()
	waitFor(t, 30*time.Second, "the frozen worker's cancelled tasks CANCELLED", func() bool {
		for id := range accepted {
			if task, err := r.client.Get(ctx, id); err != nil || task.Status != dtq.StatusCancelled {
				if time.Since(cancelAt) > 25*time.Second {
					t.Logf("task %s: %v %+v", id, err, task)
				}
				return false
			}
		}
		return true
	})
	settled := time.Since(cancelAt)
	victim.signal(syscall.SIGCONT)
	restOfLoad(began)
	stop()
	rep := r.finish(nil)
	var startedAfter []string
	for _, e := range r.traces() {
		if at, ok := accepted[e.TaskID]; ok && e.Kind == 'S' && e.At.After(at) {
			startedAfter = append(startedAfter, fmt.Sprintf("%s by %s at %s", e.TaskID, e.Worker, e.At.Format("15:04:05.000")))
		}
	}
	if len(startedAfter) > 0 {
		t.Errorf("executions started after their task's cancel was accepted:\n%s", strings.Join(startedAfter, "\n"))
	}
	for id := range accepted {
		task, err := r.client.Get(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if len(task.History) != 1 || task.History[0].Outcome != dtq.OutcomeLost || task.History[0].Worker != "w1" || task.LastError != "cancelled" {
			t.Errorf("task %s: %s, error %q, history %+v; want CANCELLED with only w1's run, recorded as lost", id, task.Status, task.LastError, task.History)
		}
	}
	record(t, Row{Scenario: "13 cancel of tasks on a SIGSTOPped worker", Rep: rep, Injected: len(frozen), Recovery: settled,
		Notes: fmt.Sprintf("%d handlers frozen, %d cancelled while frozen; all CANCELLED %v after the cancels, when taken over (visibility timeout %v); %d executions started after a cancel",
			len(frozen), len(accepted), fmtDur(settled), vt, len(startedAfter))})
	assertInvariants(t, rep, len(frozen), true)
}

// 14. SIGTERM of a worker while redis-server is down for 1.2 s (less than
// the visibility timeout), restarted on its AOF: the handlers that finish
// during the outage have their outcomes recorded when Redis is back,
// within the grace period; nothing runs twice.
func TestStopDuringOutage(t *testing.T) {
	srv, url := standalone(t, &redistest.Options{AppendFsync: "always"})
	const vt, outage = 3 * time.Second, 1200 * time.Millisecond
	r := newRig(t, url, rigOpts{workers: 2, visibility: vt, shutdown: 10 * time.Second})
	stop := r.startLoad(loadOpts{payload: func(n int) Payload { return Payload{SleepMS: 300 + n*37%400} }})
	began := time.Now()
	warmUp()
	victim := r.worker("w1")
	r.waitInFlight("w1")
	downAt := time.Now()
	if err := srv.Kill(); err != nil {
		t.Fatal(err)
	}
	victim.signal(syscall.SIGTERM)
	time.Sleep(outage) // the outage's length, not a wait for work
	if err := srv.Restart(); err != nil {
		t.Fatal(err)
	}
	upAt := time.Now()
	if !victim.wait(20 * time.Second) {
		t.Fatal("w1 still runs 20s after SIGTERM")
	}
	if code := victim.cmd.ProcessState.ExitCode(); code != 0 {
		t.Fatalf("w1 exited with %d after SIGTERM:\n%s", code, victim.stderr())
	}
	exited := time.Since(upAt)
	if strings.Contains(victim.stderr(), "grace period ended before") {
		t.Errorf("w1 gave up recording outcomes:\n%s", victim.stderr())
	}
	// The handlers w1 finished while Redis was down.
	var during []string
	for _, e := range r.trace("w1") {
		if e.Kind == 'R' && e.At.After(downAt) && e.At.Before(upAt) {
			during = append(during, e.TaskID)
		}
	}
	if len(during) == 0 {
		t.Fatal("no handler of w1 finished during the outage: the run proves nothing")
	}
	restOfLoad(began)
	stop()
	rep := r.finish(nil)
	for _, id := range during {
		task, err := r.client.Get(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		if task.Status != dtq.StatusSucceeded || len(task.History) != 1 || task.History[0].Worker != "w1" {
			t.Errorf("task %s (finished by w1 during the outage): %s, history %+v; want SUCCEEDED by w1 alone", id, task.Status, task.History)
		}
	}
	record(t, Row{Scenario: "14 worker SIGTERM during a 1.2s Redis outage", Rep: rep, Recovery: Recovery(upAt, r.ledger.Entries(), r.traces()),
		Notes: fmt.Sprintf("visibility timeout %v, grace 10s; %d handlers finished while Redis was down, their outcomes recorded after it came back; w1 exited 0 %v after Redis was back",
			vt, len(during), fmtDur(exited))})
	assertInvariants(t, rep, 0, true)
}
