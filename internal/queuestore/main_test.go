package queuestore_test

import (
	"os"
	"testing"

	"github.com/dtq-dev/dtq/internal/redistest"
)

func TestMain(m *testing.M) { os.Exit(redistest.Main(m)) }
