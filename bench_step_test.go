package dtq_test

import (
	"context"
	"strconv"
	"sync"
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
			names := make([]string, steps)
			for i := range names {
				names[i] = "step-" + strconv.Itoa(i)
			}
			c, rc := benchClient(b)
			enqueueManyN(b, c, b.N, 1000)
			measure(b, rc, func() {
				drainWith(b, c, b.N, 10, func(ctx context.Context) error {
					for _, name := range names {
						if _, err := dtq.Step(ctx, name, func(context.Context) (string, error) { return "ok", nil }); err != nil {
							return err
						}
					}
					return nil
				})
			})
		})
	}
}

// BenchmarkDrainSuspend: BenchmarkDrain10 with handlers that sleep
// durably 1ms once (dtq.Sleep): each task runs twice — its first
// execution records the sleep's step and suspends (suspend.lua), the
// scheduler promotes it when due, and its second execution reads its
// records and goes on. The difference to "none" is a suspension's whole
// cost: a step record, a suspend, a promote, a start and a read.
func BenchmarkDrainSuspend(b *testing.B) {
	for _, sleep := range []bool{false, true} {
		name := "none"
		if sleep {
			name = "sleep"
		}
		b.Run(name, func(b *testing.B) {
			c, rc := benchClient(b)
			enqueueManyN(b, c, b.N, 1000)
			measure(b, rc, func() {
				drainWith(b, c, b.N, 10, func(ctx context.Context) error {
					if sleep {
						return dtq.Sleep(ctx, "nap", time.Millisecond)
					}
					return nil
				})
			})
		})
	}
}

// BenchmarkSignal: Client.Signal to QUEUED tasks from 50 goroutines (each
// a new signal: signal.lua records it).
func BenchmarkSignal(b *testing.B) {
	c, rc := benchClient(b)
	ids := make([]string, 0, b.N)
	for len(ids) < b.N {
		reqs := make([]dtq.EnqueueRequest, min(1000, b.N-len(ids)))
		for i := range reqs {
			reqs[i] = dtq.EnqueueRequest{Type: "noop", Payload: []byte(benchPayload), Opts: &dtq.EnqueueOpts{Queue: "signalled"}}
		}
		res, err := c.EnqueueMany(context.Background(), reqs)
		if err != nil {
			b.Fatal(err)
		}
		for _, r := range res {
			if r.Err != nil {
				b.Fatal(r.Err)
			}
			ids = append(ids, r.Task.ID)
		}
	}
	var next atomic.Int64
	measure(b, rc, func() {
		var wg sync.WaitGroup
		for range 50 {
			wg.Go(func() {
				for i := next.Add(1) - 1; i < int64(len(ids)); i = next.Add(1) - 1 {
					if err := c.Signal(context.Background(), ids[i], "go", i); err != nil {
						b.Error(err)
						return
					}
				}
			})
		}
		wg.Wait()
	})
}
