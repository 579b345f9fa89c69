package main

import (
	"os"
	"testing"

	"github.com/dtq-dev/dtq/internal/redistest"
)

// TestMain stops the shared redis-server of redistest after the tests.
func TestMain(m *testing.M) { os.Exit(redistest.Main(m)) }
