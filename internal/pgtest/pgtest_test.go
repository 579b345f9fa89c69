package pgtest_test

import (
	"context"
	"os"
	"testing"

	"github.com/dtq-dev/dtq/internal/pgtest"
	"github.com/jackc/pgx/v5"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

// The harness starts its own server (never the machine's on 5432), gives
// each test a database of its own, and stops the server by pid.
func TestStartAndDatabase(t *testing.T) {
	t.Parallel()
	s := pgtest.Shared(t)
	if s.Port == 5432 {
		t.Fatal("the harness must not use port 5432")
	}
	ctx := context.Background()
	c, err := pgx.Connect(ctx, pgtest.Database(t, s))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(ctx)
	var dir string
	if err := c.QueryRow(ctx, "SHOW data_directory").Scan(&dir); err != nil {
		t.Fatal(err)
	}
	if want := s.Dir + "/data"; dir != want {
		t.Fatalf("data_directory %q, want %q", dir, want)
	}
}

func TestStopByPid(t *testing.T) {
	t.Parallel()
	s := pgtest.Start(t)
	if err := s.Stop(); err != nil {
		t.Fatal(err)
	}
	if s.PID() != 0 {
		t.Fatal("server still running after Stop")
	}
	if _, err := pgx.Connect(context.Background(), s.URL("postgres")); err == nil {
		t.Fatal("connected to a stopped server")
	}
}
