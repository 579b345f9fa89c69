package api

import (
	"bufio"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dtq-dev/dtq"
	"github.com/dtq-dev/dtq/internal/redisconn"
	"github.com/dtq-dev/dtq/internal/redistest"
)

// observed records the calls of an ObserveRequest hook.
type observed struct {
	mu    sync.Mutex
	calls []string // "<route> <code>"
	durs  []time.Duration
}

func (o *observed) observe(route string, code int, d time.Duration) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.calls = append(o.calls, fmt.Sprintf("%s %d", route, code))
	o.durs = append(o.durs, d)
}

func (o *observed) take() ([]string, []time.Duration) {
	o.mu.Lock()
	defer o.mu.Unlock()
	c, d := o.calls, o.durs
	o.calls, o.durs = nil, nil
	return c, d
}

func send(t *testing.T, srv *httptest.Server, method, path, body string) {
	t.Helper()
	req, err := http.NewRequest(method, srv.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	res, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, res.Body)
	res.Body.Close()
}

// ObserveRequest sees each request once, with the route pattern it matched
// (also when the API is mounted under an outer ServeMux, whose own pattern
// is left as it was), "unmatched" for 404 and 405, and the status written.
func TestObserveRequestRoutes(t *testing.T) {
	t.Parallel()
	be := redistest.Embedded(t)
	c, err := dtq.NewClient(redisconn.Wrap(be.Client), &dtq.Config{Namespace: redistest.Namespace(t)})
	if err != nil {
		t.Fatal(err)
	}
	var obs observed
	api := New(c, redisconn.Wrap(be.Client), &Config{ObserveRequest: obs.observe})
	outer := http.NewServeMux()
	var outerPattern string
	outer.Handle("/", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		api.Handler().ServeHTTP(w, r)
		outerPattern = r.Pattern
	}))
	for _, h := range []http.Handler{api.Handler(), outer} {
		srv := httptest.NewServer(h)
		send(t, srv, "POST", "/api/v1/tasks", `{"task_type":"job"}`)
		send(t, srv, "POST", "/api/v1/tasks", `{"task_type":`)
		send(t, srv, "GET", "/api/v1/tasks/nope", "")
		send(t, srv, "GET", "/health", "")
		send(t, srv, "GET", "/no/such/route", "")
		send(t, srv, "DELETE", "/health", "")
		srv.Close()
		calls, durs := obs.take()
		want := []string{
			"POST /api/v1/tasks 201", "POST /api/v1/tasks 400", "GET /api/v1/tasks/{id} 404",
			"GET /health 200", "unmatched 404", "unmatched 405",
		}
		if !slices.Equal(calls, want) {
			t.Fatalf("observed %q, want %q", calls, want)
		}
		for i, d := range durs {
			if d <= 0 {
				t.Fatalf("%s: duration %v", calls[i], d)
			}
		}
	}
	if outerPattern != "/" {
		t.Fatalf("the outer mux's pattern became %q", outerPattern)
	}
	if h := New(c, redisconn.Wrap(be.Client), nil); fmt.Sprintf("%T", h.Handler()) != "http.HandlerFunc" {
		t.Fatal("without ObserveRequest the handler is still wrapped")
	}
}

// The wrapper records the status a handler writes (200 when it writes
// none) and keeps Flush, Hijack and the ResponseController methods working.
func TestObserveKeepsResponseWriterFeatures(t *testing.T) {
	t.Parallel()
	var obs observed
	mux := http.NewServeMux()
	mux.HandleFunc("GET /nothing", func(http.ResponseWriter, *http.Request) {})
	mux.HandleFunc("GET /teapot", func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusEarlyHints) // informational: not the status
		w.WriteHeader(http.StatusTeapot)
		w.Write([]byte("short and stout"))
	})
	mux.HandleFunc("GET /stream", func(w http.ResponseWriter, _ *http.Request) {
		if _, ok := w.(http.Flusher); !ok {
			t.Error("not a Flusher")
		}
		rc := http.NewResponseController(w)
		if err := rc.SetWriteDeadline(time.Now().Add(10 * time.Second)); err != nil {
			t.Errorf("SetWriteDeadline through Unwrap: %v", err)
		}
		if err := rc.EnableFullDuplex(); err != nil {
			t.Errorf("EnableFullDuplex through Unwrap: %v", err)
		}
		io.WriteString(w, "one;")
		if err := rc.Flush(); err != nil {
			t.Errorf("Flush: %v", err)
		}
		w.(http.Flusher).Flush()
		io.Copy(w, strings.NewReader("two")) // ReadFrom
	})
	mux.HandleFunc("GET /upgrade", func(w http.ResponseWriter, _ *http.Request) {
		conn, rw, err := http.NewResponseController(w).Hijack()
		if err != nil {
			t.Errorf("Hijack: %v", err)
			return
		}
		defer conn.Close()
		rw.WriteString("HTTP/1.1 200 OK\r\nContent-Length: 8\r\nConnection: close\r\n\r\nhijacked")
		rw.Flush()
	})
	mux.HandleFunc("GET /hijacker", func(w http.ResponseWriter, _ *http.Request) {
		conn, _, err := w.(http.Hijacker).Hijack()
		if err != nil {
			t.Errorf("Hijack: %v", err)
			return
		}
		defer conn.Close()
		io.WriteString(conn, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok")
	})
	srv := httptest.NewServer(observe(mux, obs.observe))
	defer srv.Close()
	for path, body := range map[string]string{
		"/nothing": "", "/teapot": "short and stout", "/stream": "one;two", "/upgrade": "hijacked", "/hijacker": "ok",
	} {
		res, err := srv.Client().Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		got, _ := io.ReadAll(bufio.NewReader(res.Body))
		res.Body.Close()
		if string(got) != body {
			t.Fatalf("GET %s: body %q, want %q", path, got, body)
		}
	}
	// A hijacking handler's client can have its answer before the handler
	// returns: wait for the fifth report.
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(time.Millisecond) {
		obs.mu.Lock()
		n := len(obs.calls)
		obs.mu.Unlock()
		if n >= 5 || time.Now().After(deadline) {
			break
		}
	}
	calls, _ := obs.take()
	slices.Sort(calls)
	want := []string{"GET /hijacker 101", "GET /nothing 200", "GET /stream 200", "GET /teapot 418", "GET /upgrade 101"}
	if !slices.Equal(calls, want) {
		t.Fatalf("observed %q, want %q", calls, want)
	}
}
