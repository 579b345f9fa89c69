package dtq_test

import (
	"context"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dtq-dev/dtq"
)

// BenchmarkDrainSteps: BenchmarkDrain10 with handlers that record 0, 1 or
// 3 durable steps each (dtq.Step, a small JSON result): the difference to
// 0 steps, divided by the steps, is a step's cost — one read of the
// task's records per execution, one step.lua call per record.
func BenchmarkDrainSteps(b *testing.B) {
	for _, steps := range []int{0, 1, 3} {
		b.Run(strconv.Itoa(steps), func(b *testing.B) {
			c, rc := benchClient(b)
			enqueueManyN(b, c, b.N, 1000)
			measure(b, rc, func() { drainSteps(b, c, b.N, 10, steps) })
		})
	}
}

// drainSteps runs a worker whose handler records steps steps until n
// tasks succeeded.
func drainSteps(b *testing.B, c *dtq.Client, n, concurrency, steps int) {
	var done atomic.Int64
	finished := make(chan struct{})
	w, err := dtq.NewWorker(c, &dtq.WorkerConfig{Concurrency: concurrency})
	if err != nil {
		b.Fatal(err)
	}
	names := make([]string, steps)
	for i := range names {
		names[i] = "step-" + strconv.Itoa(i)
	}
	w.Handle("noop", func(ctx context.Context, _ *dtq.Task) (any, error) {
		for _, name := range names {
			if _, err := dtq.Step(ctx, name, func(context.Context) (string, error) { return "ok", nil }); err != nil {
				return nil, err
			}
		}
		if done.Add(1) == int64(n) {
			close(finished)
		}
		return nil, nil
	})
	w.Start(context.Background())
	<-finished
	for {
		st, err := dtq.NewAdmin(c).Stats(context.Background(), dtq.DefaultQueue)
		if err == nil && st.Succeeded >= int64(n) {
			break
		}
		time.Sleep(time.Millisecond)
	}
	w.Stop(context.Background())
}
