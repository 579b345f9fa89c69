package outbox

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/dtq-dev/dtq"
	"github.com/dtq-dev/dtq/internal/backoff"
	"github.com/jackc/pgx/v5"
)

// Retry delays of the relay: after a lost session (PostgreSQL), a failed
// submit (Redis) or rows dtq asked to retry later (a full queue).
const (
	retryBase = 100 * time.Millisecond
	retryMax  = 5 * time.Second
)

// pgTimeout bounds each of the relay's statements (not its wait for the
// lock): a server that stopped answering ends the session, which is then
// made again.
const pgTimeout = 30 * time.Second

// run holds sessions until ctx ends: each is a connection that takes the
// lock, listens and relays; a lost one is retried after a backoff.
func (r *Relay) run(ctx context.Context) {
	b := backoff.Backoff{Base: retryBase, Max: retryMax}
	for ctx.Err() == nil {
		err := r.session(ctx, &b)
		r.active.Store(false)
		if ctx.Err() != nil {
			return
		}
		r.errors.Add(1)
		r.log.Warn("outbox relay session ended; reconnecting", "error", err)
		_ = b.Sleep(ctx) // ends early only with ctx
	}
}

// session is one connection to PostgreSQL: it waits for the relay lock
// (held by the session: it is released when the connection ends, however
// the relay dies), listens on Channel and relays until an error or ctx
// ends. Reads, deletes and the lock share the connection, so a relay whose
// session is gone can delete nothing.
func (r *Relay) session(ctx context.Context, b *backoff.Backoff) error {
	conn, err := pgx.ConnectConfig(ctx, r.pgcfg)
	if err != nil {
		return err
	}
	defer conn.Close(context.WithoutCancel(ctx)) //nolint:errcheck // the session is over either way
	var source string
	if err := conn.QueryRow(ctx, "SELECT source FROM "+SourceTable).Scan(&source); err != nil {
		return fmt.Errorf("read the outbox's source id (was Migrate run?): %w", err)
	}
	// Blocks while another relay is active; a standby takes over as soon
	// as the active relay's session ends. It listens only once active: a
	// listener that reads nothing would hold up PostgreSQL's notification
	// queue for every session of the server.
	if _, err := conn.Exec(ctx, "SELECT pg_advisory_lock($1)", lockRelay); err != nil {
		return err
	}
	if _, err := conn.Exec(ctx, "LISTEN "+Channel); err != nil {
		return err
	}
	r.active.Store(true)
	r.log.Info("outbox relay is active")
	b.Reset()
	for {
		// Every notification received so far is for a commit the read
		// below sees: drop them, so that a wait after the read wakes only
		// for a later one.
		drainNotifications(conn)
		n, again, err := r.relayBatch(ctx, conn, source)
		if err != nil {
			return err
		}
		if again {
			// dtq asked for some rows to be retried (a full queue, Redis
			// unreachable): back off, they are read again first.
			if err := b.Sleep(ctx); err != nil {
				return err
			}
			continue
		}
		b.Reset()
		if n == r.cfg.BatchSize {
			continue // more may be waiting
		}
		wait, cancel := context.WithTimeout(ctx, r.cfg.PollInterval)
		_, err = conn.WaitForNotification(wait)
		cancel()
		if err != nil && ctx.Err() != nil {
			return ctx.Err()
		}
		if err != nil && !errors.Is(err, context.DeadlineExceeded) {
			return err
		}
	}
}

// drainNotifications drops the notifications conn has received (pgx keeps
// those that arrive during queries), without reading from the network.
func drainNotifications(conn *pgx.Conn) {
	done, cancel := context.WithCancel(context.Background())
	cancel()
	for {
		if _, err := conn.WaitForNotification(done); err != nil {
			return
		}
	}
}

const (
	selectBatch = `SELECT id, queue, task_type, payload, priority, max_attempts, timeout_ms, run_at,
	task_group, limit_key, order_key
FROM ` + Table + ` WHERE failed_at IS NULL ORDER BY id LIMIT $1`
	deleteRows = `DELETE FROM ` + Table + ` WHERE id = ANY($1)`
	markFailed = `UPDATE ` + Table + ` AS o SET failed_at = clock_timestamp(), error = f.error
FROM unnest($1::bigint[], $2::text[]) AS f(id, error) WHERE o.id = f.id`
)

// row is one outbox row as read by the relay.
type row struct {
	id          int64
	queue, typ  string
	payload     []byte
	priority    *int16
	maxAttempts int32
	timeoutMs   int64
	runAt       *time.Time
	group       string
	limitKey    string
	orderKey    string
}

