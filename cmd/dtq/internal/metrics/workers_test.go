package metrics_test

import (
	"context"
	"testing"
	"time"

	"github.com/dtq-dev/dtq"
	"github.com/dtq-dev/dtq/cmd/dtq/internal/metrics"
)

// The worker registry shows at each scrape: the live workers, their slots
// (busy as of their last heartbeat), and per queue the workers serving it;
// a stopped worker leaves at once.
func TestWorkerMetrics(t *testing.T) {
	forEachBackend(t, nil, func(t *testing.T, e *env) {
		check(t, scrape(t, e.srv.URL), map[string]float64{
			"dtq_workers{}": 0, "dtq_workers_busy{}": 0, "dtq_workers_concurrency{}": 0,
		})
		release := make(chan struct{})
		block := func(ctx context.Context, _ *dtq.Task) (any, error) {
			select {
			case <-release:
			case <-ctx.Done():
			}
			return nil, nil
		}
		e.worker(&dtq.WorkerConfig{Queues: []string{"wa", "wb"}, Concurrency: 3}, map[string]dtq.HandlerFunc{"block": block})
		second, err := dtq.NewWorker(e.c, &dtq.WorkerConfig{Queues: []string{"wb"}, Concurrency: 2})
		if err != nil {
			t.Fatal(err)
		}
		if err := second.Start(t.Context()); err != nil {
			t.Fatal(err)
		}
		e.waitFor(map[string]float64{
			"dtq_workers{}": 2, "dtq_workers_concurrency{}": 5,
			`dtq_queue_workers{queue="wa"}`: 1, `dtq_queue_workers{queue="wb"}`: 2,
		})
		e.enqueue("block", &dtq.EnqueueOpts{Queue: "wa"})
		e.waitFor(map[string]float64{"dtq_workers_busy{}": 1}) // from the next heartbeat, within 5s
		close(release)

		ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
		defer cancel()
		if err := second.Stop(ctx); err != nil {
			t.Fatal(err)
		}
		got := e.waitFor(map[string]float64{"dtq_workers{}": 1, "dtq_workers_concurrency{}": 3, `dtq_queue_workers{queue="wb"}`: 1})
		check(t, got, map[string]float64{`dtq_queue_workers{queue="wa"}`: 1})
	})
}

// An HTTP worker — a lease holder — counts in the worker gauges from its
// lease call, with the concurrency and busy it sent.
func TestHTTPWorkersCount(t *testing.T) {
	forEachBackend(t, nil, func(t *testing.T, e *env) {
		ls, err := dtq.NewLeaseServer(e.c, nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := ls.Start(t.Context()); err != nil {
			t.Fatal(err)
		}
		defer ls.Stop(context.Background())
		if _, err := ls.Lease(t.Context(), dtq.LeaseRequest{Worker: "py-1", Queues: []string{"hq"}, Concurrency: 6, Busy: 2}); err != nil {
			t.Fatal(err)
		}
		e.waitFor(map[string]float64{
			"dtq_workers{}": 1, "dtq_workers_busy{}": 2, "dtq_workers_concurrency{}": 6, `dtq_queue_workers{queue="hq"}`: 1,
		})
	})
}

// A run that suspends (a durable sleep) counts as suspended — not as a
// success or a failure — and leaves dtq_tasks_running.
func TestSuspendedRunsCount(t *testing.T) {
	forEachBackend(t, &metrics.Config{TaskTypes: []string{"nap"}}, func(t *testing.T, e *env) {
		e.worker(&dtq.WorkerConfig{Queues: []string{"sq"}}, map[string]dtq.HandlerFunc{
			"nap": func(ctx context.Context, _ *dtq.Task) (any, error) { return nil, dtq.Sleep(ctx, "nap", time.Hour) },
		})
		e.enqueue("nap", &dtq.EnqueueOpts{Queue: "sq"})
		e.waitFor(map[string]float64{
			series("dtq_tasks_suspended_total", "sq", "nap"): 1, series("dtq_tasks_succeeded_total", "sq", "nap"): 0,
			series("dtq_tasks_failed_total", "sq", "nap"): 0, `dtq_tasks_running{queue="sq"}`: 0,
		})
	})
}
