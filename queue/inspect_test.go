package queue_test

import (
	"fmt"
	"testing"

	"github.com/dtq-dev/dtq/internal/redisconn"
	"github.com/dtq-dev/dtq/queue"
)

// Topics lists every topic a message was put to — a plain put, a keyed
// one, a delayed one, through another Queue value of the same name — and
// Queues every queue of the namespace with a put, not another namespace's.
func TestTopicsAndQueuesAreListed(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		ctx := t.Context()
		orders := e.queue("orders", nil)
		if ts, err := orders.Topics(ctx); err != nil || len(ts) != 0 {
			t.Fatalf("topics before any put: %v %v", ts, err)
		}
		e.put(orders, "new", "1", nil)
		e.put(orders, "new", "2", nil)
		e.put(orders, "paid", "3", &queue.PutOpts{Key: "k"})
		e.put(e.queue("orders", nil), "late", "4", &queue.PutOpts{Delay: 1e9})
		e.put(e.queue("mail", nil), "out", "5", nil)
		ts, err := orders.Topics(ctx)
		if err != nil || fmt.Sprint(ts) != "[late new paid]" {
			t.Fatalf("orders' topics: %v %v, want [late new paid]", ts, err)
		}
		qs, err := queue.Queues(ctx, redisconn.Wrap(e.Client), &queue.Config{Namespace: e.Namespace})
		if err != nil || fmt.Sprint(qs) != "[mail orders]" {
			t.Fatalf("queues: %v %v, want [mail orders]", qs, err)
		}
		other, err := queue.Queues(ctx, redisconn.Wrap(e.Client), &queue.Config{Namespace: e.Namespace + "-other"})
		if err != nil || len(other) != 0 {
			t.Fatalf("another namespace's queues: %v %v", other, err)
		}
		if _, err := queue.Queues(ctx, nil, nil); err == nil {
			t.Fatal("Queues without a connection: no error")
		}
	})
}
