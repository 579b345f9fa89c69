package bench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dtq-dev/dtq"
)

// EngineOpts configure the measures that drive the engine directly.
type EngineOpts struct {
	Queue       string // defaults to "bench"
	N           int    // tasks; defaults to 100,000
	Batch       int    // tasks per EnqueueMany; 0 or 1: Enqueue one at a time
	Concurrency int    // submitting goroutines, or the worker's concurrency; defaults to 64
	// Usage, when set, reads the Redis servers' usage around the measured
	// phase: the result then carries Redis CPU, commands and memory per
	// task.
	Usage UsageFunc
}

func (o *EngineOpts) defaults() {
	if o.Queue == "" {
		o.Queue = "bench"
	}
	if o.N <= 0 {
		o.N = 100_000
	}
	if o.Concurrency <= 0 {
		o.Concurrency = 64
	}
}

// Enqueue submits N tasks as fast as Concurrency goroutines can, one at a
// time or in batches.
func Enqueue(ctx context.Context, c *dtq.Client, o EngineOpts) (Result, error) {
	o.defaults()
	cost, err := startRedisCost(ctx, o.Usage)
	if err != nil {
		return nil, err
	}
	start := time.Now()
	if err := submit(ctx, c, o); err != nil {
		return nil, err
	}
	d := time.Since(start)
	r := Result{"bench": "enqueue", "tasks": o.N, "batch": max(o.Batch, 1), "concurrency": o.Concurrency,
		"seconds": round(d.Seconds(), 3), "tasks_per_sec": rate(o.N, d)}
	return r, cost.end(ctx, r, o.N)
}

// submit enqueues o.N benchmark tasks on o.Queue.
func submit(ctx context.Context, c *dtq.Client, o EngineOpts) error {
	payload := json.RawMessage(Payload)
	opts := &dtq.EnqueueOpts{Queue: o.Queue}
	var next atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, o.Concurrency)
	step := int64(max(o.Batch, 1))
	for range o.Concurrency {
		wg.Go(func() {
			for {
				end := next.Add(step)
				first := end - step
				if first >= int64(o.N) || ctx.Err() != nil {
					return
				}
				n := int(min(end, int64(o.N)) - first)
				var err error
				if o.Batch <= 1 {
					_, err = c.Enqueue(ctx, TaskType, payload, opts)
				} else {
					reqs := make([]dtq.EnqueueRequest, n)
					for i := range reqs {
						reqs[i] = dtq.EnqueueRequest{Type: TaskType, Payload: payload, Opts: opts}
					}
					var res []dtq.EnqueueManyResult
					res, err = c.EnqueueMany(ctx, reqs)
					for _, r := range res {
						if err == nil {
							err = r.Err
						}
					}
				}
				if err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		return fmt.Errorf("enqueue: %w", err)
	}
	return ctx.Err()
}

// Drain submits N tasks, then starts a worker with Concurrency and times
// how long it takes to run them all.
func Drain(ctx context.Context, c *dtq.Client, o EngineOpts) (Result, error) {
	o.defaults()
	if o.Batch <= 1 {
		o.Batch = 500
	}
	if err := submit(ctx, c, EngineOpts{Queue: o.Queue, N: o.N, Batch: o.Batch, Concurrency: 8}); err != nil {
		return nil, err
	}
	var done atomic.Int64
	all := make(chan struct{})
	w, err := dtq.NewWorker(c, &dtq.WorkerConfig{Queues: []string{o.Queue}, Concurrency: o.Concurrency})
	if err != nil {
		return nil, err
	}
	w.Handle(TaskType, func(context.Context, *dtq.Task) (any, error) {
		if done.Add(1) == int64(o.N) {
			close(all)
		}
		return nil, nil
	})
	cost, err := startRedisCost(ctx, o.Usage)
	if err != nil {
		return nil, err
	}
	start := time.Now()
	if err := w.Start(ctx); err != nil {
		return nil, err
	}
	defer func() { _ = w.Stop(context.WithoutCancel(ctx)) }() // its no-op handlers have finished
	select {
	case <-all:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	// The last handler returned; wait for its outcome to be recorded.
	if err := waitSucceeded(ctx, c, o.Queue, int64(o.N)); err != nil {
		return nil, err
	}
	d := time.Since(start)
	r := Result{"bench": "drain", "tasks": o.N, "concurrency": o.Concurrency,
		"seconds": round(d.Seconds(), 3), "tasks_per_sec": rate(o.N, d)}
	return r, cost.end(ctx, r, o.N)
}

// waitSucceeded polls the queue's stats until n tasks succeeded.
func waitSucceeded(ctx context.Context, c *dtq.Client, queue string, n int64) error {
	for {
		st, err := dtq.NewAdmin(c).Stats(ctx, queue)
		if err != nil {
			return err
		}
		if st.Succeeded >= n {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Millisecond):
		}
	}
}

// LatencyOpts configure Latency.
type LatencyOpts struct {
	Queue string // defaults to "bench-latency"
	N     int    // tasks; defaults to 2,000
	// Rate submits this many tasks per second on a fixed schedule; 0
	// submits one at a time, each after the previous one is done.
	Rate float64
}

// Latency measures submit→start (the handler is entered) and submit→done
// (the SUCCEEDED event arrives) with an in-process worker.
func Latency(ctx context.Context, c *dtq.Client, o LatencyOpts) (Result, error) {
	if o.Queue == "" {
		o.Queue = "bench-latency"
	}
	if o.N <= 0 {
		o.N = 2000
	}
	t := newTracker(o.N)
	w, err := dtq.NewWorker(c, &dtq.WorkerConfig{Queues: []string{o.Queue}, Concurrency: 64})
	if err != nil {
		return nil, err
	}
	w.Handle(TaskType, func(_ context.Context, task *dtq.Task) (any, error) {
		t.started(task.ID, time.Now())
		return nil, nil
	})
	evCtx, stopEvents := context.WithCancel(ctx)
	defer stopEvents()
	subscribed := make(chan error, 1)
	go func() {
		subscribed <- c.Events(evCtx, []string{o.Queue}, func(e dtq.Event) {
			if e.Status == dtq.StatusSucceeded {
				t.done(e.TaskID, time.Now())
			}
		})
	}()
	if err := w.Start(ctx); err != nil {
		return nil, err
	}
	defer func() { _ = w.Stop(context.WithoutCancel(ctx)) }() // its no-op handlers have finished
	if err := warmUp(ctx, c, o.Queue, t, subscribed); err != nil {
		return nil, err
	}
	submitOne := func(ctx context.Context) (string, time.Time, error) {
		at := time.Now()
		res, err := c.Enqueue(ctx, TaskType, json.RawMessage(Payload), &dtq.EnqueueOpts{Queue: o.Queue})
		if err != nil {
			return "", at, err
		}
		return res.Task.ID, at, nil
	}
	return t.run(ctx, "latency", o.N, o.Rate, submitOne)
}

// warmUp runs tasks until one's SUCCEEDED event arrives, so the
// subscription is live before measuring.
func warmUp(ctx context.Context, c *dtq.Client, queue string, t *tracker, subscribed <-chan error) error {
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case err := <-subscribed:
			return fmt.Errorf("events: %w", err)
		default:
		}
		res, err := c.Enqueue(ctx, TaskType, json.RawMessage(Payload), &dtq.EnqueueOpts{Queue: queue})
		if err != nil {
			return err
		}
		t.expect(res.Task.ID, time.Now())
		if t.wait(ctx, res.Task.ID, time.Second) {
			t.reset()
			return nil
		}
	}
	return errors.New("events: no SUCCEEDED event within 30s; is a worker running?")
}
