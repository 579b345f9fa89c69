package dtq_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dtq-dev/dtq"
	"github.com/dtq-dev/dtq/internal/redistest"
)

// durableJob is the payload of the child worker's "durable" tasks.
type durableJob struct {
	SleepMs   int  `json:"sleep_ms,omitempty"`   // a durable sleep first
	Wait      bool `json:"wait,omitempty"`       // then a wait for signal "go"
	TimeoutMs int  `json:"timeout_ms,omitempty"` // the wait's timeout (default 60s)
	Stall     bool `json:"stall,omitempty"`      // stall after step "before" while <effects>.stall-<task> exists
}

// handleSuspending adds the child worker's handlers of suspended tasks:
// "durable" (each run logs "run <task> <worker>"; step "before" logs "fn
// <task> before <worker>"; then its durableJob) and "parentp", which
// awaits a "kidp" child sleeping its payload's ms (logging "kid <task>
// <worker>" per run) and returns the child's result.
func handleSuspending(w *dtq.Worker, id string) {
	effects := os.Getenv(childEffectsEnv)
	logLine := func(format string, a ...any) error {
		f, err := os.OpenFile(effects, os.O_APPEND|os.O_WRONLY|os.O_CREATE, 0o644)
		if err != nil {
			return err
		}
		defer f.Close()
		_, err = fmt.Fprintf(f, format+"\n", a...)
		return err
	}
	w.Handle("durable", func(ctx context.Context, t *dtq.Task) (any, error) {
		var job durableJob
		if err := json.Unmarshal(t.Payload, &job); err != nil {
			return nil, dtq.Permanent(err)
		}
		if err := logLine("run %s %s", t.ID, id); err != nil {
			return nil, err
		}
		if _, err := dtq.Step(ctx, "before", func(context.Context) (int, error) {
			return 1, logLine("fn %s before %s", t.ID, id)
		}); err != nil {
			return nil, err
		}
		if _, err := os.Stat(effects + ".stall-" + t.ID); job.Stall && err == nil {
			<-ctx.Done()
			return nil, ctx.Err()
		}
		if err := dtq.Sleep(ctx, "nap", time.Duration(job.SleepMs)*time.Millisecond); err != nil {
			return nil, err
		}
		if !job.Wait {
			return "slept", nil
		}
		timeout := time.Minute
		if job.TimeoutMs > 0 {
			timeout = time.Duration(job.TimeoutMs) * time.Millisecond
		}
		got, err := dtq.WaitFor(ctx, "go", timeout)
		if err != nil {
			if errors.Is(err, dtq.ErrWaitTimedOut) {
				return "timed out", nil
			}
			return nil, err
		}
		return got, nil
	})
	w.Handle("parentp", func(ctx context.Context, t *dtq.Task) (any, error) {
		return dtq.Child(ctx, "kid", "kidp", t.Payload, nil)
	})
	w.Handle("kidp", func(ctx context.Context, t *dtq.Task) (any, error) {
		var ms int
		if err := json.Unmarshal(t.Payload, &ms); err != nil {
			return nil, dtq.Permanent(err)
		}
		if err := logLine("kid %s %s", t.ID, id); err != nil {
			return nil, err
		}
		select {
		case <-time.After(time.Duration(ms) * time.Millisecond):
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		return ms * 2, nil
	})
}

// countLines counts the lines of file that start with prefix.
func countLines(file, prefix string) int {
	data, _ := os.ReadFile(file)
	n := 0
	for _, line := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(line, prefix) {
			n++
		}
	}
	return n
}

