// Package dtq is a distributed task queue on Redis Streams: JSON tasks run
// by registered Go handlers until they succeed, fail for good into a
// dead-letter stream, or are cancelled.
//
//	client, err := dtq.NewClient(redis, nil) // redis: dtq.Connect(ctx, url)
//	res, err := client.Enqueue(ctx, "email", payload, &dtq.EnqueueOpts{Priority: dtq.Ptr(9)})
//
//	w, err := dtq.NewWorker(client, &dtq.WorkerConfig{Concurrency: 50})
//	w.Handle("email", func(ctx context.Context, t *dtq.Task) (any, error) {
//		return nil, send(ctx, t.Payload) // an error retries with backoff
//	})
//	err = w.Start(ctx)
//	defer w.Stop(ctx)
//
// Tasks have priorities 0-9 (9 first) within a queue, retries with
// exponential backoff and full jitter, idempotent submission, delays and
// run-at times (on the Redis clock), cancellation of queued and running
// tasks, results, and a history of executions. Every transition is one Lua
// script, fenced by the execution that owns the task. docs/CONTRACT.md
// states the behaviour; docs/engine.md the design and the Redis keys.
//
// # Caveats
//
//   - Delivery is at least once: a worker can run a handler, die before
//     recording the outcome, and another worker runs the task again after
//     the visibility timeout. Handlers must be idempotent; see
//     IdempotentOperation.
//   - Events (Client.Events) are fire-and-forget pub/sub: a subscriber that
//     is not connected misses them.
//   - Finished tasks expire after Config.Retention; plan Redis memory for
//     your throughput times the retention.
//   - All workers of a queue should use the same VisibilityTimeout.
package dtq
