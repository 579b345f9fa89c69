package pgtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

var shared struct {
	once sync.Once
	srv  *Server
	err  error
}

// Main runs the package's tests and then stops the shared server, if one was
// started. Use it from TestMain: os.Exit(pgtest.Main(m)).
func Main(m *testing.M) int {
	code := m.Run()
	StopShared()
	return code
}

// StopShared stops the shared server, if one was started: for a TestMain
// that runs its tests through another harness's Main (redistest.Main).
func StopShared() {
	if shared.srv != nil {
		if err := shared.srv.Close(); err != nil {
			fmt.Fprintln(os.Stderr, "pgtest: stopping shared server:", err)
		}
	}
}

// Shared returns the test binary's shared PostgreSQL server, starting it on
// first use. Tests sharing it isolate themselves with Database; a test that
// stops or kills a server starts its own with Start.
func Shared(t testing.TB) *Server {
	t.Helper()
	shared.once.Do(func() { shared.srv, shared.err = StartServer() })
	if shared.err != nil {
		t.Fatalf("start shared postgres: %v", shared.err)
	}
	return shared.srv
}

// Start starts a dedicated PostgreSQL server for this test and stops it by
// pid at cleanup.
func Start(t testing.TB) *Server {
	t.Helper()
	s, err := StartServer()
	if err != nil {
		t.Fatalf("start postgres: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// Database creates a database of its own for this test on s and returns its
// URL; the database is dropped at cleanup.
func Database(t testing.TB, s *Server) string {
	t.Helper()
	var b [6]byte
	if _, err := rand.Read(b[:]); err != nil {
		t.Fatal(err)
	}
	name := "t" + hex.EncodeToString(b[:])
	admin := func(sql string) error {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		c, err := pgx.Connect(ctx, s.URL("postgres"))
		if err != nil {
			return err
		}
		defer c.Close(ctx)
		_, err = c.Exec(ctx, sql)
		return err
	}
	if err := admin("CREATE DATABASE " + name); err != nil {
		t.Fatalf("create database: %v", err)
	}
	t.Cleanup(func() {
		if s.PID() != 0 {
			_ = admin("DROP DATABASE IF EXISTS " + name + " WITH (FORCE)")
		}
	})
	return s.URL(name)
}
