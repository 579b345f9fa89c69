// Command worker is the fault suite's worker process: a dtq Worker running
// the "effect" task type (faults.TaskType), which leaves a trace outside
// Redis that the checker compares with what Redis says.
//
// For every execution it appends to two files in -dir, one write(2) per
// line on files opened with O_APPEND, so a line is either whole or absent
// whatever kills the process:
//
//   - trace-<id>.log: "S <task> <unix ns>" when the handler starts and
//     "R <task> <unix ns>" when it returns success ("X …" when it stopped
//     early because its context ended, before any side effect), and
//     "D <task> <unix ns>" once the execution's outcome is recorded;
//   - effects-<id>.log: one faults.Effect line, the execution's side effect,
//     written before the handler returns success.
//
// It logs the library's JSON logs to stderr, prints "ready" on stdout once
// the worker runs, and on SIGTERM stops gracefully (-shutdown bounds the
// wait for running handlers) and exits 0. The suite sends it SIGKILL,
// SIGSTOP and SIGCONT too.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"github.com/dtq-dev/dtq"
	"github.com/dtq-dev/dtq/faults"
	"github.com/dtq-dev/dtq/internal/redisconn"
)

type options struct {
	redisURL, namespace, queue, id, dir string
	concurrency, maxCrashes, durable    int
	visibility, shutdown                time.Duration
}

func main() {
	var o options
	flag.StringVar(&o.redisURL, "redis", "", "Redis URL (required)")
	flag.StringVar(&o.namespace, "namespace", "dtq", "key namespace")
	flag.StringVar(&o.queue, "queue", "faults", "queue to serve")
	flag.StringVar(&o.id, "id", "", "worker id: names its files and its executions (required)")
	flag.StringVar(&o.dir, "dir", "", "directory of the trace and effect logs (required)")
	flag.IntVar(&o.concurrency, "concurrency", 8, "handlers at once")
	flag.IntVar(&o.maxCrashes, "max-crashes", 100, "WorkerConfig.MaxCrashes")
	flag.IntVar(&o.durable, "durable-replicas", 0, "Config.DurableReplicas")
	flag.DurationVar(&o.visibility, "visibility", 10*time.Second, "WorkerConfig.VisibilityTimeout")
	flag.DurationVar(&o.shutdown, "shutdown", 5*time.Second, "on SIGTERM, how long running handlers get")
	flag.Parse()
	if err := run(o); err != nil {
		fmt.Fprintln(os.Stderr, "worker:", err)
		os.Exit(1)
	}
}

