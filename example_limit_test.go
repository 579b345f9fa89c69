package dtq_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/dtq-dev/dtq"
)

// A concurrency limit (LimitSpec.MaxRunning) holds across every worker
// process of the queue: here one worker of 8 slots runs at most 2 reports
// at once.
func ExampleAdmin_SetLimits() {
	ctx := context.Background()
	client, stop := connect()
	defer stop()
	dtq.NewAdmin(client).SetLimits(ctx, "reports", dtq.LimitSpec{MaxRunning: 2})

	var running, most atomic.Int32
	worker, _ := dtq.NewWorker(client, &dtq.WorkerConfig{Queues: []string{"reports"}, Concurrency: 8})
	worker.Handle("report", func(context.Context, *dtq.Task) (any, error) {
		n := running.Add(1)
		for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
		}
		time.Sleep(20 * time.Millisecond)
		running.Add(-1)
		return nil, nil
	})
	worker.Start(ctx)
	defer worker.Stop(ctx)

	var ids []string
	for range 6 {
		res, _ := client.Enqueue(ctx, "report", nil, &dtq.EnqueueOpts{Queue: "reports"})
		ids = append(ids, res.Task.ID)
	}
	for _, id := range ids {
		wait(client, id, dtq.StatusSucceeded)
	}
	info, _ := dtq.NewAdmin(client).Limit(ctx, "reports")
	fmt.Println("limit", info.MaxRunning, "most at once", most.Load())
	// Output: limit 2 most at once 2
}

// A rate limit (LimitSpec.Rate, Per, Burst) spaces the queue's starts
// across every worker: 20 per second, one at a time, is one start every
// 50 ms.
func ExampleAdmin_SetLimits_rate() {
	ctx := context.Background()
	client, stop := connect()
	defer stop()
	dtq.NewAdmin(client).SetLimits(ctx, "partner-api", dtq.LimitSpec{Rate: 20, Per: time.Second, Burst: 1})

	starts := make(chan time.Time, 4)
	worker, _ := dtq.NewWorker(client, &dtq.WorkerConfig{Queues: []string{"partner-api"}})
	worker.Handle("call", func(context.Context, *dtq.Task) (any, error) { starts <- time.Now(); return nil, nil })
	worker.Start(ctx)
	defer worker.Stop(ctx)

	for range 4 {
		client.Enqueue(ctx, "call", nil, &dtq.EnqueueOpts{Queue: "partner-api"})
	}
	first := <-starts
	var last time.Time
	for range 3 {
		last = <-starts
	}
	// 3 intervals of 50 ms, less the jitter of the handlers' own starts
	// (each runs a little after its grant); without the limit all four
	// start within a few ms.
	fmt.Println(last.Sub(first) >= 100*time.Millisecond)
	// Output: true
}
