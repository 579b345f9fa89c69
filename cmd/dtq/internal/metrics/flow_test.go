package metrics_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/dtq-dev/dtq"
)

// Debounced submissions that join the pending task of their key count in
// dtq_debounce_joined_total; the one that created it is a submission.
func TestDebounceMetrics(t *testing.T) {
	forEachBackend(t, nil, func(t *testing.T, e *env) {
		opts := &dtq.EnqueueOpts{Queue: "deb", Debounce: &dtq.DebounceOpts{Key: "doc-7", Period: time.Hour}}
		first := e.enqueue("job", opts)
		for range 3 {
			res, err := e.c.Enqueue(t.Context(), "job", nil, opts)
			if err != nil || !res.Debounced || res.Task.ID != first.ID {
				t.Fatalf("a submission of the key: %+v, %v; want it joined to %s", res, err, first.ID)
			}
		}
		e.enqueue("job", &dtq.EnqueueOpts{Queue: "deb", Debounce: &dtq.DebounceOpts{Key: "doc-8", Period: time.Hour}})
		check(t, scrape(t, e.srv.URL), map[string]float64{
			`dtq_debounce_joined_total{queue="deb"}`:          3,
			series("dtq_tasks_submitted_total", "deb", "job"): 2,
		})
	})
}

// Each rule of a full limit counts what it did in
// dtq_limit_on_full_total, once: the newest cancelled at its start, the
// running one whose cancellation was requested, the waiting one replaced;
// the tasks they cancelled count in dtq_tasks_cancelled_total.
func TestLimitOnFullMetrics(t *testing.T) {
	forEachBackend(t, nil, func(t *testing.T, e *env) {
		ctx := t.Context()
		rules := map[string]dtq.OnFull{"cn": dtq.CancelNewest, "cr": dtq.CancelRunning, "rw": dtq.ReplaceWaiting}
		for q, rule := range rules {
			if err := dtq.NewAdmin(e.c).SetKeyLimits(ctx, q, "acct", dtq.LimitSpec{MaxRunning: 1, OnFull: rule}); err != nil {
				t.Fatal(err)
			}
		}
		release := holdWorker(e, "cn", "cr", "rw")
		submit := func(q string) string { return e.enqueue("hold", &dtq.EnqueueOpts{Queue: q, LimitKey: "acct"}).ID }

		// cancel_newest: b is cancelled at its start, a runs on.
		a := submit("cn")
		e.waitStatus(a, dtq.StatusRunning)
		b := submit("cn")
		e.waitStatus(b, dtq.StatusCancelled)
		release(a)
		e.waitStatus(a, dtq.StatusSucceeded)

		// cancel_running: b's start cancels a, then b runs.
		a = submit("cr")
		e.waitStatus(a, dtq.StatusRunning)
		b = submit("cr")
		e.waitStatus(a, dtq.StatusCancelled)
		e.waitStatus(b, dtq.StatusRunning)
		release(b)
		e.waitStatus(b, dtq.StatusSucceeded)

		// replace_waiting: c's start replaces b, waiting behind a.
		a = submit("rw")
		e.waitStatus(a, dtq.StatusRunning)
		b = submit("rw")
		e.waitHeld(b)
		c := submit("rw")
		e.waitStatus(b, dtq.StatusCancelled)
		e.waitHeld(c)
		release(a)
		e.waitStatus(c, dtq.StatusRunning)
		release(c)
		e.waitStatus(c, dtq.StatusSucceeded)

		// (A finished execution counts when its worker goroutine reports
		// it, which may lag its outcome in Redis: wait, then check again.)
		want := map[string]float64{
			`dtq_limit_on_full_total{queue="cn",rule="cancel_newest"}`:   1,
			`dtq_limit_on_full_total{queue="cr",rule="cancel_running"}`:  1,
			`dtq_limit_on_full_total{queue="rw",rule="replace_waiting"}`: 1,
			series("dtq_tasks_cancelled_total", "cn", "hold"):            1,
			series("dtq_tasks_cancelled_total", "cr", "hold"):            1,
			series("dtq_tasks_cancelled_total", "rw", "hold"):            1,
			series("dtq_tasks_succeeded_total", "cn", "hold"):            1,
			series("dtq_tasks_succeeded_total", "cr", "hold"):            1,
			series("dtq_tasks_succeeded_total", "rw", "hold"):            2,
		}
		e.waitFor(want)
		got := scrape(t, e.srv.URL)
		check(t, got, want)
		for series := range got {
			for _, other := range []string{`queue="cn",rule="cancel_running"`, `queue="cn",rule="replace_waiting"`,
				`queue="cr",rule="cancel_newest"`, `queue="rw",rule="cancel_newest"`} {
				if series == `dtq_limit_on_full_total{`+other+`}` {
					t.Errorf("%s: a rule counted on a queue whose limit has another", series)
				}
			}
		}
	})
}

// holdWorker runs a worker of 4 slots on each of queues (a worker's slots
// are shared among its queues), whose "hold" tasks run until released
// (release(id)) or cancelled.
func holdWorker(e *env, queues ...string) (release func(id string)) {
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
	hold := func(ctx context.Context, t *dtq.Task) (any, error) {
		select {
		case <-gate(t.ID):
			return nil, nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	for _, q := range queues {
		e.worker(&dtq.WorkerConfig{Queues: []string{q}, Concurrency: 4}, map[string]dtq.HandlerFunc{"hold": hold})
	}
	return func(id string) { close(gate(id)) }
}

// waitStatus waits up to 10s for task id to have status want.
func (e *env) waitStatus(id string, want dtq.Status) {
	e.t.Helper()
	e.waitTask(id, string(want), func(t *dtq.Task) bool { return t.Status == want })
}

// waitHeld waits up to 10s for task id to wait for its limit.
func (e *env) waitHeld(id string) {
	e.t.Helper()
	e.waitTask(id, "held back by its limit", func(t *dtq.Task) bool { return t.Status == dtq.StatusQueued && t.HeldBy != "" })
}

func (e *env) waitTask(id, what string, ok func(*dtq.Task) bool) {
	e.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		task, err := e.c.Get(e.t.Context(), id)
		if err == nil && ok(task) {
			return
		}
		if time.Now().After(deadline) {
			e.t.Fatalf("task %s: %+v, %v; want it %s", id, task, err, what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