// Suspended tasks across worker processes: while tasks sleep and wait,
// their worker's slots are free (another task runs); the worker is
// SIGKILLed; a signal sent to a running task before the kill, one sent
// while no worker lives, and one sent after a new worker started each
// reach their wait; a wait times out; a sleep resumes on the new worker;
// a suspended task cancelled meanwhile never runs again; every step
// recorded ran once.
func TestSuspendedTasksAcrossWorkerProcesses(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		ctx := t.Context()
		effects := filepath.Join(t.TempDir(), "effects")
		env := []string{childEffectsEnv + "=" + effects, childConcurrencyEnv + "=3"}
		const vt = time.Second
		enq := func(job durableJob) string {
			return e.enqueue("durable", job, nil).ID
		}
		a := startChildWorker(t, e, "wa", vt, env...)
		sleeper := enq(durableJob{SleepMs: 2000})
		stalled := enq(durableJob{Wait: true, Stall: true})
		if err := os.WriteFile(effects+".stall-"+stalled, nil, 0o644); err != nil {
			t.Fatal(err)
		}
		during := enq(durableJob{Wait: true})
		after := enq(durableJob{Wait: true})
		timing := enq(durableJob{Wait: true, TimeoutMs: 1500})
		cancelled := enq(durableJob{Wait: true})
		for _, id := range []string{sleeper, during, after, timing, cancelled} {
			if got := e.waitStatus(id, dtq.StatusScheduled, 15*time.Second); got.Suspended == nil {
				t.Fatalf("task %s: %+v, want suspended", id, got)
			}
		}
		eventually(t, 15*time.Second, "the stalled task ran its step", func() bool { return countLines(effects, "fn "+stalled+" ") == 1 })
		// Slots: 3, one held by the stalled task; five others wait, and a
		// nap task still runs.
		nap := e.enqueue("nap", 1, nil)
		e.waitStatus(nap.ID, dtq.StatusSucceeded, 15*time.Second)

		if err := e.c.Signal(ctx, stalled, "go", "before"); err != nil { // while it runs
			t.Fatal(err)
		}
		a.Process.Kill()
		a.Wait()
		if err := os.Remove(effects + ".stall-" + stalled); err != nil {
			t.Fatal(err)
		}
		if err := e.c.Signal(ctx, during, "go", "during"); err != nil { // no worker lives
			t.Fatal(err)
		}
		if _, err := e.c.Cancel(ctx, cancelled); err != nil {
			t.Fatal(err)
		}
		startChildWorker(t, e, "wb", vt, env...)
		if err := e.c.Signal(ctx, after, "go", "after"); err != nil {
			t.Fatal(err)
		}
		want := map[string]string{sleeper: `"slept"`, stalled: `"before"`, during: `"during"`, after: `"after"`, timing: `"timed out"`}
		for id, result := range want {
			got := e.waitStatus(id, dtq.StatusSucceeded, 30*time.Second)
			if string(got.Result) != result || got.Attempt != 1 {
				t.Errorf("task %s: result %s, attempt %d; want %s in attempt 1", id, got.Result, got.Attempt, result)
			}
			if n := countLines(effects, "fn "+id+" before "); n != 1 {
				t.Errorf("task %s: step before ran %d times, want once", id, n)
			}
			if last := got.History[len(got.History)-1]; last.Worker != "wb" {
				t.Errorf("task %s: last run on %s, want wb", id, last.Worker)
			}
		}
		time.Sleep(200 * time.Millisecond)
		if got, _ := e.c.Get(ctx, cancelled); got.Status != dtq.StatusCancelled || countLines(effects, "run "+cancelled+" wb") != 0 {
			t.Errorf("the cancelled task: %s, or ran on wb", got.Status)
		}
	})
}

// A parent awaits a child while Redis is SIGKILLed and restarted on its
// append-only file: the child runs once and the parent ends with its
// result.
func TestChildAwaitedAcrossRedisRestart(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t, &redistest.Options{AppendFsync: "always"})
	rc := redistest.Client(t, srv)
	e := newEnv(t, &redistest.Backend{Name: "redis", Client: rc, Namespace: "childrestart", Server: srv}, nil)
	effects := filepath.Join(t.TempDir(), "effects")
	startChildWorker(t, e, "wr", 2*time.Second, childEffectsEnv+"="+effects)
	parent := e.enqueue("parentp", 2500, nil)
	eventually(t, 15*time.Second, "the child runs", func() bool { return countLines(effects, "kid ") == 1 })
	if got := e.waitStatus(parent.ID, dtq.StatusScheduled, 10*time.Second); got.Suspended == nil || got.Suspended.For != "child" {
		t.Fatalf("parent %+v, want suspended for its child", got.Suspended)
	}
	if err := srv.Kill(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond)
	if err := srv.Restart(); err != nil {
		t.Fatal(err)
	}
	done := e.waitStatus(parent.ID, dtq.StatusSucceeded, 60*time.Second)
	if string(done.Result) != "5000" || countLines(effects, "kid ") != 1 {
		t.Fatalf("parent result %s after %d child runs; want 5000 after 1", done.Result, countLines(effects, "kid "))
	}
}
