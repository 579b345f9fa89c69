package dtq_test

import (
	"context"
	"encoding/json"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dtq-dev/dtq"
	"github.com/dtq-dev/dtq/faults"
	"github.com/dtq-dev/dtq/internal/redistest"
	"github.com/dtq-dev/dtq/internal/store"
	"github.com/redis/rueidis"
)

// lossyEnv is an env whose client reaches its own redis-server through a
// proxy that can lose an answer (faults.Proxy.LoseAnswerTo).
func lossyEnv(t *testing.T) (*env, *faults.Proxy) {
	t.Helper()
	srv := redistest.Start(t, nil)
	p, err := faults.NewProxy(srv.Addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	rc, err := rueidis.NewClient(rueidis.ClientOption{InitAddress: []string{p.Addr}, DisableCache: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(rc.Close)
	e := newEnv(t, &redistest.Backend{Name: "redis", Server: srv, Client: rc, Namespace: redistest.Namespace(t)}, nil)
	// One task leased and completed on another queue loads the scripts:
	// a lost answer is then a script's, not a NOSCRIPT error's.
	e.enqueue("echo", nil, &dtq.EnqueueOpts{Queue: "warm"})
	l := e.lease(dtq.LeaseRequest{Worker: "warm", Queues: []string{"warm"}}, 1)[0]
	if _, err := e.ls.CompleteLease(t.Context(), l.Token, nil); err != nil {
		t.Fatal(err)
	}
	return e, p
}

// checkOneRun fails unless task id succeeded in one run (runs counts
// them), with no crash.
func (e *env) checkOneRun(id string, runs func() int32) {
	e.t.Helper()
	task := e.waitStatus(id, dtq.StatusSucceeded, 20*time.Second)
	if runs := runs(); runs != 1 || task.Crashes != 0 || len(task.History) != 1 {
		e.t.Fatalf("handler ran %d times; task crashes %d, history %+v: want one run, no crash", runs, task.Crashes, task.History)
	}
}

// A start whose answer is lost (Redis ran start.lua, the worker never got
// its reply) records no crash: the worker asks again, resuming the run it
// started, and the task runs once, without waiting for a takeover. Before,
// the worker forgot the claim: a visibility timeout later the task was
// taken over as "crashed: worker lost" and run in a second run.
func TestLostStartAnswerRecordsNoCrash(t *testing.T) {
	t.Parallel()
	for _, script := range []string{"start", "read"} {
		t.Run(script, func(t *testing.T) {
			t.Parallel()
			e, p := lossyEnv(t)
			task := e.enqueue("echo", nil, nil)
			// The worker's first read is read.lua, then start.lua starts
			// what it claimed: lose one of their answers.
			p.LoseAnswerTo([]byte(store.ScriptSHA(script)))
			var runs atomic.Int32
			e.worker(&dtq.WorkerConfig{VisibilityTimeout: 3 * time.Second}, map[string]dtq.HandlerFunc{
				"echo": func(context.Context, *dtq.Task) (any, error) { runs.Add(1); return nil, nil },
			})
			e.checkOneRun(task.ID, runs.Load)
			if p.Lost() != 1 {
				t.Fatalf("the proxy lost %d answers, want 1", p.Lost())
			}
		})
	}
}

// The same for a lease: a start whose answer is lost is asked again within
// the call; a claim whose answer is lost is leased by the holder's next
// call. No crash is recorded and the task runs once.
func TestLostLeaseAnswerRecordsNoCrash(t *testing.T) {
	t.Parallel()
	for _, script := range []string{"start", "read"} {
		t.Run(script, func(t *testing.T) {
			t.Parallel()
			e, p := lossyEnv(t)
			ctx := t.Context()
			task := e.enqueue("echo", nil, nil)
			p.LoseAnswerTo([]byte(store.ScriptSHA(script)))
			req := dtq.LeaseRequest{Worker: "py-1", Timeout: 3 * time.Second}
			var l *dtq.Lease
			for l == nil {
				ls, err := e.ls.Lease(ctx, req)
				if err != nil {
					t.Logf("lease: %v (its answer lost)", err)
					continue
				}
				if len(ls) != 1 {
					t.Fatalf("leased %d tasks, want the task", len(ls))
				}
				l = ls[0]
			}
			if _, err := e.ls.CompleteLease(ctx, l.Token, json.RawMessage(`1`)); err != nil {
				t.Fatal(err)
			}
			e.checkOneRun(task.ID, func() int32 { return 1 })
			if p.Lost() != 1 {
				t.Fatalf("the proxy lost %d answers, want 1", p.Lost())
			}
		})
	}
}
