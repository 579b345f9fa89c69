// Command fairness measures the fair scheduling of groups
// (EnqueueOpts.Group, Admin.SetGroupWeight; docs/flow-control.md) under
// named adversarial workloads, and prints a markdown table.
//
// Each scenario runs twice on a fresh backend — its own redis-server on a
// free loopback port (internal/redistest), or an in-process one with
// -backend embedded — once with each tenant's tasks in its own group and
// once as a tenant-blind FIFO baseline: the same tasks, the same order,
// no group. One worker serves the queue; its handlers sleep. For each run
// it reports, over the contended period (measure.go), the worst-served
// tenant's starts over its fair share, and the watched tenants' waits from
// the submission call (or the worker's start, for tasks submitted before
// it) to the handler's start.
//
//	go run ./bench/fairness                       # the whole report (~2 min)
//	go run ./bench/fairness -run skew -scale 0.1  # one scenario, small
//
// Never point it at a Redis of your own: it starts and stops its own.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"time"
)

func main() { os.Exit(run()) }

func run() int {
	o := options{progress: func(format string, args ...any) { fmt.Fprintf(os.Stderr, format, args...) }}
	flag.StringVar(&o.backend, "backend", "redis", "redis (a redis-server of its own per run) or embedded (in-process)")
	flag.Float64Var(&o.scale, "scale", 1, "multiplies every scenario's task counts and durations")
	flag.IntVar(&o.concurrency, "concurrency", 20, "the worker's concurrency")
	flag.DurationVar(&o.handler, "handler", 5*time.Millisecond, "how long each handler sleeps")
	flag.StringVar(&o.only, "run", "", "run only the scenarios whose name contains this")
	flag.DurationVar(&o.timeout, "timeout", 2*time.Minute, "bound on each run")
	flag.Parse()
	if o.scale <= 0 || o.concurrency < 1 || o.handler < 0 {
		fmt.Fprintln(os.Stderr, "fairness: -scale and -concurrency must be positive, -handler not negative")
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	rows, err := harness(ctx, &o)
	if err != nil {
		fmt.Fprintln(os.Stderr, "fairness:", err)
		return 1
	}
	writeReport(os.Stdout, &o, rows)
	return 0
}
