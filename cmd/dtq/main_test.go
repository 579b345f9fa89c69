package main

import (
	"os"
	"testing"

	"github.com/dtq-dev/dtq/internal/pgtest"
	"github.com/dtq-dev/dtq/internal/redistest"
)

// TestMain stops the shared redis-server of redistest and the shared
// PostgreSQL of pgtest after the tests.
func TestMain(m *testing.M) {
	code := redistest.Main(m)
	pgtest.StopShared()
	os.Exit(code)
}