// relayBatch reads up to BatchSize waiting rows in id order, submits them
// to dtq in one call, deletes the rows dtq accepted and marks failed those
// it refused for good. It returns the rows read, and again when some are
// to be retried after a backoff. A failed submit (Redis unreachable) is
// retried here, with backoff, until it is answered or ctx ends: the rows
// stay in the table meanwhile.
func (r *Relay) relayBatch(ctx context.Context, conn *pgx.Conn, source string) (n int, again bool, err error) {
	rows, err := readBatch(ctx, conn, r.cfg.BatchSize)
	if err != nil || len(rows) == 0 {
		return 0, false, err
	}
	reqs := make([]dtq.EnqueueRequest, len(rows))
	for i, w := range rows {
		reqs[i] = request(w, source)
	}
	b := backoff.Backoff{Base: retryBase, Max: retryMax}
	var res []dtq.EnqueueManyResult
	for {
		res, err = r.client.EnqueueMany(ctx, reqs)
		if err == nil {
			break
		}
		if ctx.Err() != nil {
			return 0, false, ctx.Err()
		}
		r.errors.Add(1)
		r.log.Warn("outbox relay could not submit; retrying", "rows", len(rows), "error", err)
		if err := b.Sleep(ctx); err != nil {
			return 0, false, err
		}
	}
	if r.afterSend != nil {
		r.afterSend()
	}
	var done, failedIDs []int64
	var reasons []string
	for i, x := range res {
		switch {
		case x.Err == nil:
			done = append(done, rows[i].id)
		case refusedForGood(x.Err):
			failedIDs = append(failedIDs, rows[i].id)
			reasons = append(reasons, x.Err.Error())
			r.log.Error("outbox row refused by dtq; marked failed", "id", rows[i].id, "error", x.Err)
		default:
			again = true
			r.log.Warn("outbox row not accepted yet; retrying", "id", rows[i].id, "error", x.Err)
		}
	}
	if err := settle(ctx, conn, done, failedIDs, reasons); err != nil {
		return 0, false, err
	}
	r.relayed.Add(uint64(len(done)))
	r.failed.Add(uint64(len(failedIDs)))
	return len(rows), again, nil
}

func readBatch(ctx context.Context, conn *pgx.Conn, limit int) ([]row, error) {
	ctx, cancel := context.WithTimeout(ctx, pgTimeout)
	defer cancel()
	q, err := conn.Query(ctx, selectBatch, limit)
	if err != nil {
		return nil, err
	}
	var rows []row
	for q.Next() {
		var w row
		if err := q.Scan(&w.id, &w.queue, &w.typ, &w.payload, &w.priority, &w.maxAttempts, &w.timeoutMs,
			&w.runAt, &w.group, &w.limitKey, &w.orderKey); err != nil {
			q.Close()
			return nil, err
		}
		rows = append(rows, w)
	}
	return rows, q.Err()
}

// settle deletes the accepted rows and marks the refused ones, in one
// transaction (one statement, one round trip, when none was refused).
func settle(ctx context.Context, conn *pgx.Conn, done, failedIDs []int64, reasons []string) error {
	ctx, cancel := context.WithTimeout(ctx, pgTimeout)
	defer cancel()
	if len(failedIDs) == 0 {
		if len(done) == 0 {
			return nil
		}
		_, err := conn.Exec(ctx, deleteRows, done)
		return err
	}
	return pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
		if len(done) > 0 {
			if _, err := tx.Exec(ctx, deleteRows, done); err != nil {
				return err
			}
		}
		if len(failedIDs) > 0 {
			if _, err := tx.Exec(ctx, markFailed, failedIDs, reasons); err != nil {
				return err
			}
		}
		return nil
	})
}

// IdempotencyKey is the idempotency key of the task of row id in the
// outbox with source id source (docs/outbox.md).
func IdempotencyKey(source string, id int64) string {
	return "outbox:" + source + ":" + strconv.FormatInt(id, 10)
}

// request is the submission of row w.
func request(w row, source string) dtq.EnqueueRequest {
	o := &dtq.EnqueueOpts{
		Queue:          w.queue,
		MaxAttempts:    int(w.maxAttempts),
		Timeout:        time.Duration(w.timeoutMs) * time.Millisecond,
		Group:          w.group,
		LimitKey:       w.limitKey,
		OrderKey:       w.orderKey,
		IdempotencyKey: IdempotencyKey(source, w.id),
	}
	if w.priority != nil {
		o.Priority = dtq.Ptr(int(*w.priority))
	}
	if w.runAt != nil {
		o.RunAt = *w.runAt
	}
	return dtq.EnqueueRequest{Type: w.typ, Payload: json.RawMessage(w.payload), Opts: o}
}

// refusedForGood reports whether dtq refused a submission for a reason a
// retry cannot change: a bad row, a payload over the limit, or its key
// taken by another request.
func refusedForGood(err error) bool {
	var tooLarge *dtq.TooLargeError
	var conflict *dtq.IdempotencyConflictError
	return errors.Is(err, dtq.ErrInvalid) || errors.As(err, &tooLarge) || errors.As(err, &conflict)
}
