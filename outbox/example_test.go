package outbox_test

import (
	"context"
	"log"

	"github.com/dtq-dev/dtq"
	"github.com/dtq-dev/dtq/outbox"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Enqueue a task in the transaction that writes the order, and relay the
// outbox to dtq. (Not run: it needs a PostgreSQL and a Redis; the package's
// tests start their own.)
func Example() {
	ctx := context.Background()
	pool, err := pgxpool.New(ctx, "postgres://app@localhost/shop")
	if err != nil {
		log.Fatal(err)
	}
	if err := outbox.Migrate(ctx, pool); err != nil {
		log.Fatal(err)
	}

	tx, err := pool.Begin(ctx)
	if err != nil {
		log.Fatal(err)
	}
	defer tx.Rollback(ctx)
	if _, err := tx.Exec(ctx, "INSERT INTO orders (id, total) VALUES ($1, $2)", 123, 4200); err != nil {
		log.Fatal(err)
	}
	if _, err := outbox.Enqueue(ctx, tx, "email", map[string]any{"order": 123}, &dtq.EnqueueOpts{Queue: "mail"}); err != nil {
		log.Fatal(err)
	}
	if err := tx.Commit(ctx); err != nil { // the task exists once this commits, and only then
		log.Fatal(err)
	}

	// In one process or several (one is active): dtq relay --outbox postgres://…
	redis, err := dtq.Connect(ctx, "redis://localhost:6379")
	if err != nil {
		log.Fatal(err)
	}
	client, err := dtq.NewClient(redis, nil)
	if err != nil {
		log.Fatal(err)
	}
	relay, err := outbox.NewRelay(client, "postgres://app@localhost/shop", nil)
	if err != nil {
		log.Fatal(err)
	}
	if err := relay.Start(ctx); err != nil {
		log.Fatal(err)
	}
	defer relay.Stop(ctx)
}
