// Package dashboard serves dtq's web dashboard: an HTML page, a style sheet
// and plain ES modules, embedded in the binary, that talk to the HTTP API
// (/api/v1/…) and the events route (/ws/events) of the same origin. It needs
// no build step and no Node toolchain.
//
// [Handler] serves the page at "/" and its assets under "/ui/"; mount it
// beside the API:
//
//	mux.Handle("/", apiServer.Handler())
//	d, err := dashboard.Handler(&dashboard.Config{TraceURL: "https://jaeger.example/trace/{trace_id}"})
//	…
//	mux.Handle("GET /{$}", d)
//	mux.Handle("GET /ui/", d)
//
// Every answer carries a strict Content-Security-Policy ([CSP]): scripts,
// styles and connections only from the page's own origin, no inline script
// or style, no framing. The scripts render every piece of task data as text
// (textContent, never innerHTML), so a payload, type, error or queue name
// cannot inject markup. The page keeps an API key, when the server asks for
// one, in sessionStorage only. docs/dashboard.md describes the pages.
//
// # Caveats
//
// The live charts count the events received while the page is open: the
// events route is fire-and-forget, so they start empty and miss what
// happened while the page was disconnected.
package dashboard

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"fmt"
	"html"
	"io/fs"
	"net/http"
	"net/url"
	"path"
	"strings"
	"time"
)

// Config configures the dashboard. The zero value (or nil) is the
// default.
type Config struct {
	// TraceURL is the template of the link from a task to its trace in the
	// operator's tracing UI: an absolute http or https URL in which
	// "{trace_id}" stands for the task's trace id (32 hex digits), e.g.
	// "https://jaeger.example/trace/{trace_id}". The task page shows the
	// trace id as that link. Defaults to "": the trace id is shown as text.
	TraceURL string
}

// TraceIDPlaceholder is what Config.TraceURL's template holds in place of
// the trace id.
const TraceIDPlaceholder = "{trace_id}"

// traceURLMeta is the page's element that hands Config.TraceURL to its
// scripts (pages/task.js reads it), as index.html holds it empty.
const traceURLMeta = `<meta name="dtq-trace-url" content="">`

// validate reports a bad field of c, naming it.
func (c *Config) validate() error {
	if c.TraceURL == "" {
		return nil
	}
	u, err := url.Parse(c.TraceURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("dashboard: Config.TraceURL %q is not an absolute http or https URL", c.TraceURL)
	}
	if !strings.Contains(c.TraceURL, TraceIDPlaceholder) {
		return fmt.Errorf("dashboard: Config.TraceURL %q does not hold %s, where the task's trace id goes", c.TraceURL, TraceIDPlaceholder)
	}
	return nil
}

//go:embed static
var static embed.FS

// CSP is the Content-Security-Policy of every dashboard answer: everything
// from the page's own origin (connect-src 'self' covers the same-origin
// WebSocket in CSP Level 3 browsers), no inline script or style, no plugins,
// no framing, no <base> or form posts elsewhere.
const CSP = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
	"connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"

// AssetPrefix is the path under which the dashboard serves its assets.
const AssetPrefix = "/ui/"

// contentTypes maps the extensions of the embedded files to their media
// types (not mime.TypeByExtension, which a system's mime.types can change).
var contentTypes = map[string]string{
	".html": "text/html; charset=utf-8",
	".css":  "text/css; charset=utf-8",
	".js":   "text/javascript; charset=utf-8",
	".svg":  "image/svg+xml",
	".png":  "image/png",
	".txt":  "text/plain; charset=utf-8",
}

// asset is one embedded file, ready to serve.
type asset struct {
	body  []byte
	ctype string
	etag  string
}

type handler struct {
	assets map[string]*asset // by path below static/, "index.html" for the page
}

// Handler returns the dashboard's handler, configured by cfg (nil: the
// defaults), or an error naming a bad field of cfg. It answers GET and HEAD
// of "/" with the page and of AssetPrefix+name with the embedded asset
// name; any other path is 404 and any other method 405. Answers carry CSP,
// X-Content-Type-Options: nosniff, an ETag (If-None-Match gets 304) and
// Cache-Control: no-cache, so a new binary's files are picked up at once.
func Handler(cfg *Config) (http.Handler, error) {
	if cfg == nil {
		cfg = &Config{}
	}
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	h := &handler{assets: make(map[string]*asset)}
	err := fs.WalkDir(static, "static", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		body, err := static.ReadFile(p)
		if err != nil {
			return err
		}
		if p == "static/index.html" {
			if !bytes.Contains(body, []byte(traceURLMeta)) {
				panic("dashboard: index.html lacks " + traceURLMeta)
			}
			body = bytes.Replace(body, []byte(traceURLMeta),
				[]byte(`<meta name="dtq-trace-url" content="`+html.EscapeString(cfg.TraceURL)+`">`), 1)
		}
		ctype, ok := contentTypes[path.Ext(p)]
		if !ok {
			ctype = "application/octet-stream"
		}
		sum := sha256.Sum256(body)
		h.assets[strings.TrimPrefix(p, "static/")] = &asset{body: body, ctype: ctype, etag: `"` + hex.EncodeToString(sum[:8]) + `"`}
		return nil
	})
	if err != nil {
		// The files are compiled in: this cannot fail at run time.
		panic("dashboard: reading embedded files: " + err.Error())
	}
	return h, nil
}

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	hd := w.Header()
	hd.Set("Content-Security-Policy", CSP)
	hd.Set("X-Content-Type-Options", "nosniff")
	hd.Set("X-Frame-Options", "DENY")
	hd.Set("Referrer-Policy", "no-referrer")
	hd.Set("Cross-Origin-Opener-Policy", "same-origin")
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		hd.Set("Allow", "GET, HEAD")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	name := ""
	switch {
	case r.URL.Path == "/":
		name = "index.html"
	case strings.HasPrefix(r.URL.Path, AssetPrefix):
		name = strings.TrimPrefix(r.URL.Path, AssetPrefix)
		if name == "index.html" {
			name = "" // the page lives at "/"
		}
	}
	a := h.assets[name]
	if a == nil {
		http.Error(w, "404 page not found", http.StatusNotFound)
		return
	}
	hd.Set("Content-Type", a.ctype)
	hd.Set("Cache-Control", "no-cache")
	hd.Set("ETag", a.etag)
	http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(a.body))
}
