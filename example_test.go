package dtq_test

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/dtq-dev/dtq"
)

// connect connects a Client to an in-process server (memory://; a program
// passes its Redis URL: redis://host:6379, or a Cluster or Sentinel URL).
func connect() (*dtq.Client, func()) {
	redis, err := dtq.Connect(context.Background(), "memory://")
	if err != nil {
		panic(err)
	}
	client, err := dtq.NewClient(redis, nil)
	if err != nil {
		panic(err)
	}
	return client, redis.Close
}

// start connects a Client and starts a Worker with handlers. The examples
// stop both when they return.
func start(cfg *dtq.WorkerConfig, handlers map[string]dtq.HandlerFunc) (*dtq.Client, func()) {
	ctx := context.Background()
	client, closeRedis := connect()
	worker, err := dtq.NewWorker(client, cfg)
	if err != nil {
		panic(err)
	}
	for typ, h := range handlers {
		worker.Handle(typ, h)
	}
	if err := worker.Start(ctx); err != nil {
		panic(err)
	}
	return client, func() {
		worker.Stop(ctx)
		closeRedis()
	}
}

// wait polls task id until it reaches status (the examples' way to wait; a
// program would read it later, or follow Client.Events).
func wait(c *dtq.Client, id string, status dtq.Status) *dtq.Task {
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(2 * time.Millisecond) {
		if t, err := c.Get(context.Background(), id); err == nil && t.Status == status {
			return t
		}
	}
	panic("task " + id + " did not reach " + string(status))
}

// Submit a task and run it with a registered handler: the handler decodes
// the JSON payload, and what it returns is the task's result.
func Example() {
	ctx := context.Background()
	type email struct {
		To string `json:"to"`
	}
	client, stop := start(nil, map[string]dtq.HandlerFunc{
		"email:send": func(ctx context.Context, t *dtq.Task) (any, error) {
			var e email
			if err := json.Unmarshal(t.Payload, &e); err != nil {
				return nil, dtq.Permanent(err) // a payload it cannot read: no retry
			}
			return map[string]string{"sent_to": e.To}, nil
		},
	})
	defer stop()

	res, err := client.Enqueue(ctx, "email:send", email{To: "ada@example.com"}, nil)
	if err != nil {
		panic(err)
	}
	done := wait(client, res.Task.ID, dtq.StatusSucceeded)
	fmt.Println(done.Status, done.Attempt, string(done.Result))
	// Output: SUCCEEDED 1 {"sent_to":"ada@example.com"}
}

// A delayed task is SCHEDULED until its due time (on the Redis clock), then
// QUEUED and run.
func ExampleEnqueueOpts_delay() {
	ctx := context.Background()
	client, stop := start(nil, map[string]dtq.HandlerFunc{
		"report": func(context.Context, *dtq.Task) (any, error) { return "ready", nil },
	})
	defer stop()

	res, _ := client.Enqueue(ctx, "report", nil, &dtq.EnqueueOpts{Delay: 200 * time.Millisecond})
	fmt.Println(res.Task.Status)
	done := wait(client, res.Task.ID, dtq.StatusSucceeded)
	fmt.Println(done.Status, done.StartedAt.Sub(done.CreatedAt) >= 200*time.Millisecond)
	// Output:
	// SCHEDULED
	// SUCCEEDED true
}

// Among ready tasks of a queue, a higher priority runs first (9 first, 5 by
// default).
func ExampleEnqueueOpts_priority() {
	ctx := context.Background()
	client, stop := connect()
	defer stop()
	client.Enqueue(ctx, "job", "low", &dtq.EnqueueOpts{Priority: dtq.Ptr(1)})
	client.Enqueue(ctx, "job", "normal", nil)
	client.Enqueue(ctx, "job", "urgent", &dtq.EnqueueOpts{Priority: dtq.Ptr(9)})

	ran := make(chan string, 3)
	worker, _ := dtq.NewWorker(client, &dtq.WorkerConfig{Concurrency: 1})
	worker.Handle("job", func(_ context.Context, t *dtq.Task) (any, error) { ran <- string(t.Payload); return nil, nil })
	worker.Start(ctx)
	defer worker.Stop(ctx)
	fmt.Println(<-ran, <-ran, <-ran)
	// Output: "urgent" "normal" "low"
}

// An idempotency key makes a submission safe to repeat: the second
// Enqueue returns the first task and creates nothing.
func ExampleEnqueueOpts_idempotencyKey() {
	ctx := context.Background()
	client, stop := connect()
	defer stop()

	opts := &dtq.EnqueueOpts{IdempotencyKey: "order-1234-charge"}
	first, _ := client.Enqueue(ctx, "charge", map[string]int{"cents": 999}, opts)
	again, _ := client.Enqueue(ctx, "charge", map[string]int{"cents": 999}, opts)
	fmt.Println(first.Task.ID == again.Task.ID, first.Duplicate, again.Duplicate)

	// The same key with another request is a conflict, not a silent replay.
	_, err := client.Enqueue(ctx, "charge", map[string]int{"cents": 1}, opts)
	fmt.Println(err != nil)
	// Output:
	// true false true
	// true
}

// A unique task is not submitted again while another with the same key is
// queued, scheduled or running.
func ExampleUniqueOpts() {
	ctx := context.Background()
	client, stop := connect() // no worker: the tasks stay queued
	defer stop()

	unique := &dtq.EnqueueOpts{Unique: &dtq.UniqueOpts{Key: "customer-42"}}
	a, _ := client.Enqueue(ctx, "reindex", nil, unique)
	b, _ := client.Enqueue(ctx, "reindex", nil, unique)
	c, _ := client.Enqueue(ctx, "reindex", nil, &dtq.EnqueueOpts{Unique: &dtq.UniqueOpts{Key: "customer-7"}})
	fmt.Println(a.Duplicate, b.Duplicate, b.Task.ID == a.Task.ID, c.Duplicate)
	// Output: false true true false
}

// Submissions of one debounce key within the period become one task, which
// runs once the key has been quiet for the period, with the last payload.
func ExampleDebounceOpts() {
	ctx := context.Background()
	ran := make(chan string, 1)
	client, stop := start(nil, map[string]dtq.HandlerFunc{
		"reindex": func(_ context.Context, t *dtq.Task) (any, error) {
			ran <- string(t.Payload)
			return nil, nil
		},
	})
	defer stop()

	debounce := &dtq.EnqueueOpts{Debounce: &dtq.DebounceOpts{Key: "doc-7", Period: time.Second}}
	a, _ := client.Enqueue(ctx, "reindex", map[string]int{"edit": 1}, debounce)
	b, _ := client.Enqueue(ctx, "reindex", map[string]int{"edit": 2}, debounce)
	fmt.Println(a.Debounced, b.Debounced, b.Task.ID == a.Task.ID, <-ran)
	// Output: false true true {"edit":2}
}
