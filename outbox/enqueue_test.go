package outbox_test

import (
	"context"
	"database/sql"
	"errors"
	"testing"
	"time"

	"github.com/dtq-dev/dtq"
	"github.com/dtq-dev/dtq/outbox"
	_ "github.com/jackc/pgx/v5/stdlib"
)

// A committed enqueue becomes one task; a rolled-back one none.
func TestCommitOneTaskRollbackNone(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "")
	r := e.startRelay(nil, nil)
	if err := e.enqueueTx([]int{1, 2}, false); err != nil {
		t.Fatal(err)
	}
	if err := e.enqueueTx([]int{3}, true); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the committed rows to be relayed", func() bool { return e.waiting() == 0 })
	checkOnce(t, "tasks", e.tasks(), map[int]bool{1: true, 2: true})
	s, err := r.Stats(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if !s.Active || s.Relayed != 2 || s.Waiting != 0 {
		t.Fatalf("stats %+v, want active, 2 relayed, none waiting", s)
	}
}

// The options of a row reach its task; the task's idempotency key is the
// row's, so a second submission of the row creates nothing.
func TestRowOptionsAndKey(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "")
	ctx := context.Background()
	runAt := time.Now().Add(time.Hour).Truncate(time.Millisecond)
	tx, err := e.pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	id, err := outbox.Enqueue(ctx, tx, "work", item{N: 7}, &dtq.EnqueueOpts{
		Queue: "outbox", Priority: dtq.Ptr(0), MaxAttempts: 3, Timeout: 90 * time.Second,
		RunAt: runAt, Group: "tenant-1", LimitKey: "acct-1",
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	e.startRelay(nil, nil)
	waitFor(t, "the row to be relayed", func() bool { return e.waiting() == 0 })
	page, err := e.client.List(ctx, dtq.ListOpts{Queue: "outbox"})
	if err != nil || len(page.Tasks) != 1 {
		t.Fatalf("tasks %v, %v; want one", page, err)
	}
	task, err := e.client.Get(ctx, page.Tasks[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	if task.Priority != 0 || task.MaxAttempts != 3 || task.Timeout != 90*time.Second || task.Status != dtq.StatusScheduled ||
		task.Group != "tenant-1" || task.LimitKey != "acct-1" || task.ScheduledAt == nil || !task.ScheduledAt.Equal(runAt) {
		t.Fatalf("task %+v: options not carried over", task)
	}
	var source string
	if err := e.pool.QueryRow(ctx, "SELECT source FROM "+outbox.SourceTable).Scan(&source); err != nil {
		t.Fatal(err)
	}
	again, err := e.client.Enqueue(ctx, "work", []byte(`{"n":7}`), &dtq.EnqueueOpts{
		Queue: "outbox", Priority: dtq.Ptr(0), MaxAttempts: 3, Timeout: 90 * time.Second,
		RunAt: runAt, Group: "tenant-1", LimitKey: "acct-1", IdempotencyKey: outbox.IdempotencyKey(source, id),
	})
	if err != nil || !again.Duplicate || again.Task.ID != task.ID {
		t.Fatalf("a second submission of the row: %+v, %v; want the same task as a duplicate", again, err)
	}
}

// Bad input is refused before anything is written, naming the field.
func TestEnqueueRefusesBadInput(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "")
	ctx := context.Background()
	cases := []struct {
		typ     string
		payload any
		opts    *dtq.EnqueueOpts
		field   string
	}{
		{"", nil, nil, "task_type"},
		{"work", nil, &dtq.EnqueueOpts{Queue: "bad queue"}, "queue"},
		{"work", []byte("{not json"), nil, "payload"},
		{"work", func() {}, nil, "payload"},
		{"work", nil, &dtq.EnqueueOpts{Priority: dtq.Ptr(10)}, "priority"},
		{"work", nil, &dtq.EnqueueOpts{IdempotencyKey: "k"}, "idempotency_key"},
		{"work", nil, &dtq.EnqueueOpts{Unique: &dtq.UniqueOpts{}}, "unique"},
		{"work", nil, &dtq.EnqueueOpts{Delay: time.Second, RunAt: time.Now()}, "delay"},
		{"work", nil, &dtq.EnqueueOpts{OrderKey: "a b"}, "order_key"},
		{"work", nil, &dtq.EnqueueOpts{MaxAttempts: -1}, "max_attempts"},
	}
	for _, c := range cases {
		_, err := outbox.Enqueue(ctx, e.pool, c.typ, c.payload, c.opts)
		var ve *dtq.ValidationError
		if !errors.As(err, &ve) || ve.Field != c.field {
			t.Errorf("Enqueue(%q, %v, %+v) = %v; want a ValidationError of %s", c.typ, c.payload, c.opts, err, c.field)
		}
	}
	if n := e.waiting(); n != 0 {
		t.Fatalf("%d rows written by refused enqueues", n)
	}
}

// Enqueue takes a database/sql transaction through outbox.SQL, and Migrate
// can run again (from several processes at once) without harm.
func TestSQLTxAndMigrateAgain(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "")
	ctx := context.Background()
	db, err := sql.Open("pgx", e.url)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	errs := make(chan error, 4)
	for range 4 {
		go func() { errs <- outbox.Migrate(ctx, outbox.SQL(db)) }()
	}
	for range 4 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	for _, commit := range []bool{true, false} {
		tx, err := db.BeginTx(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := outbox.Enqueue(ctx, outbox.SQL(tx), "work", item{N: map[bool]int{true: 1, false: 2}[commit]}, &dtq.EnqueueOpts{Queue: "outbox"}); err != nil {
			t.Fatal(err)
		}
		if commit {
			err = tx.Commit()
		} else {
			err = tx.Rollback()
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	e.startRelay(nil, nil)
	waitFor(t, "the committed row to be relayed", func() bool { return e.waiting() == 0 })
	checkOnce(t, "tasks", e.tasks(), map[int]bool{1: true})
}
