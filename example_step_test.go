package dtq_test

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/dtq-dev/dtq"
)

// A step's work is recorded the first time it succeeds: the retry gets
// the charge back from its record and does not charge again.
func ExampleStep() {
	ctx := context.Background()
	var charges, attempts atomic.Int32
	client, stop := start(&dtq.WorkerConfig{BackoffBase: 10 * time.Millisecond}, map[string]dtq.HandlerFunc{
		"order": func(ctx context.Context, t *dtq.Task) (any, error) {
			attempts.Add(1)
			receipt, err := dtq.Step(ctx, "charge", func(context.Context) (string, error) {
				return fmt.Sprintf("charge #%d", charges.Add(1)), nil // the payment call
			})
			if err != nil {
				return nil, err
			}
			if t.Attempt == 1 {
				return nil, errors.New("mail server down") // retried: the charge is not repeated
			}
			return "emailed " + receipt, nil
		},
	})
	defer stop()

	res, _ := client.Enqueue(ctx, "order", nil, &dtq.EnqueueOpts{MaxAttempts: 3})
	done := wait(client, res.Task.ID, dtq.StatusSucceeded)
	fmt.Println(string(done.Result), "after", attempts.Load(), "attempts")
	// Output:
	// "emailed charge #1" after 2 attempts
}
