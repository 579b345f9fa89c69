package outbox

import (
	"context"
	"errors"
	"fmt"
)

// The outbox's names in PostgreSQL. The tables live in the first schema of
// the connection's search_path.
const (
	// Table holds the rows waiting for the relay, one per enqueued task.
	Table = "dtq_outbox"
	// SourceTable holds one row: this outbox's source id, a random UUID
	// made by the first Migrate, which makes the idempotency keys of its
	// rows unique among every outbox that feeds one dtq namespace.
	SourceTable = "dtq_outbox_source"
	// Channel is the LISTEN/NOTIFY channel a committed insert notifies
	// (a statement trigger on Table; a rolled-back insert notifies none).
	Channel = "dtq_outbox"
)

// Advisory lock keys (per database): lockRelay is held by the one active
// relay for as long as its session lasts; lockMigrate serialises Migrate.
const (
	lockRelay   int64 = 0x6474_715f_6f75_7401 // "dtq_out" 1
	lockMigrate int64 = 0x6474_715f_6f75_7402 // "dtq_out" 2
)

// migration creates the outbox's tables, trigger and source id. It is one
// simple-protocol statement list (an implicit transaction) and idempotent:
// run it at every start, from any number of processes at once (the
// transaction-scoped advisory lock serialises them). Where everything
// exists it takes no lock that waits for the application's inserts (the
// trigger is created only when missing).
var migration = fmt.Sprintf(`
SELECT pg_advisory_xact_lock(%[4]d);
CREATE TABLE IF NOT EXISTS %[1]s (
	id           bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	queue        text        NOT NULL,
	task_type    text        NOT NULL,
	payload      bytea       NOT NULL,
	priority     smallint,
	max_attempts integer     NOT NULL DEFAULT 0,
	timeout_ms   bigint      NOT NULL DEFAULT 0,
	run_at       timestamptz,
	task_group   text        NOT NULL DEFAULT '',
	limit_key    text        NOT NULL DEFAULT '',
	order_key    text        NOT NULL DEFAULT '',
	created_at   timestamptz NOT NULL DEFAULT clock_timestamp(),
	failed_at    timestamptz,
	error        text
);
CREATE TABLE IF NOT EXISTS %[2]s (
	one    boolean PRIMARY KEY DEFAULT true CHECK (one),
	source text    NOT NULL
);
INSERT INTO %[2]s (source) VALUES (gen_random_uuid()::text) ON CONFLICT DO NOTHING;
CREATE OR REPLACE FUNCTION %[1]s_notify() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	PERFORM pg_notify('%[3]s', '');
	RETURN NULL;
END
$$;
DO $$
BEGIN
	IF NOT EXISTS (SELECT 1 FROM pg_trigger WHERE tgname = '%[1]s_notify' AND tgrelid = '%[1]s'::regclass) THEN
		CREATE TRIGGER %[1]s_notify AFTER INSERT ON %[1]s FOR EACH STATEMENT EXECUTE FUNCTION %[1]s_notify();
	END IF;
END
$$;
`, Table, SourceTable, Channel, lockMigrate)

// Migrate creates the outbox's tables in db if they are missing (PostgreSQL
// 13 or newer): a *pgx.Conn, a *pgxpool.Pool or a pgx.Tx, or a *sql.DB or
// *sql.Tx through SQL. It is idempotent and safe to run
// from several processes at once; a Relay runs it as it starts. In a
// transaction it takes effect at the commit.
func Migrate(ctx context.Context, db Querier) error {
	if db == nil {
		return errors.New("outbox: Migrate: db must not be nil")
	}
	if _, err := db.Exec(ctx, migration); err != nil {
		return fmt.Errorf("outbox: migrate: %w", err)
	}
	return nil
}
