package metrics_test

import (
	"context"
	"testing"
	"time"

	"github.com/dtq-dev/dtq"
)

// dtq_queue_suspended counts a queue's suspended tasks at scrape time: a
// sleeping task, not one merely delayed (both in the scheduled depth), and
// none once the sleeper is cancelled.
func TestQueueSuspended(t *testing.T) {
	forEachBackend(t, nil, func(t *testing.T, e *env) {
		e.worker(&dtq.WorkerConfig{Queues: []string{"naps"}}, map[string]dtq.HandlerFunc{
			"nap": func(ctx context.Context, _ *dtq.Task) (any, error) { return nil, dtq.Sleep(ctx, "nap", time.Hour) },
		})
		nap := e.enqueue("nap", &dtq.EnqueueOpts{Queue: "naps"})
		e.enqueue("nap", &dtq.EnqueueOpts{Queue: "naps", Delay: time.Hour})
		e.enqueue("job", nil) // another queue, none suspended
		e.waitFor(map[string]float64{
			`dtq_queue_suspended{queue="naps"}`:                           1,
			`dtq_queue_depth{priority="",queue="naps",state="scheduled"}`: 2,
			`dtq_queue_suspended{queue="default"}`:                        0,
		})
		if _, err := e.c.Cancel(t.Context(), nap.ID); err != nil {
			t.Fatal(err)
		}
		check(t, scrape(t, e.srv.URL), map[string]float64{
			`dtq_queue_suspended{queue="naps"}`:                           0,
			`dtq_queue_depth{priority="",queue="naps",state="scheduled"}`: 1,
		})
	})
}

// dtq_queue_waiting counts the QUEUED tasks held back, by what holds them:
// the second and third tasks of an order key wait for the first (no worker
// serves the queue).
func TestQueueWaiting(t *testing.T) {
	forEachBackend(t, nil, func(t *testing.T, e *env) {
		for range 3 {
			e.enqueue("job", &dtq.EnqueueOpts{Queue: "lines", OrderKey: "acct"})
		}
		e.waitFor(map[string]float64{
			`dtq_queue_waiting{queue="lines",reason="order_key"}`:        2,
			`dtq_queue_waiting{queue="lines",reason="group"}`:            0,
			`dtq_queue_waiting{queue="lines",reason="limit"}`:            0,
			`dtq_queue_depth{priority="5",queue="lines",state="queued"}`: 1,
		})
	})
}
