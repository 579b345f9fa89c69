package outbox

import (
	"context"
	"database/sql"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// Querier is what Enqueue and Migrate need of a transaction or connection.
// pgx.Tx, *pgx.Conn, *pgxpool.Pool, *pgxpool.Conn and *pgxpool.Tx satisfy
// it; a *sql.Tx or *sql.DB (with any PostgreSQL driver) through SQL.
type Querier interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// SQLConn is the part of *sql.Tx, *sql.DB and *sql.Conn that SQL uses.
type SQLConn interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// SQL adapts a database/sql transaction (or database) to a Querier, for
// Enqueue inside a *sql.Tx:
//
//	tx, _ := db.BeginTx(ctx, nil)
//	outbox.Enqueue(ctx, outbox.SQL(tx), "email", payload, nil)
//	tx.Commit()
func SQL(c SQLConn) Querier { return sqlQuerier{c} }

type sqlQuerier struct{ c SQLConn }

func (q sqlQuerier) Exec(ctx context.Context, query string, args ...any) (pgconn.CommandTag, error) {
	_, err := q.c.ExecContext(ctx, query, args...)
	return pgconn.NewCommandTag(""), err
}

func (q sqlQuerier) QueryRow(ctx context.Context, query string, args ...any) pgx.Row {
	return q.c.QueryRowContext(ctx, query, args...)
}
