package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dtq-dev/dtq/internal/embedded"
	"github.com/dtq-dev/dtq/internal/redisconn"
	"github.com/dtq-dev/dtq/queue"
	"github.com/redis/rueidis"
	"github.com/spf13/cobra"
)

type serveOptions struct {
	redisURL string
	rate     int
	duration time.Duration
}

// newServeCmd builds `dtq serve`. Until the HTTP server exists it runs a
// live demo of the reliable queue: a publisher, a consumer, priorities,
// delayed redelivery, and a stats line per second.
func newServeCmd(out, errOut io.Writer) *cobra.Command {
	var o serveOptions
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Run dtq (today: a live demo of the reliable queue)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runServe(cmd.Context(), out, errOut, o)
		},
	}
	cmd.Flags().StringVar(&o.redisURL, "redis", envOr("DTQ_REDIS_URL", ""),
		"Redis URL (redis:// or rediss://); empty runs the embedded in-memory backend [DTQ_REDIS_URL]")
	cmd.Flags().IntVar(&o.rate, "rate", 20, "demo messages published per second")
	cmd.Flags().DurationVar(&o.duration, "duration", 0, "stop after this long (0 = until interrupted)")
	return cmd
}

func runServe(ctx context.Context, out, errOut io.Writer, o serveOptions) error {
	// Checked before anything starts; above one per nanosecond the publish
	// interval would be 0, which time.NewTicker refuses with a panic.
	if o.rate < 1 || o.rate > int(time.Second) {
		return fmt.Errorf("--rate must be between 1 and %d (got %d)", int(time.Second), o.rate)
	}
	log := slog.New(slog.NewJSONHandler(errOut, nil))
	var client rueidis.Client
	if o.redisURL == "" {
		b, err := embedded.Start()
		if err != nil {
			return err
		}
		defer b.Close()
		client = b.Client
		log.Info("using the embedded in-memory backend: for trying dtq only, nothing is kept after exit; pass --redis for real Redis",
			"backend", "embedded")
	} else {
		c, err := redisconn.Connect(ctx, o.redisURL)
		if err != nil {
			return err
		}
		defer c.Close()
		client = c
		log.Info("using Redis", "backend", "redis")
	}
	if o.duration > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, o.duration)
		defer cancel()
	}

	q, err := queue.New(client, "demo", &queue.Config{Logger: log})
	if err != nil {
		return err
	}
	sub, err := q.Subscribe(ctx, map[string]int{"urgent": 0, "normal": 1}, &queue.SubscribeOpts{VisibilityTimeout: 10 * time.Second})
	if err != nil {
		return err
	}
	var published, acked, retried atomic.Int64
	// The publisher and the stats printer stop, and are waited for, before
	// runServe returns: out belongs to the caller again after that.
	helpersCtx, stopHelpers := context.WithCancel(ctx)
	defer stopHelpers()
	var helpers sync.WaitGroup
	helpers.Go(func() {
		ctx := helpersCtx
		tick := time.NewTicker(time.Second / time.Duration(o.rate))
		defer tick.Stop()
		for n := 0; ; n++ {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			topic := "normal"
			if n%5 == 0 {
				topic = "urgent"
			}
			ok, err := q.Put(ctx, topic, fmt.Appendf(nil, `{"n":%d}`, n), &queue.PutOpts{MaxSize: 1000})
			if err == nil && ok {
				published.Add(1)
			}
		}
	})
	helpers.Go(func() {
		ctx := helpersCtx
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
				fmt.Fprintf(out, "published %d  acked %d  redelivered-after-nak %d\n", published.Load(), acked.Load(), retried.Load())
			}
		}
	})
	err = sub.Consume(ctx, func(ctx context.Context, m *queue.Message) error {
		var body struct{ N int }
		if json.Unmarshal(m.Data, &body) == nil && body.N%7 == 3 && m.Deliveries == 1 {
			retried.Add(1)
			return m.Nak(ctx, 500*time.Millisecond) // show a delayed redelivery
		}
		acked.Add(1)
		return nil
	})
	stopHelpers()
	helpers.Wait()
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	sub.Close(cctx)
	if ctx.Err() != nil {
		return nil
	}
	return err
}