func run(o options) error {
	if o.redisURL == "" || o.id == "" || o.dir == "" {
		return fmt.Errorf("-redis, -id and -dir are required")
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	log := slog.New(slog.NewJSONHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	redis, err := redisconn.Connect(ctx, o.redisURL)
	if err != nil {
		return err
	}
	defer redis.Close()
	flags := os.O_WRONLY | os.O_CREATE | os.O_APPEND
	trace, err := os.OpenFile(filepath.Join(o.dir, "trace-"+o.id+".log"), flags, 0o644)
	if err != nil {
		return err
	}
	defer trace.Close()
	client, err := dtq.NewClient(redisconn.Wrap(redis), &dtq.Config{Namespace: o.namespace, Logger: log, DurableReplicas: o.durable,
		Observer: recorded{trace: trace}})
	if err != nil {
		return err
	}
	w, err := dtq.NewWorker(client, &dtq.WorkerConfig{
		Queues: []string{o.queue}, Concurrency: o.concurrency, VisibilityTimeout: o.visibility,
		MaxCrashes: o.maxCrashes, ID: o.id,
	})
	if err != nil {
		return err
	}
	effects, err := os.OpenFile(faults.EffectsFile(o.dir, o.id), flags, 0o644)
	if err != nil {
		return err
	}
	defer effects.Close()
	steps, err := os.OpenFile(faults.StepsFile(o.dir, o.id), flags, 0o644)
	if err != nil {
		return err
	}
	defer steps.Close()
	h := &handler{worker: o.id, pid: os.Getpid(), effects: effects, trace: trace, steps: steps}
	w.Handle(faults.TaskType, h.run)
	if err := w.Start(context.WithoutCancel(ctx)); err != nil {
		return err
	}
	fmt.Println("ready")
	<-ctx.Done()
	log.Info("shutting down", "timeout", o.shutdown)
	sctx, cancel := context.WithTimeout(context.Background(), o.shutdown)
	defer cancel()
	if err := w.Stop(sctx); err != nil {
		log.Warn("handlers still running at the shutdown timeout were cancelled", "error", err)
	}
	log.Info("stopped")
	return nil
}

// recorded writes "D <task> <unix ns>" to the trace once an execution's
// outcome is recorded in Redis (or dropped as taken over): a worker killed
// between its handler's return and that record runs the task again
// elsewhere, an execution its kill interrupted.
type recorded struct {
	dtq.NopTaskObserver
	trace *os.File
}

func (r recorded) OnFinished(t dtq.TaskRef, _ dtq.Outcome, _ time.Duration) {
	line(r.trace, "D "+t.ID+" "+strconv.FormatInt(time.Now().UnixNano(), 10)+"\n")
}

type handler struct {
	worker                string
	pid                   int
	effects, trace, steps *os.File
}

// line writes one line with one write(2): O_APPEND makes it atomic with
// respect to the process dying.
func line(f *os.File, s string) {
	if _, err := f.WriteString(s); err != nil {
		panic(err) // the suite cannot trust a worker that lost a line
	}
}

func (h *handler) run(ctx context.Context, t *dtq.Task) (any, error) {
	var p faults.Payload
	if err := json.Unmarshal(t.Payload, &p); err != nil {
		return nil, dtq.Permanent(err)
	}
	start := time.Now()
	line(h.trace, "S "+t.ID+" "+strconv.FormatInt(start.UnixNano(), 10)+"\n")
	if p.Die || t.Attempt <= p.Fail {
		// A failure by design, before any side effect.
		line(h.trace, "X "+t.ID+" "+strconv.FormatInt(time.Now().UnixNano(), 10)+"\n")
		if p.Die {
			return nil, dtq.Permanent(errors.New("fails by design"))
		}
		return nil, dtq.RetryAfter(10*time.Millisecond, fmt.Errorf("fails by design (attempt %d of %d)", t.Attempt, p.Fail))
	}
	if err := h.durable(ctx, t, p); err != nil {
		// suspended (dtq.ErrSuspended), or a step that could not record:
		// no side effect
		line(h.trace, "X "+t.ID+" "+strconv.FormatInt(time.Now().UnixNano(), 10)+"\n")
		return nil, err
	}
	if p.SleepMS > 0 {
		timer := time.NewTimer(time.Duration(p.SleepMS) * time.Millisecond)
		if p.IgnoreCtx {
			<-timer.C
		} else {
			select {
			case <-timer.C:
			case <-ctx.Done():
				timer.Stop()
				line(h.trace, "X "+t.ID+" "+strconv.FormatInt(time.Now().UnixNano(), 10)+"\n")
				return nil, context.Cause(ctx)
			}
		}
	}
	e := faults.Effect{TaskID: t.ID, Key: p.Key, Attempt: t.Attempt, Crashes: t.Crashes, Worker: h.worker,
		PID: h.pid, Start: start, At: time.Now()}
	line(h.effects, e.Line())
	// The side effect is done: the execution succeeds whatever happens to
	// its context now (a worker killed in this window leaves an effect
	// whose outcome was never recorded).
	if p.AfterMS > 0 {
		time.Sleep(time.Duration(p.AfterMS) * time.Millisecond)
	}
	line(h.trace, "R "+t.ID+" "+strconv.FormatInt(time.Now().UnixNano(), 10)+"\n")
	return nil, nil
}

// durable runs the task's durable parts before its side effect: p.Steps
// steps (each fn logged "F", each step returned "K"), a durable sleep of
// p.NapMS, a wait for signal faults.WaitSignal.
func (h *handler) durable(ctx context.Context, t *dtq.Task, p faults.Payload) error {
	for i := 1; i <= p.Steps; i++ {
		name := "s" + strconv.Itoa(i)
		if _, err := dtq.Step(ctx, name, func(context.Context) (int, error) {
			line(h.steps, faults.StepLine('F', t.ID, name, time.Now()))
			return i, nil
		}); err != nil {
			return err
		}
		line(h.steps, faults.StepLine('K', t.ID, name, time.Now()))
	}
	if p.NapMS > 0 {
		if err := dtq.Sleep(ctx, "nap", time.Duration(p.NapMS)*time.Millisecond); err != nil {
			return err
		}
	}
	if p.Wait {
		if _, err := dtq.WaitFor(ctx, faults.WaitSignal, time.Minute); err != nil {
			if errors.Is(err, dtq.ErrWaitTimedOut) {
				return dtq.Permanent(err) // a lost signal: a bad dead letter
			}
			return err
		}
	}
	return nil
}
