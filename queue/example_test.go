package queue_test

import (
	"context"
	"fmt"
	"time"

	"github.com/dtq-dev/dtq/queue"
)

// Publish keyed messages to two topics and receive them, the higher
// priority topic first; a duplicate key is refused.
func Example() {
	ctx := context.Background()
	// memory:// is an in-process server for trying; redis://host:6379 (or
	// a Cluster or Sentinel URL) for real use.
	client, err := queue.Connect(ctx, "memory://")
	if err != nil {
		panic(err)
	}
	defer client.Close()

	q, err := queue.New(client, "orders", nil)
	if err != nil {
		panic(err)
	}
	ok1, _ := q.Put(ctx, "scheduled", []byte("charge 123"), &queue.PutOpts{Key: "order:123"})
	ok2, _ := q.Put(ctx, "scheduled", []byte("charge 123 again"), &queue.PutOpts{Key: "order:123"})
	ok3, _ := q.Put(ctx, "retry", []byte("refund 7"), &queue.PutOpts{Key: "order:7"})
	fmt.Println(ok1, ok2, ok3)

	sub, err := q.Subscribe(ctx, map[string]int{"retry": 0, "scheduled": 1}, nil)
	if err != nil {
		panic(err)
	}
	defer sub.Close(ctx)
	for range 2 {
		rctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		m, err := sub.Receive(rctx)
		cancel()
		if err != nil {
			panic(err)
		}
		fmt.Printf("%s %s %q\n", m.Topic, m.Key, m.Data)
		m.Ack(ctx)
	}
	// Output:
	// true false true
	// retry order:7 "refund 7"
	// scheduled order:123 "charge 123"
}

// Release moves a message atomically to another topic, here a retry lane.
func ExampleMessage_Release() {
	ctx := context.Background()
	client, _ := queue.Connect(ctx, "memory://")
	defer client.Close()
	q, _ := queue.New(client, "jobs", nil)
	q.Put(ctx, "work", []byte("flaky job"), nil)

	sub, _ := q.Subscribe(ctx, map[string]int{"retry": 0, "work": 1}, nil)
	defer sub.Close(ctx)
	m, _ := sub.Receive(ctx)
	m.Release(ctx, "retry", &queue.ReleaseOpts{MaxSize: 100})
	again, _ := sub.Receive(ctx)
	fmt.Println(again.Topic, again.Deliveries)
	again.Ack(ctx)
	// Output: retry 2
}
