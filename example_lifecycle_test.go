package dtq_test

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/dtq-dev/dtq"
)

// A handler's error retries the task with backoff until MaxAttempts;
// RetryAfter sets the wait itself (the remote said when). The history
// lists every execution.
func ExampleRetryAfter() {
	ctx := context.Background()
	var calls atomic.Int32
	client, stop := start(&dtq.WorkerConfig{BackoffBase: 10 * time.Millisecond}, map[string]dtq.HandlerFunc{
		"fetch": func(context.Context, *dtq.Task) (any, error) {
			switch calls.Add(1) {
			case 1:
				return nil, errors.New("connection reset") // retried after the backoff
			case 2:
				return nil, dtq.RetryAfter(50*time.Millisecond, errors.New("429 too many requests"))
			}
			return "fetched", nil
		},
	})
	defer stop()

	res, _ := client.Enqueue(ctx, "fetch", nil, &dtq.EnqueueOpts{MaxAttempts: 5})
	done := wait(client, res.Task.ID, dtq.StatusSucceeded)
	for _, run := range done.History {
		fmt.Println(run.Run, run.Outcome, run.Error)
	}
	// Output:
	// 1 retried connection reset
	// 2 retried 429 too many requests
	// 3 succeeded
}

// A task that fails for good (Permanent, or out of attempts) is DEAD in
// its queue's dead-letter stream, where it can be read and requeued.
func ExampleAdmin_Requeue() {
	ctx := context.Background()
	var fixed atomic.Bool
	client, stop := start(nil, map[string]dtq.HandlerFunc{
		"import": func(context.Context, *dtq.Task) (any, error) {
			if !fixed.Load() {
				return nil, dtq.Permanent(errors.New("bad column 3"))
			}
			return "imported", nil
		},
	})
	defer stop()

	res, _ := client.Enqueue(ctx, "import", nil, nil)
	wait(client, res.Task.ID, dtq.StatusDead)
	letters, _, _ := dtq.NewAdmin(client).ListDead(ctx, dtq.DefaultQueue, 10, "")
	fmt.Println(len(letters), letters[0].Task.LastError)

	fixed.Store(true) // the bug is fixed: run it again
	dtq.NewAdmin(client).Requeue(ctx, res.Task.ID)
	done := wait(client, res.Task.ID, dtq.StatusSucceeded)
	fmt.Println(done.Status, string(done.Result))
	// Output:
	// 1 bad column 3
	// SUCCEEDED "imported"
}

// Cancel ends a task that has not finished: a waiting one at once, a
// running one through its handler's context (its cause is ErrCancelled).
func ExampleClient_Cancel() {
	ctx := context.Background()
	started := make(chan struct{})
	client, stop := start(nil, map[string]dtq.HandlerFunc{
		"export": func(ctx context.Context, _ *dtq.Task) (any, error) {
			close(started)
			<-ctx.Done() // a long job that watches its context
			return nil, context.Cause(ctx)
		},
	})
	defer stop()

	later, _ := client.Enqueue(ctx, "export", nil, &dtq.EnqueueOpts{Delay: time.Hour})
	t, _ := client.Cancel(ctx, later.Task.ID)
	fmt.Println(t.Status)

	running, _ := client.Enqueue(ctx, "export", nil, nil)
	<-started
	client.Cancel(ctx, running.Task.ID)
	done := wait(client, running.Task.ID, dtq.StatusCancelled)
	fmt.Println(done.Status, done.LastError)
	// Output:
	// CANCELLED
	// CANCELLED cancelled
}

// A schedule creates a task on every tick of its cron expression; one
// worker of the queue fires it, however many run.
func ExampleAdmin_UpsertSchedule() {
	ctx := context.Background()
	client, stop := start(nil, map[string]dtq.HandlerFunc{
		"cleanup": func(context.Context, *dtq.Task) (any, error) { return "swept", nil },
	})
	defer stop()

	s, err := dtq.NewAdmin(client).UpsertSchedule(ctx, dtq.Schedule{Name: "sweep", Cron: "@every 1s", TaskType: "cleanup"})
	if err != nil {
		panic(err)
	}
	fmt.Println(s.Name, s.Queue, s.NextRun != nil)
	for {
		if info, _ := dtq.NewAdmin(client).GetSchedule(ctx, dtq.DefaultQueue, "sweep"); info.LastTaskID != "" {
			done := wait(client, info.LastTaskID, dtq.StatusSucceeded)
			fmt.Println(done.Schedule, string(done.Result))
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	dtq.NewAdmin(client).DeleteSchedule(ctx, dtq.DefaultQueue, "sweep")
	// Output:
	// sweep default true
	// sweep "swept"
}

// DeleteQueue refuses a queue that still holds work unless forced, and
// then deletes everything of it.
func ExampleAdmin_DeleteQueue() {
	ctx := context.Background()
	client, stop := start(&dtq.WorkerConfig{Queues: []string{"imports"}}, nil)
	defer stop()
	client.Enqueue(ctx, "import", nil, &dtq.EnqueueOpts{Queue: "old", Delay: time.Hour})

	_, err := dtq.NewAdmin(client).DeleteQueue(ctx, "old", nil)
	fmt.Println(errors.Is(err, dtq.ErrQueueNotEmpty))
	gone, _ := dtq.NewAdmin(client).DeleteQueue(ctx, "old", &dtq.DeleteQueueOpts{Force: true})
	fmt.Println(gone.Scheduled)
	queues, _ := dtq.NewAdmin(client).Queues(ctx)
	for _, q := range queues {
		fmt.Println(q.Name) // the worker's queue: a worker reading a queue makes it
	}
	// Output:
	// true
	// 1
	// imports
}

// finishedCounter is a metrics Observer: it embeds NopObserver and
// implements only the call it needs.
type finishedCounter struct {
	dtq.NopObserver
	succeeded atomic.Int64
}

func (f *finishedCounter) TaskFinished(_, _ string, outcome dtq.Outcome, _ time.Duration) {
	if outcome == dtq.OutcomeSucceeded {
		f.succeeded.Add(1)
	}
}

// An Observer receives the task events of a Client and its Workers, for
// metrics; embed NopObserver for the methods it does not need.
func ExampleNopObserver() {
	ctx := context.Background()
	redis, _ := dtq.Connect(ctx, "memory://")
	defer redis.Close()
	counter := &finishedCounter{}
	client, _ := dtq.NewClient(redis, &dtq.Config{Observer: counter})
	worker, _ := dtq.NewWorker(client, nil)
	worker.Handle("ping", func(context.Context, *dtq.Task) (any, error) { return "pong", nil })
	worker.Start(ctx)
	defer worker.Stop(ctx)

	for range 3 {
		res, _ := client.Enqueue(ctx, "ping", nil, nil)
		wait(client, res.Task.ID, dtq.StatusSucceeded)
	}
	// The worker reports an outcome after recording it: wait for the third.
	for deadline := time.Now().Add(5 * time.Second); counter.succeeded.Load() < 3 && time.Now().Before(deadline); {
		time.Sleep(time.Millisecond)
	}
	fmt.Println(counter.succeeded.Load())
	// Output: 3
}
