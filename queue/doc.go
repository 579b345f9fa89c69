// Package queue is a keyed, at-least-once queue of opaque messages over
// prioritised FIFO topics, on Redis Streams.
//
// It is a delivery layer for runtimes that own their own execution and
// results: publishers Put bytes to topics; subscriptions compete for them,
// hold each until they settle it (Ack, Release, Nak, Term), and get it back
// after a crash once a visibility timeout passes. It never imports the task
// engine.
//
//	q, err := queue.New(client, "orders", &queue.Config{AckTombstoneTTL: time.Hour})
//	ok, err := q.Put(ctx, "scheduled", data, &queue.PutOpts{Key: "order:123:charge"})
//
//	sub, err := q.Subscribe(ctx, map[string]int{"retry": 0, "scheduled": 1}, nil)
//	defer sub.Close(ctx)
//	err = sub.Consume(ctx, func(ctx context.Context, m *queue.Message) error {
//		return handle(m.Data) // nil: Ack; error: Nak (redelivered)
//	})
//
// # Guarantees
//
//   - At least once: a message stays in Redis until a holder acknowledges it.
//   - Keys deduplicate across every topic of the queue while a message is
//     live, and for Config.AckTombstoneTTL after it is acknowledged.
//   - Every settlement is fenced by the delivery it belongs to: a holder
//     whose message was reclaimed gets ErrNotOwner and changes nothing.
//   - A subscription renews everything it holds and holds at most
//     MaxInFlight messages; Close hands them back at once.
//   - Every loop recovers by itself from dropped connections, Redis
//     restarts and lost consumer groups, with backoff and jitter.
//
// docs/queue.md describes the key layout and every Lua script; docs/CONTRACT.md
// is the normative summary.
//
// # Caveats
//
//   - Handlers must be idempotent: a process can do its work and die before
//     its Ack reaches Redis, and the message is delivered again.
//   - Accepted and acknowledged mean written to Redis's memory: what survives
//     a Redis crash depends on its persistence (AOF always / everysec).
//   - All subscriptions of a group should use the same VisibilityTimeout.
//   - One logical consumer group per queue: acknowledged entries are deleted.
//   - A message published without a key is not deduplicated.
package queue
