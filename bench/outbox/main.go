// Command outbox measures the PostgreSQL outbox's relay (package outbox,
// docs/outbox.md) and prints a markdown report:
//
//   - throughput: rows committed beforehand (-backlog), relayed by one
//     relay from a cold start until the table is empty, per batch size;
//   - lag: rows committed at a steady rate (-rate per second for
//     -duration, one row per transaction from 8 connections), and for each
//     the time from its commit returning to the relay's submit of its task
//     returning (the task is in Redis), p50/p90/p99/max.
//
// It starts its own redis-server and PostgreSQL (internal/redistest,
// internal/pgtest: a test server, fsync off) on free loopback ports and
// stops them at the end; never point it at servers of your own.
//
//	go run ./bench/outbox                          # the whole report (~1 min)
//	go run ./bench/outbox -rate 2000 -duration 10s
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

// options are the command's flags.
type options struct {
	backlog  int
	batches  []int
	rate     int
	duration time.Duration
}

func run() int {
	var o options
	flag.IntVar(&o.backlog, "backlog", 50000, "rows committed before the relay starts, for the throughput runs")
	flag.IntVar(&o.rate, "rate", 1000, "rows committed per second in the lag run")
	flag.DurationVar(&o.duration, "duration", 20*time.Second, "length of the lag run")
	flag.Parse()
	o.batches = []int{100, 500, 2000}
	if o.backlog < 1 || o.rate < 1 || o.duration <= 0 {
		fmt.Fprintln(os.Stderr, "outbox: -backlog, -rate and -duration must be positive")
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	b, err := startBackends()
	if err != nil {
		fmt.Fprintln(os.Stderr, "outbox:", err)
		return 1
	}
	defer b.close()
	var thr []throughputRow
	for _, size := range o.batches {
		fmt.Fprintf(os.Stderr, "throughput: %d rows, batch %d\n", o.backlog, size)
		r, err := b.throughput(ctx, o.backlog, size)
		if err != nil {
			fmt.Fprintln(os.Stderr, "outbox:", err)
			return 1
		}
		thr = append(thr, r)
	}
	fmt.Fprintf(os.Stderr, "lag: %d rows/s for %v\n", o.rate, o.duration)
	lag, err := b.lag(ctx, o.rate, o.duration)
	if err != nil {
		fmt.Fprintln(os.Stderr, "outbox:", err)
		return 1
	}
	report(os.Stdout, &o, thr, lag)
	return 0
}
