// Command goworker is the Go implementation's conformance worker: a
// dtq.Worker on Redis with the handlers of conformance/README.md, run by
// the conformance suite as the Python and TypeScript libraries' workers
// are.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/dtq-dev/dtq"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "goworker:", err)
		os.Exit(1)
	}
}

func run() error {
	redisURL := flag.String("redis", "", "Redis URL")
	flag.String("url", "", "the API (unused: the Go worker talks to Redis)")
	queues := flag.String("queues", "default", "queues, highest priority first")
	types := flag.String("types", "", "register only these handlers (default: all)")
	concurrency := flag.Int("concurrency", 4, "tasks run at once")
	lease := flag.Float64("lease-seconds", 30, "visibility timeout")
	name := flag.String("worker", "", "the worker's name")
	grace := flag.Float64("grace-seconds", 10, "graceful stop's grace period")
	flag.Parse()

	ctx := context.Background()
	r, err := dtq.Connect(ctx, *redisURL)
	if err != nil {
		return err
	}
	defer r.Close()
	c, err := dtq.NewClient(r, nil)
	if err != nil {
		return err
	}
	w, err := dtq.NewWorker(c, &dtq.WorkerConfig{Queues: strings.Split(*queues, ","), Concurrency: *concurrency,
		VisibilityTimeout: seconds(*lease), ID: *name})
	if err != nil {
		return err
	}
	for typ, h := range handlers {
		if *types == "" || slices.Contains(strings.Split(*types, ","), typ) {
			w.Handle(typ, h)
		}
	}
	if err := w.Start(ctx); err != nil {
		return err
	}
	emit("ready")
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGTERM, syscall.SIGINT)
	<-stop
	sctx, cancel := context.WithTimeout(ctx, seconds(*grace))
	defer cancel()
	_ = w.Stop(sctx) // a handler cancelled at the end of the grace runs again
	emit("stopped")
	return nil
}

func seconds(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }

func emit(event string) {
	b, _ := json.Marshal(map[string]string{"event": event})
	fmt.Println(string(b))
}

// payload is the fields of conformance/README.md's handlers.
type payload struct {
	Times       *int     `json:"times"`
	Permanent   bool     `json:"permanent"`
	RetryAfter  *float64 `json:"retry_after"`
	Seconds     *float64 `json:"seconds"`
	FailBetween bool     `json:"fail_between"`
	Timeout     *float64 `json:"timeout"`
}

func read(t *dtq.Task) (payload, error) {
	var p payload
	if len(t.Payload) > 0 && string(t.Payload) != "null" {
		if err := json.Unmarshal(t.Payload, &p); err != nil {
			return p, dtq.Permanent(fmt.Errorf("payload: %w", err))
		}
	}
	return p, nil
}

func or(v *float64, def float64) float64 {
	if v == nil {
		return def
	}
	return *v
}

var handlers = map[string]dtq.HandlerFunc{
	"echo": func(_ context.Context, t *dtq.Task) (any, error) {
		noteStart(t.ID)
		return map[string]any{"echo": t.Payload, "attempt": t.Attempt}, nil
	},
	"fail": func(_ context.Context, t *dtq.Task) (any, error) {
		p, err := read(t)
		if err != nil {
			return nil, err
		}
		if p.Times == nil || t.Attempt <= *p.Times {
			err := fmt.Errorf("fail on attempt %d", t.Attempt)
			switch {
			case p.Permanent:
				return nil, dtq.Permanent(err)
			case p.RetryAfter != nil:
				return nil, dtq.RetryAfter(seconds(*p.RetryAfter), err)
			}
			return nil, err
		}
		return map[string]int{"attempt": t.Attempt}, nil
	},
	"sleep": func(ctx context.Context, t *dtq.Task) (any, error) {
		p, err := read(t)
		if err != nil {
			return nil, err
		}
		s := or(p.Seconds, 1)
		if err := sleep(ctx, s); err != nil {
			return nil, err
		}
		return map[string]float64{"slept": s}, nil
	},
	"progress": func(ctx context.Context, t *dtq.Task) (any, error) {
		p, err := read(t)
		if err != nil {
			return nil, err
		}
		if err := dtq.Progress(ctx, 0.5, "half"); err != nil {
			return nil, err
		}
		if err := sleep(ctx, or(p.Seconds, 0)); err != nil {
			return nil, err
		}
		return map[string]bool{"progressed": true}, nil
	},
	"steps": func(ctx context.Context, t *dtq.Task) (any, error) {
		p, err := read(t)
		if err != nil {
			return nil, err
		}
		ran := []string{}
		step := func(name string, n int) (json.RawMessage, error) {
			return dtq.Step(ctx, name, func(context.Context) (json.RawMessage, error) {
				ran = append(ran, name)
				return json.RawMessage(fmt.Sprintf(`{"n":%d}`, n)), nil
			})
		}
		one, err := step("one", 1)
		if err != nil {
			return nil, err
		}
		if p.FailBetween && t.Attempt == 1 {
			return nil, dtq.RetryAfter(100*time.Millisecond, errors.New("failing between the steps"))
		}
		two, err := step("two", 2)
		if err != nil {
			return nil, err
		}
		return map[string]any{"one": one, "two": two, "ran": ran}, nil
	},
	"nap": func(ctx context.Context, t *dtq.Task) (any, error) {
		p, err := read(t)
		if err != nil {
			return nil, err
		}
		if err := dtq.Sleep(ctx, "nap", seconds(or(p.Seconds, 1))); err != nil {
			return nil, err
		}
		return map[string]any{"napped": true, "attempt": t.Attempt}, nil
	},
	"wait": func(ctx context.Context, t *dtq.Task) (any, error) {
		p, err := read(t)
		if err != nil {
			return nil, err
		}
		got, err := dtq.WaitFor(ctx, "go", seconds(or(p.Timeout, 60)))
		if errors.Is(err, dtq.ErrWaitTimedOut) {
			return map[string]bool{"timed_out": true}, nil
		}
		if err != nil {
			return nil, err
		}
		return map[string]json.RawMessage{"signal": got}, nil
	},
}

// sleep sleeps s seconds in slices, failing as soon as ctx ends (a
// cancellation, the task's timeout).
func sleep(ctx context.Context, s float64) error {
	for end := time.Now().Add(seconds(s)); time.Now().Before(end); {
		select {
		case <-ctx.Done():
			return errors.New("cancelled")
		case <-time.After(min(50*time.Millisecond, time.Until(end))):
		}
	}
	return nil
}

// startsMu guards the file of noteStart.
var startsMu sync.Mutex

// noteStart appends "<task id> <unix time>" to $DTQ_BENCH_STARTS, when
// set: bench/httpworkers' latency run reads the handlers' start times.
func noteStart(id string) {
	path := os.Getenv("DTQ_BENCH_STARTS")
	if path == "" {
		return
	}
	startsMu.Lock()
	defer startsMu.Unlock()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return
	}
	fmt.Fprintf(f, "%s %.6f\n", id, float64(time.Now().UnixNano())/1e9)
	f.Close()
}
