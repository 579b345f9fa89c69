package metrics_test

import (
	"context"
	"testing"
	"time"

	"github.com/dtq-dev/dtq"
)

// A limited queue's limits show at each scrape: its concurrency limit, the
// leases held, its rate in starts per second, its queued tasks; claims the
// limits held back count in dtq_throttled_total.
func TestLimitMetrics(t *testing.T) {
	forEachBackend(t, nil, func(t *testing.T, e *env) {
		ctx := t.Context()
		if err := dtq.NewAdmin(e.c).SetLimits(ctx, "capped", dtq.LimitSpec{MaxRunning: 1, Rate: 50, Per: 2 * time.Second, Burst: 1}); err != nil {
			t.Fatal(err)
		}
		defer blockThree(e, "capped")()
		got := e.waitFor(map[string]float64{
			`dtq_limit_max_running{queue="capped",scope="queue"}`: 1, `dtq_limit_in_use{queue="capped",scope="queue"}`: 1,
			`dtq_limit_rate{queue="capped",scope="queue"}`: 25, `dtq_limit_waiting{queue="capped",scope="queue"}`: 2,
		})
		// The limit holds the worker's next claims back once its one task
		// runs (the values above can hold a moment before, while the idle
		// reader holds the lease): they count.
		deadline := time.Now().Add(10 * time.Second)
		for got[`dtq_throttled_total{queue="capped"}`] < 1 {
			if time.Now().After(deadline) {
				t.Fatalf("no throttled claims counted: %v", got)
			}
			time.Sleep(10 * time.Millisecond)
			got = scrape(t, e.srv.URL)
		}
	})
}

// A task type's limit shows under its scope: the leases held, its rate,
// the tasks its full limit holds back.
func TestScopeLimitMetrics(t *testing.T) {
	forEachBackend(t, nil, func(t *testing.T, e *env) {
		ctx := t.Context()
		if err := dtq.NewAdmin(e.c).SetTypeLimits(ctx, "typed", "block", dtq.LimitSpec{MaxRunning: 1, Rate: 10, Per: time.Second, Burst: 5}); err != nil {
			t.Fatal(err)
		}
		if err := dtq.NewAdmin(e.c).SetKeyLimits(ctx, "typed", dtq.EachKey, dtq.LimitSpec{MaxRunning: 3}); err != nil {
			t.Fatal(err)
		}
		defer blockThree(e, "typed")()
		e.waitFor(map[string]float64{
			`dtq_limit_max_running{queue="typed",scope="task_type:block"}`: 1, `dtq_limit_in_use{queue="typed",scope="task_type:block"}`: 1,
			`dtq_limit_rate{queue="typed",scope="task_type:block"}`: 10, `dtq_limit_waiting{queue="typed",scope="task_type:block"}`: 2,
			`dtq_limit_max_running{queue="typed",scope="limit_key:*"}`: 3,
			`dtq_throttled_total{queue="typed"}`:                       2, // the two starts held back
		})
	})
}

// blockThree runs a worker of 4 slots on queue whose "block" tasks hold
// until the returned func is called, and submits three of them.
func blockThree(e *env, queue string) (release func()) {
	done := make(chan struct{})
	block := func(ctx context.Context, _ *dtq.Task) (any, error) {
		select {
		case <-done:
		case <-ctx.Done():
		}
		return nil, nil
	}
	e.worker(&dtq.WorkerConfig{Queues: []string{queue}, Concurrency: 4}, map[string]dtq.HandlerFunc{"block": block})
	for range 3 {
		e.enqueue("block", &dtq.EnqueueOpts{Queue: queue})
	}
	return func() { close(done) }
}
