package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dtq-dev/dtq/internal/redisconn"
	"github.com/dtq-dev/dtq/internal/redistest"
)

var statsLine = regexp.MustCompile(`^published (\d+)  acked (\d+)  redelivered-after-nak (\d+)$`)

// checkStats asserts that out is only stats lines, at least one of them,
// and that some line counts published messages.
func checkStats(t *testing.T, out string) {
	t.Helper()
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if out == "" {
		t.Fatal("serve printed no stats line")
	}
	published := false
	for _, l := range lines {
		m := statsLine.FindStringSubmatch(l)
		if m == nil {
			t.Fatalf("serve printed %q, want only lines like %q", l, "published N  acked M  redelivered-after-nak K")
		}
		if n, _ := strconv.Atoi(m[1]); n > 0 {
			published = true
		}
	}
	if !published {
		t.Errorf("no stats line counts a published message:\n%s", out)
	}
}

// checkFirstLog asserts that the first line of errOut is a JSON log record
// naming backend.
func checkFirstLog(t *testing.T, errOut, backend string) {
	t.Helper()
	first, _, _ := strings.Cut(errOut, "\n")
	var rec struct {
		Level   string `json:"level"`
		Msg     string `json:"msg"`
		Backend string `json:"backend"`
	}
	if err := json.Unmarshal([]byte(first), &rec); err != nil {
		t.Fatalf("first log line %q is not JSON: %v", first, err)
	}
	if rec.Level != "INFO" || rec.Backend != backend || !strings.Contains(strings.ToLower(rec.Msg), backend) {
		t.Errorf("first log line %q, want an INFO record with backend=%q that mentions it", first, backend)
	}
}

func TestServeEmbedded(t *testing.T) {
	t.Parallel()
	// --redis= so a DTQ_REDIS_URL in the environment cannot pick Redis.
	out, errOut, err := execute(t, "serve", "--redis=", "--duration", "2s")
	if err != nil {
		t.Fatalf("dtq serve --duration 2s: %v\nlog:\n%s", err, errOut)
	}
	checkStats(t, out)
	checkFirstLog(t, errOut, "embedded")
}

func TestServeRedis(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t, nil)
	out, errOut, err := execute(t, "serve", "--redis", "redis://"+srv.Addr, "--duration", "2s")
	if err != nil {
		t.Fatalf("dtq serve --redis redis://%s: %v\nlog:\n%s", srv.Addr, err, errOut)
	}
	checkStats(t, out)
	checkFirstLog(t, errOut, "redis")
	// The demo queue lives on the server we gave it.
	c := redistest.Client(t, srv)
	keys, err := c.Do(t.Context(), c.B().Keys().Pattern("dtq:{demo}:*").Build()).AsStrSlice()
	if err != nil {
		t.Fatalf("KEYS: %v", err)
	}
	if len(keys) == 0 {
		t.Errorf("no dtq:{demo}:* key on redis-server %s after serve", srv.Addr)
	}
}

func TestServeRejectsRate(t *testing.T) {
	t.Parallel()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := l.Addr().String()
	l.Close()
	for name, args := range map[string][]string{
		"zero":     {"--rate", "0"},
		"negative": {"--rate", "-5"},
		// A rate above one per nanosecond made time.NewTicker panic.
		"too high": {"--rate", "2000000000"},
		// The flag is checked before dtq connects anywhere.
		"zero with unreachable redis": {"--rate", "0", "--redis", "redis://" + closed},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			args := append([]string{"serve", "--redis=", "--duration", "1s"}, args...)
			out, errOut, err := execute(t, args...)
			if err == nil || !strings.Contains(err.Error(), "--rate") {
				t.Fatalf("dtq %s: error %v, want one about --rate", strings.Join(args, " "), err)
			}
			if out != "" || errOut != "" {
				t.Errorf("dtq %s started anyway: out %q, log %q", strings.Join(args, " "), out, errOut)
			}
		})
	}
}

func TestServeRedisURLErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		url         string
		want        string
		unsupported bool
	}{
		{url: "redis+cluster://x", want: "not yet supported", unsupported: true},
		{url: "redis+sentinel://x:26379", want: "not yet supported", unsupported: true},
		{url: "redis://x:6379?master_set=m", want: "not yet supported", unsupported: true},
		{url: "redis://", want: "no host"},
		{url: "memcached://x:11211", want: "redis://"},
	} {
		t.Run(tc.url, func(t *testing.T) {
			t.Parallel()
			out, _, err := execute(t, "serve", "--redis", tc.url, "--duration", "1s")
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("dtq serve --redis %s: error %v, want one containing %q", tc.url, err, tc.want)
			}
			if got := errors.Is(err, redisconn.ErrUnsupported); got != tc.unsupported {
				t.Errorf("errors.Is(%v, ErrUnsupported) = %v, want %v", err, got, tc.unsupported)
			}
			if out != "" {
				t.Errorf("dtq serve --redis %s printed %q", tc.url, out)
			}
		})
	}
}

// TestServeRedisURLFromEnv: DTQ_REDIS_URL is the default of --redis.
// Not parallel: it sets the environment.
func TestServeRedisURLFromEnv(t *testing.T) {
	t.Setenv("DTQ_REDIS_URL", "redis+cluster://from-env")
	_, _, err := execute(t, "serve", "--duration", "1s")
	if !errors.Is(err, redisconn.ErrUnsupported) || !strings.Contains(err.Error(), "not yet supported") {
		t.Fatalf("dtq serve with DTQ_REDIS_URL=redis+cluster://from-env: error %v, want not yet supported", err)
	}
}

// gateWriter blocks every Write until release is closed, and reports
// whether a Write is in progress.
type gateWriter struct {
	entered chan struct{} // closed when the first Write starts
	release chan struct{}
	once    sync.Once

	mu       sync.Mutex
	inFlight int
	buf      bytes.Buffer
}

func newGateWriter() *gateWriter {
	return &gateWriter{entered: make(chan struct{}), release: make(chan struct{})}
}

func (w *gateWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	w.inFlight++
	w.mu.Unlock()
	w.once.Do(func() { close(w.entered) })
	<-w.release
	w.mu.Lock()
	defer w.mu.Unlock()
	w.inFlight--
	return w.buf.Write(p)
}

func (w *gateWriter) busy() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.inFlight > 0
}

// TestServeWaitsForItsWriters: serve must not return while one of its
// goroutines is still writing to the output it was given (or may still
// write to it): the caller owns that writer again once serve returns.
func TestServeWaitsForItsWriters(t *testing.T) {
	t.Parallel()
	out := newGateWriter()
	var errOut bytes.Buffer
	root := newRootCmd(out, &errOut)
	root.SetArgs([]string{"serve", "--redis="})
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- root.ExecuteContext(ctx) }()

	select {
	case <-out.entered: // the first stats line is being written, and blocks
	case err := <-done:
		t.Fatalf("serve returned before printing anything: %v", err)
	case <-time.After(runTimeout):
		t.Fatalf("serve printed no stats line within %v", runTimeout)
	}
	cancel() // as an interrupt would
	select {
	case err := <-done:
		close(out.release)
		t.Fatalf("serve returned (err=%v) while its stats line was still being written", err)
	case <-time.After(3 * time.Second):
		// Still waiting for its writer, as it should.
	}
	close(out.release)
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("serve after interrupt: %v", err)
		}
	case <-time.After(runTimeout):
		t.Fatalf("serve still running %v after its writer was released", runTimeout)
	}
	if out.busy() {
		t.Error("a write to serve's output is still in progress after serve returned")
	}
	// The blocked line, and at most a tick that was already due.
	if out.buf.Len() == 0 {
		t.Error("serve's blocked stats line is missing from its output")
	}
	for l := range strings.Lines(out.buf.String()) {
		if !statsLine.MatchString(strings.TrimSuffix(l, "\n")) {
			t.Errorf("serve printed %q, want stats lines", l)
		}
	}
}
