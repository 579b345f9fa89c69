package dtq_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dtq-dev/dtq"
)

// onFullEnv runs a worker whose "hold" tasks run until released (their id
// closed in release) or cancelled, under a limit key's limit of 1 with
// rule onFull.
func onFullEnv(t *testing.T, e *env, onFull dtq.OnFull) (submit func() string, release func(id string)) {
	t.Helper()
	if err := e.a.SetKeyLimits(t.Context(), dtq.DefaultQueue, "acct", dtq.LimitSpec{MaxRunning: 1, OnFull: onFull}); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	gates := map[string]chan struct{}{}
	gate := func(id string) chan struct{} {
		mu.Lock()
		defer mu.Unlock()
		if gates[id] == nil {
			gates[id] = make(chan struct{})
		}
		return gates[id]
	}
	e.worker(&dtq.WorkerConfig{Concurrency: 4}, map[string]dtq.HandlerFunc{
		"hold": func(ctx context.Context, t *dtq.Task) (any, error) {
			select {
			case <-gate(t.ID):
				return nil, nil
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		},
	})
	submit = func() string { return e.enqueue("hold", nil, &dtq.EnqueueOpts{LimitKey: "acct"}).ID }
	release = func(id string) { close(gate(id)) }
	return submit, release
}

// waitHeld waits until task id waits for its limit.
func (e *env) waitHeld(id string) {
	e.t.Helper()
	eventually(e.t, 10*time.Second, id+" held back by its limit", func() bool {
		task, err := e.c.Get(e.t.Context(), id)
		return err == nil && task.Status == dtq.StatusQueued && task.HeldBy != ""
	})
}

func TestLimitOnFullQueueWaits(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		submit, release := onFullEnv(t, e, dtq.WaitWhenFull)
		a := submit()
		e.waitStatus(a, dtq.StatusRunning, 10*time.Second)
		b := submit()
		e.waitHeld(b)
		release(a)
		e.waitStatus(a, dtq.StatusSucceeded, 10*time.Second)
		e.waitStatus(b, dtq.StatusRunning, 10*time.Second)
		release(b)
		e.waitStatus(b, dtq.StatusSucceeded, 10*time.Second)
	})
}

// cancel_running: a new task of a full limit cancels the one running, and
// starts once it has ended.
func TestLimitOnFullCancelRunning(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		submit, release := onFullEnv(t, e, dtq.CancelRunning)
		a := submit()
		e.waitStatus(a, dtq.StatusRunning, 10*time.Second)
		b := submit()
		e.waitStatus(a, dtq.StatusCancelled, 10*time.Second)
		e.waitStatus(b, dtq.StatusRunning, 10*time.Second)
		release(b)
		e.waitStatus(b, dtq.StatusSucceeded, 10*time.Second)
	})
}

// cancel_newest: a new task of a full limit is cancelled at its start; the
// running one goes on.
func TestLimitOnFullCancelNewest(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		submit, release := onFullEnv(t, e, dtq.CancelNewest)
		a := submit()
		e.waitStatus(a, dtq.StatusRunning, 10*time.Second)
		b := submit()
		got := e.waitStatus(b, dtq.StatusCancelled, 10*time.Second)
		if !strings.Contains(got.LastError, "limit k:acct full") || len(got.History) != 0 {
			t.Errorf("the newest: error %q, %d executions; want cancelled unstarted for its full limit", got.LastError, len(got.History))
		}
		if task, _ := e.c.Get(t.Context(), a); task.Status != dtq.StatusRunning {
			t.Errorf("the running one: %s", task.Status)
		}
		release(a)
		e.waitStatus(a, dtq.StatusSucceeded, 10*time.Second)
	})
}

// replace_waiting: a new task of a full limit takes the place of those
// waiting, which are cancelled; it runs once the running one ends.
func TestLimitOnFullReplaceWaiting(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		submit, release := onFullEnv(t, e, dtq.ReplaceWaiting)
		a := submit()
		e.waitStatus(a, dtq.StatusRunning, 10*time.Second)
		b := submit()
		e.waitHeld(b)
		c := submit()
		e.waitStatus(b, dtq.StatusCancelled, 10*time.Second)
		e.waitHeld(c)
		release(a)
		e.waitStatus(c, dtq.StatusRunning, 10*time.Second)
		release(c)
		e.waitStatus(c, dtq.StatusSucceeded, 10*time.Second)
		if task, _ := e.c.Get(t.Context(), a); task.Status != dtq.StatusSucceeded {
			t.Errorf("the running one: %s, want it left to succeed", task.Status)
		}
	})
}

func TestLimitOnFullValidation(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		ctx := t.Context()
		for name, err := range map[string]error{
			"unknown rule":     e.a.SetKeyLimits(ctx, dtq.DefaultQueue, "k", dtq.LimitSpec{MaxRunning: 1, OnFull: "newest"}),
			"no max_running":   e.a.SetTypeLimits(ctx, dtq.DefaultQueue, "t", dtq.LimitSpec{Rate: 5, Per: time.Second, OnFull: dtq.CancelNewest}),
			"a queue's limits": e.a.SetLimits(ctx, dtq.DefaultQueue, dtq.LimitSpec{MaxRunning: 1, OnFull: dtq.CancelRunning}),
		} {
			var ve *dtq.ValidationError
			if !errors.As(err, &ve) || ve.Field != "on_full" {
				t.Errorf("%s: %v, want a ValidationError of on_full", name, err)
			}
		}
		if err := e.a.SetKeyLimits(ctx, dtq.DefaultQueue, "k", dtq.LimitSpec{MaxRunning: 2, OnFull: dtq.ReplaceWaiting}); err != nil {
			t.Fatal(err)
		}
		l, err := e.a.Limit(ctx, dtq.DefaultQueue)
		if err != nil || len(l.Scopes) != 1 || l.Scopes[0].OnFull != dtq.ReplaceWaiting {
			t.Fatalf("limits read back: %+v, %v", l, err)
		}
	})
}
