package proctest

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
)

// fakeEnv makes the test binary a stand-in for dtq (see fakeDTQ).
const fakeEnv = "PROCTEST_FAKE_DTQ"

func TestMain(m *testing.M) {
	if mode := os.Getenv(fakeEnv); mode != "" {
		os.Exit(fakeDTQ(mode))
	}
	os.Exit(m.Run())
}

// fakeDTQ logs like dtq and serves a task that is RUNNING on its first
// read and SUCCEEDED after, until SIGTERM. Mode "exit" exits at once with
// status 3; mode "panic" logs a panic before the ready line.
func fakeDTQ(mode string) int {
	fmt.Fprintln(os.Stderr, "not JSON")
	if mode == "exit" {
		return 3
	}
	if mode == "panic" {
		fmt.Fprintln(os.Stderr, "panic: boom\n\ngoroutine 1 [running]:")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	var mu sync.Mutex
	reads := 0
	mux := http.NewServeMux()
	mux.HandleFunc("GET /api/v1/tasks/{id}", func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		reads++
		status := "RUNNING"
		if reads > 1 {
			status = "SUCCEEDED"
		}
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{"id": r.PathValue("id"), "status": status})
	})
	mux.HandleFunc("POST /api/v1/tasks", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if r.Header.Get("X-API-Key") != "k" {
			w.WriteHeader(http.StatusUnauthorized)
			fmt.Fprint(w, `{"error":{"code":"unauthorized"}}`)
			return
		}
		w.WriteHeader(http.StatusCreated)
		fmt.Fprint(w, `{"id":"t1"}`)
	})
	mux.HandleFunc("GET /env", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, os.Getenv(r.URL.Query().Get("name")))
	})
	go http.Serve(ln, mux)
	log := json.NewEncoder(os.Stderr)
	log.Encode(map[string]any{"msg": "starting", "backend": "fake"})
	log.Encode(map[string]any{"msg": "dtq is ready", "addr": ln.Addr().String()})
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM)
	<-sig
	log.Encode(map[string]any{"msg": "stopped"})
	return 0
}

// fake starts the test binary as a fake dtq in mode.
func fake(t testing.TB, mode string, opts *StartOpts) *Proc {
	t.Helper()
	if opts == nil {
		opts = &StartOpts{}
	}
	// A -race test binary sleeps 1 s at exit unless told not to.
	opts.Env = append(opts.Env, fakeEnv+"="+mode, "GORACE=atexit_sleep_ms=0")
	return Start(t, os.Args[0], opts, "serve")
}

func TestStartRequestsStop(t *testing.T) {
	t.Parallel()
	p := fake(t, "serve", nil)
	if !strings.HasPrefix(p.URL, "http://127.0.0.1:") {
		t.Fatalf("URL %q", p.URL)
	}
	if recs := p.Logged(); len(recs) != 2 || recs[0]["backend"] != "fake" {
		t.Fatalf("Logged: %v", recs)
	}
	if r := p.Do("POST", "/api/v1/tasks", `{}`); r.Status != http.StatusUnauthorized || r.ErrCode() != "unauthorized" {
		t.Fatalf("without a key: %d %s", r.Status, r.Raw)
	}
	if id := p.Submit(`{}`, "X-API-Key", "k"); id != "t1" {
		t.Fatalf("Submit: %q", id)
	}
	if r := p.WaitStatus("t1", "SUCCEEDED"); r.Str("id") != "t1" || r.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("WaitStatus: %s %v", r.Raw, r.Header)
	}
	if err := p.Stop(); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	if err := p.Stop(); err != nil {
		t.Fatalf("a second Stop: %v", err)
	}
	if s := p.Stderr(); !strings.HasPrefix(s, "not JSON\n") || !strings.HasSuffix(s, `{"msg":"stopped"}`+"\n") {
		t.Fatalf("Stderr:\n%s", s)
	}
	p.CheckNoPanic()
}

func TestEnv(t *testing.T) {
	t.Setenv("DTQ_PROCTEST_OUTER", "outer")
	t.Setenv("PROCTEST_OTHER", "other")
	for _, drop := range []bool{false, true} {
		p := fake(t, "serve", &StartOpts{Env: []string{"DTQ_PROCTEST_OWN=own"}, DropDTQEnv: drop})
		want := map[string]string{"DTQ_PROCTEST_OWN": "own", "PROCTEST_OTHER": "other", "DTQ_PROCTEST_OUTER": "outer"}
		if drop {
			want["DTQ_PROCTEST_OUTER"] = ""
		}
		for name, v := range want {
			if got := string(p.Must(http.StatusOK, "GET", "/env?name="+name, "").Raw); got != v {
				t.Errorf("DropDTQEnv %v: %s=%q, want %q", drop, name, got, v)
			}
		}
	}
}

// recorder is a testing.TB that records failures; FailNow ends the
// goroutine as testing's does.
type recorder struct {
	testing.TB
	mu     sync.Mutex
	failed []string
}

func (r *recorder) Helper() {}

func (r *recorder) Errorf(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.failed = append(r.failed, fmt.Sprintf(format, args...))
}

func (r *recorder) Fatalf(format string, args ...any) {
	r.Errorf(format, args...)
	runtime.Goexit()
}

func (r *recorder) messages() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return strings.Join(r.failed, "\n")
}

// run calls f with a recorder on its own goroutine and returns what failed.
func run(t *testing.T, f func(r *recorder)) string {
	r := &recorder{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		f(r)
	}()
	<-done
	return r.messages()
}

func TestExitBeforeReady(t *testing.T) {
	t.Parallel()
	msg := run(t, func(r *recorder) { fake(r, "exit", nil) })
	if !strings.Contains(msg, "exited before it was ready (exit status 3)") || !strings.Contains(msg, "not JSON") {
		t.Fatalf("failure: %q", msg)
	}
}

func TestPanicChecks(t *testing.T) {
	t.Parallel()
	p := fake(t, "panic", nil)
	if msg := run(t, func(r *recorder) { p.t = r; p.CheckNoPanic() }); !strings.Contains(msg, "dtq logged a panic") {
		t.Errorf("CheckNoPanic: %q", msg)
	}
	q := fake(t, "panic", &StartOpts{CheckAtStop: true})
	if msg := run(t, func(r *recorder) { q.t = r; q.Stop() }); !strings.Contains(msg, "dtq logged a panic") {
		t.Errorf("Stop with CheckAtStop: %q", msg)
	}
	p.t, q.t, q.checkAtStop = t, t, false // its cleanup Stop must not fail this test
}

func TestBuild(t *testing.T) {
	if testing.Short() {
		t.Skip("builds dtq")
	}
	t.Parallel()
	bin := t.TempDir() + "/dtq"
	if err := Build(bin, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(bin); err != nil {
		t.Fatal(err)
	}
}
