package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/dtq-dev/dtq"
	"github.com/dtq-dev/dtq/cmd/dtq/internal/bench"
	"github.com/dtq-dev/dtq/internal/embedded"
	"github.com/dtq-dev/dtq/internal/redisconn"
	"github.com/spf13/cobra"
)

type benchOptions struct {
	redisURL    string
	namespace   string
	queue       string
	apiURL      string
	apiKey      string
	n           int
	batch       int
	concurrency int
	connections int
	rate        float64
	duration    time.Duration
}

// newBenchCmd builds `dtq bench`: load measures against Redis directly or
// a running server, one JSON line each (docs/performance.md).
func newBenchCmd(out io.Writer) *cobra.Command {
	var o benchOptions
	cmd := &cobra.Command{
		Use:   "bench",
		Short: "Measure throughput and latency; prints one JSON line per measure",
		Long: `Measure dtq, printing one JSON line per measure:

  enqueue   submit --n tasks through the engine (--batch per call, --concurrency callers)
  drain     submit --n tasks, then time the workers running them: an in-process worker
            with --concurrency, or with --api-url the server's own workers
  latency   submit→start and submit→done p50/p95/p99, one task at a time or at --rate
            per second (in-process worker; with --api-url the server's workers, observed
            over /ws/events)
  http      POST /api/v1/tasks (or the batch route with --batch) over --connections
            for --duration against --api-url

enqueue, drain and latency use Redis at --redis (or the embedded backend without it,
which measures only the embedded backend). On Redis, enqueue and drain also report the
servers' CPU (redis_cpu_us_per_task), commands and used_memory growth per task over the
measured phase (INFO, summed over a Cluster's primaries): run them on a Redis nobody else
is using.`,
	}
	pf := cmd.PersistentFlags()
	pf.StringVar(&o.redisURL, "redis", envOr("DTQ_REDIS_URL", ""), "Redis URL for the direct measures; empty uses the embedded backend [DTQ_REDIS_URL]")
	pf.StringVar(&o.namespace, "namespace", "dtq", "key namespace of the direct measures")
	pf.StringVar(&o.apiURL, "api-url", envOr("DTQ_API_URL", ""), "a running server, for http (and drain/latency through it) [DTQ_API_URL]")
	pf.StringVar(&o.apiKey, "api-key", envOr("DTQ_API_KEY", ""), "sent as X-API-Key [DTQ_API_KEY]")
	pf.StringVar(&o.queue, "queue", "", "queue of the benchmark tasks (default: bench or bench-latency directly, default through --api-url)")
	pf.IntVar(&o.n, "n", 0, "tasks (default: 100000 for enqueue and drain, 2000 for latency)")
	pf.IntVar(&o.concurrency, "concurrency", 0, "submitting goroutines (enqueue) or worker concurrency (drain); default 64")

	enqueue := &cobra.Command{
		Use: "enqueue", Short: "submit tasks through the engine", Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return o.direct(cmd.Context(), out, func(ctx context.Context, c *dtq.Client, usage bench.UsageFunc) (bench.Result, error) {
				return bench.Enqueue(ctx, c, bench.EngineOpts{Queue: o.queue, N: o.n, Batch: o.batch, Concurrency: o.concurrency, Usage: usage})
			})
		},
	}
	enqueue.Flags().IntVar(&o.batch, "batch", 0, "tasks per EnqueueMany call (0: Enqueue one at a time)")

	drain := &cobra.Command{
		Use: "drain", Short: "time workers running a backlog", Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if o.apiURL != "" {
				return o.print(out, "http", func() (bench.Result, error) {
					return bench.HTTPDrain(cmd.Context(), bench.HTTPOpts{URL: o.apiURL, APIKey: o.apiKey, Queue: o.queue, N: o.n})
				})
			}
			return o.direct(cmd.Context(), out, func(ctx context.Context, c *dtq.Client, usage bench.UsageFunc) (bench.Result, error) {
				return bench.Drain(ctx, c, bench.EngineOpts{Queue: o.queue, N: o.n, Concurrency: o.concurrency, Usage: usage})
			})
		},
	}

	latency := &cobra.Command{
		Use: "latency", Short: "submit→start and submit→done percentiles", Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if o.apiURL != "" {
				return o.print(out, "http", func() (bench.Result, error) {
					return bench.HTTPLatency(cmd.Context(), bench.HTTPOpts{URL: o.apiURL, APIKey: o.apiKey, Queue: o.queue, N: o.n}, o.rate)
				})
			}
			return o.direct(cmd.Context(), out, func(ctx context.Context, c *dtq.Client, _ bench.UsageFunc) (bench.Result, error) {
				return bench.Latency(ctx, c, bench.LatencyOpts{Queue: o.queue, N: o.n, Rate: o.rate})
			})
		},
	}
	latency.Flags().Float64Var(&o.rate, "rate", 0, "tasks per second on a fixed schedule (0: one at a time)")

	httpCmd := &cobra.Command{
		Use: "http", Short: "POST tasks to a running server", Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if o.apiURL == "" {
				return errors.New("dtq bench http needs --api-url (or DTQ_API_URL) of a running server")
			}
			return o.print(out, "http", func() (bench.Result, error) {
				return bench.HTTP(cmd.Context(), bench.HTTPOpts{URL: o.apiURL, APIKey: o.apiKey, Queue: o.queue,
					Connections: o.connections, Duration: o.duration, Batch: o.batch})
			})
		},
	}
	httpCmd.Flags().IntVar(&o.batch, "batch", 0, "tasks per request through POST /api/v1/tasks/batch (0: POST /api/v1/tasks)")
	httpCmd.Flags().DurationVar(&o.duration, "duration", 10*time.Second, "how long to submit")
	httpCmd.Flags().IntVar(&o.connections, "connections", 64, "concurrent connections")

	cmd.AddCommand(enqueue, drain, latency, httpCmd)
	return cmd
}

// direct runs measure on a Client over Redis (or the embedded backend),
// with a reader of the Redis servers' usage (nil on the embedded backend).
func (o *benchOptions) direct(ctx context.Context, out io.Writer, measure func(context.Context, *dtq.Client, bench.UsageFunc) (bench.Result, error)) error {
	backend := "redis"
	var closeFn func()
	var c *dtq.Client
	var usage bench.UsageFunc
	if o.redisURL == "" || o.redisURL == redisconn.Memory {
		backend = "embedded"
		b, err := embedded.Start()
		if err != nil {
			return err
		}
		closeFn = b.Close
		c, err = dtq.NewClient(redisconn.Wrap(b.Client), &dtq.Config{Namespace: o.namespace})
		if err != nil {
			b.Close()
			return err
		}
	} else {
		rc, err := redisconn.Connect(ctx, o.redisURL)
		if err != nil {
			return err
		}
		closeFn = rc.Close
		usage = func(ctx context.Context) (redisconn.Usage, error) { return redisconn.ReadUsage(ctx, rc) }
		c, err = dtq.NewClient(redisconn.Wrap(rc), &dtq.Config{Namespace: o.namespace})
		if err != nil {
			rc.Close()
			return err
		}
	}
	defer closeFn()
	return o.print(out, backend, func() (bench.Result, error) { return measure(ctx, c, usage) })
}

func (o *benchOptions) print(out io.Writer, backend string, measure func() (bench.Result, error)) error {
	r, err := measure()
	if err != nil {
		return err
	}
	r["backend"] = backend
	fmt.Fprintln(out, r.JSON())
	return nil
}
