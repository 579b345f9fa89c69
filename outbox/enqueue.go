package outbox

import (
	"context"
	"fmt"
	"time"

	"github.com/dtq-dev/dtq"
)

const insertRow = `INSERT INTO ` + Table + ` (queue, task_type, payload, priority, max_attempts, timeout_ms,
	run_at, task_group, limit_key, order_key)
VALUES ($1, $2, $3, $4, $5, $6,
	CASE WHEN $7::bigint > 0 THEN clock_timestamp() + $7::bigint * interval '1 millisecond' ELSE $8::timestamptz END,
	$9, $10, $11)
RETURNING id`

// Enqueue adds a task of taskType with payload to the outbox inside tx (the
// caller's transaction: pgx.Tx, or a *sql.Tx through SQL) and returns its
// row id. The task is created in dtq by a Relay once tx commits, exactly
// once (docs/outbox.md); if tx rolls back, no task is created. It is one
// INSERT: it does not talk to Redis.
//
// payload is marshalled to JSON as by dtq.Client.Enqueue (a
// json.RawMessage or []byte must already be JSON). opts takes the fields of
// dtq.EnqueueOpts that a relayed task can have: Queue, Priority, Delay
// (counted from now, on PostgreSQL's clock) or RunAt, MaxAttempts,
// Timeout, Group, LimitKey and OrderKey. IdempotencyKey, Unique and
// Debounce are refused: the row's id is the task's idempotency key.
//
// Errors: a *dtq.ValidationError for bad input (checked here, before the
// row is written), or the database's error.
func Enqueue(ctx context.Context, tx Querier, taskType string, payload any, opts *dtq.EnqueueOpts) (int64, error) {
	if tx == nil {
		return 0, invalid("tx", "must not be nil")
	}
	var o dtq.EnqueueOpts
	if opts != nil {
		o = *opts
	}
	data, err := check(taskType, payload, &o)
	if err != nil {
		return 0, err
	}
	var prio *int16
	if o.Priority != nil {
		p := int16(*o.Priority)
		prio = &p
	}
	var runAt *time.Time
	if !o.RunAt.IsZero() {
		runAt = &o.RunAt
	}
	delay, timeout := millis(o.Delay), millis(o.Timeout)
	var id int64
	err = tx.QueryRow(ctx, insertRow, o.Queue, taskType, data, prio, o.MaxAttempts, timeout,
		delay, runAt, o.Group, o.LimitKey, o.OrderKey).Scan(&id)
	if err != nil {
		return 0, fmt.Errorf("outbox: enqueue: %w", err)
	}
	return id, nil
}

// millis is d in whole milliseconds, rounded up (as dtq rounds delays).
func millis(d time.Duration) int64 {
	return int64((d + time.Millisecond - 1) / time.Millisecond)
}

// check validates a submission by dtq's rules (those that do not depend
// on a client's Config: dtq.CheckSubmission) and the outbox's own, and
// returns its payload as JSON. It fills the default queue.
func check(taskType string, payload any, o *dtq.EnqueueOpts) ([]byte, error) {
	if o.Queue == "" {
		o.Queue = dtq.DefaultQueue
	}
	switch {
	case o.IdempotencyKey != "":
		return nil, invalid("idempotency_key", "is not taken by the outbox: the row's id is the task's idempotency key")
	case o.Unique != nil:
		return nil, invalid("unique", "is not taken by the outbox (a relayed task is idempotent on its row's id)")
	case o.Debounce != nil:
		return nil, invalid("debounce", "is not taken by the outbox (a relayed task is idempotent on its row's id)")
	}
	return dtq.CheckSubmission(taskType, payload, o)
}

func invalid(field, format string, args ...any) error {
	return &dtq.ValidationError{Field: field, Problem: fmt.Sprintf(format, args...)}
}
