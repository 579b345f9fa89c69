package dtq_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/dtq-dev/dtq"
)

// A handler waits for a person's approval without holding a worker: its
// execution suspends at WaitFor, and the signal resumes the task.
func ExampleWaitFor() {
	ctx := context.Background()
	client, stop := start(&dtq.WorkerConfig{}, map[string]dtq.HandlerFunc{
		"publish": func(ctx context.Context, t *dtq.Task) (any, error) {
			approval, err := dtq.WaitFor(ctx, "approved", 24*time.Hour)
			if errors.Is(err, dtq.ErrWaitTimedOut) {
				return "not approved in time", nil
			}
			if err != nil {
				return nil, err // dtq.ErrSuspended: the task waits, its worker is free
			}
			return "published, approved by " + string(approval), nil
		},
	})
	defer stop()

	res, _ := client.Enqueue(ctx, "publish", nil, nil)
	waiting := wait(client, res.Task.ID, dtq.StatusScheduled)
	fmt.Println(waiting.Suspended.For, waiting.Suspended.Name)
	_ = client.Signal(ctx, res.Task.ID, "approved", "ann")
	done := wait(client, res.Task.ID, dtq.StatusSucceeded)
	fmt.Println(string(done.Result))
	// Output:
	// signal approved
	// "published, approved by \"ann\""
}

// A parent task enqueues a child and returns its result once it ended.
func ExampleChild() {
	ctx := context.Background()
	client, stop := start(&dtq.WorkerConfig{}, map[string]dtq.HandlerFunc{
		"report": func(ctx context.Context, t *dtq.Task) (any, error) {
			total, err := dtq.Child(ctx, "sum", "sum", []int{1, 2, 3}, nil)
			if err != nil {
				return nil, err // dtq.ErrSuspended while the child runs
			}
			return "total " + string(total), nil
		},
		"sum": func(_ context.Context, t *dtq.Task) (any, error) {
			var xs []int
			if err := json.Unmarshal(t.Payload, &xs); err != nil {
				return nil, dtq.Permanent(err)
			}
			n := 0
			for _, x := range xs {
				n += x
			}
			return n, nil
		},
	})
	defer stop()

	res, _ := client.Enqueue(ctx, "report", nil, nil)
	done := wait(client, res.Task.ID, dtq.StatusSucceeded)
	fmt.Println(string(done.Result))
	// Output:
	// "total 6"
}
