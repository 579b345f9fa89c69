package dtq_test

import (
	"context"
	"os"
	"strconv"
	"testing"

	"github.com/dtq-dev/dtq"
)

// BenchmarkWorkflowGroup: the whole life (submission and drain, the worker
// at concurrency 50) of tasks as groups of 1,000 children with an
// on_success callback each, against the same tasks submitted plain
// (EnqueueMany, batches of 1,000). Redis CPU per task is per child task
// (the callbacks' own cost included): the difference is what a workflow
// costs beyond its tasks.
func BenchmarkWorkflowGroup(b *testing.B) {
	for _, kind := range []string{"plain", "group"} {
		b.Run(kind, func(b *testing.B) {
			c, rc := benchClient(b)
			ctx := context.Background()
			kids := make([]dtq.Step, benchGroupSize())
			for i := range kids {
				kids[i] = dtq.Call("noop", []byte(benchPayload), nil)
			}
			cb := dtq.Call("noop", nil, nil)
			measure(b, rc, func() {
				total := b.N
				if kind == "plain" {
					enqueueManyN(b, c, b.N, 1000)
				} else {
					for done := 0; done < b.N; done += len(kids) {
						g := dtq.Group(kids[:min(len(kids), b.N-done)]...)
						g.OnSuccess = &cb
						if _, err := c.EnqueueWorkflow(ctx, g, nil); err != nil {
							b.Fatal(err)
						}
						total++ // its callback
					}
				}
				drain(b, c, total, 50)
			})
		})
	}
}

// benchGroupSize is the children per group of BenchmarkWorkflowGroup:
// 1,000, or DTQ_BENCH_GROUP.
func benchGroupSize() int {
	if n, err := strconv.Atoi(os.Getenv("DTQ_BENCH_GROUP")); err == nil && n > 0 {
		return n
	}
	return 1000
}
