package dtq_test

import (
	"context"
	"os"
	"strconv"
	"testing"

	"github.com/dtq-dev/dtq"
)

// BenchmarkWorkflowParallel: the whole life (submission and drain, the
// worker at concurrency 50) of tasks as parallel nodes of 1,000 children
// with an on_success callback each, against the same tasks submitted plain
// (EnqueueMany, batches of 1,000). Redis CPU per task is per child task
// (the callbacks' own cost included): the difference is what a workflow
// costs beyond its tasks.
func BenchmarkWorkflowParallel(b *testing.B) {
	for _, kind := range []string{"plain", "parallel"} {
		b.Run(kind, func(b *testing.B) {
			c, rc := benchClient(b)
			ctx := context.Background()
			kids := make([]dtq.Node, benchParallelSize())
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
						p := dtq.Parallel(kids[:min(len(kids), b.N-done)]...)
						p.OnSuccess = &cb
						if _, err := c.EnqueueWorkflow(ctx, p, nil); err != nil {
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

// benchParallelSize is the children per parallel node of
// BenchmarkWorkflowParallel: 1,000, or DTQ_BENCH_PARALLEL.
func benchParallelSize() int {
	if n, err := strconv.Atoi(os.Getenv("DTQ_BENCH_PARALLEL")); err == nil && n > 0 {
		return n
	}
	return 1000
}
