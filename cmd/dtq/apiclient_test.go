package main

import (
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/dtq-dev/dtq/api"
	"github.com/dtq-dev/dtq/internal/redistest"
)

// closedURL returns the URL of a loopback port nothing listens on.
func closedURL(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return "http://" + addr
}

// TestUnreachableAPI: every client command says, in one line, that it
// cannot reach the API and how to point it elsewhere.
func TestUnreachableAPI(t *testing.T) {
	t.Parallel()
	url := closedURL(t)
	for _, args := range [][]string{
		{"submit", "echo"},
		{"get", "default-01ARZ3NDEKTSV4RRFFQ69G5FAV"},
		{"list"},
		{"cancel", "default-01ARZ3NDEKTSV4RRFFQ69G5FAV"},
		{"dlq", "list"},
		{"dlq", "requeue", "x"},
		{"dlq", "discard", "x"},
		{"dlq", "purge", "--all-queues", "--yes"},
		{"retry-dlq", "--queue", "default"},
		{"dlq", "redrive", "--all-queues"},
		{"queue", "list"},
		{"queue", "stats", "default"},
		{"queue", "pause", "default"},
		{"queue", "resume", "default"},
		{"workers"},
		{"audit"},
	} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			t.Parallel()
			e := &apiEnv{t: t, url: url}
			e.fails(args, "cannot reach the API at "+url, "connection refused", `"dtq serve"`, "DTQ_API_URL")
		})
	}
}

// TestAPIKey: with a key on the server, mutating and admin routes need
// --api-key (or DTQ_API_KEY); reads stay open unless APIKeyReads.
func TestAPIKey(t *testing.T) {
	forEachAPI(t, &apiEnvOpts{api: api.Config{APIKey: "s3cret"}}, func(t *testing.T, e *apiEnv) {
		// --api-key= : no key, whatever DTQ_API_KEY the environment has.
		for _, key := range []string{"--api-key=", "--api-key=wrong"} {
			for _, args := range [][]string{
				{"submit", "echo"},
				{"cancel", "default-01ARZ3NDEKTSV4RRFFQ69G5FAV"},
				{"dlq", "requeue", "default-01ARZ3NDEKTSV4RRFFQ69G5FAV"},
				{"dlq", "discard", "default-01ARZ3NDEKTSV4RRFFQ69G5FAV"},
				{"dlq", "purge", "--all-queues", "--yes"},
				{"retry-dlq", "--all-queues"},
				{"queue", "pause", "default"},
				{"queue", "resume", "default"},
			} {
				e.fails(append(args, key), "401 unauthorized: a valid X-API-Key header is required", "--api-key")
			}
		}
		id := e.submit("echo", "--api-key", "s3cret")
		e.ok("get", id, "--api-key=")
		e.ok("list", "--api-key=")
		e.ok("queue", "pause", "default", "--api-key", "s3cret")
	})
}

func TestAPIKeyOnReads(t *testing.T) {
	forEachAPI(t, &apiEnvOpts{api: api.Config{APIKey: "s3cret", APIKeyReads: true}, noWorker: true}, func(t *testing.T, e *apiEnv) {
		id := e.submit("echo", "--api-key", "s3cret")
		for _, args := range [][]string{
			{"get", id},
			{"list"},
			{"dlq", "list"},
			{"queue", "list"},
			{"queue", "stats", "default"},
			{"workers"},
			{"audit"},
		} {
			e.fails(append(args, "--api-key="), "401 unauthorized")
			e.ok(append(args[:len(args):len(args)], "--api-key", "s3cret")...)
		}
	})
}

