package dtq_test

import (
	"context"
	"strconv"
	"testing"

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
