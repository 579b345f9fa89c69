// Package outbox enqueues dtq tasks in the same PostgreSQL transaction as the
// application's own writes (the transactional outbox), on
// github.com/jackc/pgx/v5.
//
// Enqueue inserts a row into the outbox table inside the caller's
// transaction; a Relay moves committed rows into dtq, each submitted with
// an idempotency key made of the row's id, and deletes what dtq accepted.
// So a committed enqueue becomes exactly one task and a rolled-back one
// none, whatever crashes in between (within dtq's idempotency window):
//
//	outbox.Migrate(ctx, pool) // once, or let the relay do it
//
//	tx, _ := pool.Begin(ctx)
//	tx.Exec(ctx, "INSERT INTO orders …")
//	outbox.Enqueue(ctx, tx, "email", map[string]any{"order": 123}, &dtq.EnqueueOpts{Queue: "mail"})
//	tx.Commit(ctx)
//
//	relay, _ := outbox.NewRelay(client, "postgres://…", nil) // or `dtq relay --outbox postgres://…`
//	relay.Start(ctx)
//	defer relay.Stop(ctx)
//
// docs/outbox.md states what is guaranteed and what is not.
//
// # Caveats
//
//   - The handler still runs at least once: exactly once is the task's
//     creation, not its execution.
//   - A row relayed, its relay killed before the delete and relayed again
//     after dtq forgot its key (Config.IdempotencyWindow, 24 h by default)
//     would be a second task.
//   - Order: rows are relayed in id order, which is insert order, not
//     commit order: a transaction that commits after a later one may see
//     its tasks submitted after that one's. A transaction that committed
//     before another began its inserts is always relayed first.
//   - One relay is active per database (a session advisory lock); the
//     others are standbys.
package outbox