// TestAPIEnvironment: DTQ_API_URL and DTQ_API_KEY are the defaults of
// --api-url and --api-key, the flags win, and --help never shows the key.
// Not parallel: it sets the environment.
func TestAPIEnvironment(t *testing.T) {
	be := redistest.Embedded(t)
	e := newAPIEnv(t, &redistest.Backend{Name: "embedded", Client: be.Client, Namespace: redistest.Namespace(t), Embedded: be},
		&apiEnvOpts{api: api.Config{APIKey: "from-env"}, noWorker: true})
	t.Setenv("DTQ_API_URL", e.url)
	t.Setenv("DTQ_API_KEY", "from-env")
	if _, _, err := execute(t, "submit", "echo", "--queue", "envq"); err != nil {
		t.Fatal(err)
	}
	out, _, err := execute(t, "queue", "pause", "envq")
	if err != nil || !strings.Contains(out, "queue envq is paused") {
		t.Fatalf("dtq queue pause envq with DTQ_API_URL and DTQ_API_KEY: %v, output %q", err, out)
	}
	_, _, err = execute(t, "queue", "resume", "envq", "--api-key", "wrong")
	if err == nil || !strings.HasPrefix(err.Error(), "401 unauthorized") {
		t.Fatalf("--api-key wrong with DTQ_API_KEY set: error %v, want 401 (the flag wins)", err)
	}
	t.Setenv("DTQ_API_KEY", "")
	_, _, err = execute(t, "queue", "resume", "envq")
	if err == nil || !strings.HasPrefix(err.Error(), "401 unauthorized") {
		t.Fatalf("no key: error %v, want 401", err)
	}
	closed := closedURL(t)
	_, _, err = execute(t, "queue", "resume", "envq", "--api-url", closed)
	if err == nil || !strings.Contains(err.Error(), closed) {
		t.Fatalf("--api-url %s with DTQ_API_URL set: error %v, want it to name %s (the flag wins)", closed, err, closed)
	}

	t.Setenv("DTQ_API_URL", "localhost:8000")
	if _, _, err := execute(t, "workers"); err == nil || !strings.HasPrefix(err.Error(), `DTQ_API_URL: the API URL must be an http:// or https:// URL like http://localhost:8000 (got "localhost:8000")`) {
		t.Errorf("bad DTQ_API_URL: error %v, want one naming DTQ_API_URL", err)
	}

	t.Setenv("DTQ_API_URL", "")
	if out, _, err := execute(t, "workers", "--help"); err != nil || !strings.Contains(out, `(default "`+defaultAPIURL+`")`) {
		t.Errorf("empty DTQ_API_URL: --api-url does not default to %s (%v):\n%s", defaultAPIURL, err, out)
	}

	t.Setenv("DTQ_API_KEY", "top-secret-value")
	for _, args := range [][]string{{"submit", "--help"}, {"dlq", "purge", "--help"}} {
		out, _, err := execute(t, args...)
		if err != nil {
			t.Fatalf("dtq %s: %v", strings.Join(args, " "), err)
		}
		if strings.Contains(out, "top-secret-value") {
			t.Errorf("dtq %s shows the API key:\n%s", strings.Join(args, " "), out)
		}
		if !strings.Contains(out, "DTQ_API_KEY") || !strings.Contains(out, "DTQ_API_URL") {
			t.Errorf("dtq %s does not name DTQ_API_KEY and DTQ_API_URL:\n%s", strings.Join(args, " "), out)
		}
	}
}

// TestNotTheAPI: an answer that is not the API's (a proxy's HTML error
// page, a redirect, a non-JSON 200) is reported in one line; so is a 429
// with the Retry-After the message does not already give.
func TestNotTheAPI(t *testing.T) {
	t.Parallel()
	mux := http.NewServeMux()
	mux.HandleFunc("/bad-gateway/", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		w.WriteHeader(http.StatusBadGateway)
		w.Write([]byte("<html>\n<body>upstream\tdown</body>\n</html>\n"))
	})
	mux.HandleFunc("/moved/", func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("X-API-Key") != "" {
			t.Errorf("the redirecting server got X-API-Key")
		}
		http.Redirect(w, r, "http://elsewhere.invalid/api/v1/workers", http.StatusFound)
	})
	mux.HandleFunc("/full/", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Retry-After", "7")
		w.WriteHeader(http.StatusTooManyRequests)
		w.Write([]byte(`{"error":{"code":"queue_full","message":"queue \"q\" is full"}}`))
	})
	mux.HandleFunc("/html/", func(w http.ResponseWriter, _ *http.Request) {
		w.Write([]byte("<html>hello</html>"))
	})
	mux.HandleFunc("/wrong-shape/", func(w http.ResponseWriter, _ *http.Request) {
		w.Write([]byte(`{"workers":"many"}`))
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()
	for _, tc := range []struct {
		prefix string
		want   []string
	}{
		{"/bad-gateway", []string{"502 Bad Gateway: <html> <body>upstream down</body> </html>"}},
		{"/moved", []string{"302 Found: redirected to http://elsewhere.invalid/api/v1/workers", "--api-url"}},
		{"/full", []string{`429 queue_full: queue "q" is full (retry after 7s)`}},
		{"/html", []string{"not JSON", "is " + srv.URL + "/html the dtq API?"}},
		{"/wrong-shape", []string{"expected shape"}},
	} {
		e := &apiEnv{t: t, url: srv.URL + tc.prefix}
		e.fails([]string{"workers"}, tc.want...)
	}
	// --json prints nothing for a failed request either.
	e := &apiEnv{t: t, url: srv.URL + "/bad-gateway"}
	e.fails([]string{"workers", "--json"}, "502")
}

// TestAPITimeout: a server that never answers is given up on after
// --timeout.
func TestAPITimeout(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		<-r.Context().Done() // until the client gives up
	}))
	defer srv.Close()
	e := &apiEnv{t: t, url: srv.URL}
	e.fails([]string{"queue", "list", "--timeout", "200ms"}, "no answer from the API at "+srv.URL+" within 200ms", "--timeout")
	e.fails([]string{"queue", "list", "--timeout", "0s"}, "--timeout must be positive")
}

func TestBadAPIURL(t *testing.T) {
	t.Parallel()
	for _, u := range []string{"localhost:8000", "ftp://host/", "http://", "http://host/?q=1", "::"} {
		e := &apiEnv{t: t, url: u}
		e.fails([]string{"workers"}, "--api-url: the API URL must be an http:// or https:// URL")
	}
}
