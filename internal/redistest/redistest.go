package redistest

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"sync"
	"testing"

	"github.com/dtq-dev/dtq/internal/embedded"
	"github.com/redis/rueidis"
)

var shared struct {
	once sync.Once
	srv  *Server
	err  error
}

// Main runs the package's tests and then stops the shared server, if one was
// started. Use it from TestMain: os.Exit(redistest.Main(m)).
func Main(m *testing.M) int {
	code := m.Run()
	if shared.srv != nil {
		if err := shared.srv.Close(); err != nil {
			fmt.Fprintln(os.Stderr, "redistest: stopping shared server:", err)
		}
	}
	return code
}

// Shared returns the test binary's shared redis-server, starting it on first
// use. Tests sharing it must isolate themselves with Namespace; tests that
// stop, pause or flush a server start their own with Start.
func Shared(t testing.TB) *Server {
	t.Helper()
	shared.once.Do(func() { shared.srv, shared.err = StartServer(nil) })
	if shared.err != nil {
		t.Fatalf("start shared redis-server: %v", shared.err)
	}
	return shared.srv
}

// Start starts a dedicated redis-server for this test and stops it by pid at
// cleanup.
func Start(t testing.TB, opts *Options) *Server {
	t.Helper()
	s, err := StartServer(opts)
	if err != nil {
		t.Fatalf("start redis-server: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// Client connects a new client to s and closes it at cleanup.
func Client(t testing.TB, s *Server) rueidis.Client {
	t.Helper()
	c, err := rueidis.NewClient(rueidis.ClientOption{
		InitAddress:  []string{s.Addr},
		DisableCache: true,
	})
	if err != nil {
		t.Fatalf("connect to %s: %v", s.Addr, err)
	}
	t.Cleanup(c.Close)
	return c
}

// Namespace returns a key namespace unique to this test.
func Namespace(t testing.TB) string {
	t.Helper()
	var b [6]byte
	if _, err := rand.Read(b[:]); err != nil {
		t.Fatal(err)
	}
	return "t" + hex.EncodeToString(b[:])
}

// Backend is one place the conformance suite runs: real Redis or the
// embedded backend.
type Backend struct {
	Name      string // "redis" or "embedded"
	Client    rueidis.Client
	Namespace string
	// Server is the redis-server behind Client; nil for the embedded backend.
	Server *Server
	// Embedded is the in-memory backend behind Client; nil for real Redis.
	Embedded *embedded.Backend
}

// Embedded starts an embedded backend for this test and stops it at cleanup.
func Embedded(t testing.TB) *embedded.Backend {
	t.Helper()
	b, err := embedded.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(b.Close)
	return b
}

// ForEachBackend runs fn as parallel subtests "redis" (the shared real
// redis-server, a fresh namespace) and "embedded" (a fresh in-memory backend).
func ForEachBackend(t *testing.T, fn func(t *testing.T, b *Backend)) {
	t.Helper()
	forEach(t, true, fn)
}

// ForEachBackendSerial is ForEachBackend with the subtests run one after
// the other, for tests that observe the whole process.
func ForEachBackendSerial(t *testing.T, fn func(t *testing.T, b *Backend)) {
	t.Helper()
	forEach(t, false, fn)
}

func forEach(t *testing.T, parallel bool, fn func(t *testing.T, b *Backend)) {
	t.Run("redis", func(t *testing.T) {
		if parallel {
			t.Parallel()
		}
		s := Shared(t)
		fn(t, &Backend{Name: "redis", Client: Client(t, s), Namespace: Namespace(t), Server: s})
	})
	t.Run("embedded", func(t *testing.T) {
		if parallel {
			t.Parallel()
		}
		e := Embedded(t)
		fn(t, &Backend{Name: "embedded", Client: e.Client, Namespace: Namespace(t), Embedded: e})
	})
}
