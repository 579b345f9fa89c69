package dashboard_test

import (
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"

	"github.com/dtq-dev/dtq/dashboard"
)

// get serves one request and returns the answer.
func get(t *testing.T, h http.Handler, method, path string, header ...string) *http.Response {
	t.Helper()
	req := httptest.NewRequest(method, path, nil)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec.Result()
}

func body(t *testing.T, res *http.Response) string {
	t.Helper()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// Every answer, errors included, carries the CSP and nosniff.
func checkSecurityHeaders(t *testing.T, path string, res *http.Response) {
	t.Helper()
	csp := res.Header.Get("Content-Security-Policy")
	if csp != dashboard.CSP {
		t.Errorf("%s: Content-Security-Policy %q, want %q", path, csp, dashboard.CSP)
	}
	if got := res.Header.Get("X-Content-Type-Options"); got != "nosniff" {
		t.Errorf("%s: X-Content-Type-Options %q", path, got)
	}
	if got := res.Header.Get("X-Frame-Options"); got != "DENY" {
		t.Errorf("%s: X-Frame-Options %q", path, got)
	}
}

func TestPolicyIsStrict(t *testing.T) {
	t.Parallel()
	directives := map[string]string{}
	for d := range strings.SplitSeq(dashboard.CSP, ";") {
		name, value, _ := strings.Cut(strings.TrimSpace(d), " ")
		directives[name] = value
	}
	for name, want := range map[string]string{
		"default-src":     "'self'",
		"script-src":      "'self'",
		"style-src":       "'self'",
		"connect-src":     "'self'",
		"frame-ancestors": "'none'",
		"object-src":      "'none'",
		"base-uri":        "'none'",
	} {
		if directives[name] != want {
			t.Errorf("CSP %s is %q, want %q", name, directives[name], want)
		}
	}
	if strings.Contains(dashboard.CSP, "unsafe") {
		t.Errorf("CSP allows something unsafe: %s", dashboard.CSP)
	}
}

func TestServesPageAndAssets(t *testing.T) {
	t.Parallel()
	h := newHandler(t, nil)
	for _, c := range []struct{ path, ctype, contains string }{
		{"/", "text/html; charset=utf-8", `<script type="module" src="ui/js/app.js">`},
		{"/ui/app.css", "text/css; charset=utf-8", "prefers-color-scheme: dark"},
		{"/ui/js/app.js", "text/javascript; charset=utf-8", "import"},
		{"/ui/js/pages/overview.js", "text/javascript; charset=utf-8", "export function mount"},
		{"/ui/favicon.svg", "image/svg+xml", "<svg"},
	} {
		res := get(t, h, http.MethodGet, c.path)
		b := body(t, res)
		if res.StatusCode != http.StatusOK {
			t.Errorf("GET %s: %d", c.path, res.StatusCode)
			continue
		}
		if got := res.Header.Get("Content-Type"); got != c.ctype {
			t.Errorf("GET %s: Content-Type %q, want %q", c.path, got, c.ctype)
		}
		if !strings.Contains(b, c.contains) {
			t.Errorf("GET %s: body lacks %q", c.path, c.contains)
		}
		if res.Header.Get("ETag") == "" || res.Header.Get("Cache-Control") != "no-cache" {
			t.Errorf("GET %s: ETag %q, Cache-Control %q", c.path, res.Header.Get("ETag"), res.Header.Get("Cache-Control"))
		}
		checkSecurityHeaders(t, c.path, res)

		// A client holding the current version gets 304; HEAD has no body.
		if res := get(t, h, http.MethodGet, c.path, "If-None-Match", res.Header.Get("ETag")); res.StatusCode != http.StatusNotModified {
			t.Errorf("GET %s with its ETag: %d, want 304", c.path, res.StatusCode)
		}
		if res := get(t, h, http.MethodHead, c.path); res.StatusCode != http.StatusOK || body(t, res) != "" {
			t.Errorf("HEAD %s: %d", c.path, res.StatusCode)
		}
	}
}

func TestUnknownAssetAndMethod(t *testing.T) {
	t.Parallel()
	h := newHandler(t, nil)
	for _, path := range []string{"/ui/nope.js", "/ui/", "/ui/index.html", "/ui/js/", "/ui/../dashboard.go", "/elsewhere"} {
		res := get(t, h, http.MethodGet, path)
		if res.StatusCode != http.StatusNotFound {
			t.Errorf("GET %s: %d, want 404", path, res.StatusCode)
		}
		checkSecurityHeaders(t, path, res)
	}
	res := get(t, h, http.MethodPost, "/")
	if res.StatusCode != http.StatusMethodNotAllowed || res.Header.Get("Allow") != "GET, HEAD" {
		t.Errorf("POST /: %d, Allow %q", res.StatusCode, res.Header.Get("Allow"))
	}
	checkSecurityHeaders(t, "POST /", res)
}

// The CSP forbids inline script and style; the files must not need them.
// No file may hand data to an HTML parser either: innerHTML, outerHTML,
// insertAdjacentHTML, document.write and eval stay out of the scripts.
func TestNoInlineCodeNorHTMLSinks(t *testing.T) {
	t.Parallel()
	h := newHandler(t, nil)
	page := body(t, get(t, h, http.MethodGet, "/"))
	for _, bad := range []*regexp.Regexp{
		regexp.MustCompile(`<script(?:\s[^>]*)?>\s*[^<\s]`), // a script with inline text
		regexp.MustCompile(`<script(?:\s[^>]*)?>[^<]+</script>`),
		regexp.MustCompile(`\sstyle=`),
		regexp.MustCompile(`<style`),
		regexp.MustCompile(`\son[a-z]+=`),
		regexp.MustCompile(`javascript:`),
	} {
		if bad.MatchString(page) {
			t.Errorf("index.html matches %s", bad)
		}
	}
	sinks := regexp.MustCompile(`innerHTML|outerHTML|insertAdjacentHTML|document\.write|\beval\(|new Function|setAttribute\(['"]style`)
	count := 0
	err := fs.WalkDir(dashboard.Files(), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".js") {
			return err
		}
		count++
		b, err := fs.ReadFile(dashboard.Files(), p)
		if err != nil {
			return err
		}
		if loc := sinks.FindIndex(b); loc != nil {
			t.Errorf("%s uses %s", p, b[loc[0]:loc[1]])
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if count < 8 {
		t.Errorf("checked %d scripts, want every one of them", count)
	}
}

// newHandler is dashboard.Handler(cfg), failing the test on an error.
func newHandler(t *testing.T, cfg *dashboard.Config) http.Handler {
	t.Helper()
	h, err := dashboard.Handler(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// Config.TraceURL reaches the page (escaped) for its task page's trace
// link; a template that is not an absolute http(s) URL holding {trace_id}
// is refused, naming the field.
func TestTraceURL(t *testing.T) {
	t.Parallel()
	page := body(t, get(t, newHandler(t, nil), http.MethodGet, "/"))
	if !strings.Contains(page, `<meta name="dtq-trace-url" content="">`) {
		t.Errorf("the default page has no empty dtq-trace-url")
	}
	tmpl := `https://grafana.example/explore?left={"queries":[{"query":"{trace_id}"}]}&x=1`
	page = body(t, get(t, newHandler(t, &dashboard.Config{TraceURL: tmpl}), http.MethodGet, "/"))
	want := `<meta name="dtq-trace-url" content="https://grafana.example/explore?left={&#34;queries&#34;:[{&#34;query&#34;:&#34;{trace_id}&#34;}]}&amp;x=1">`
	if !strings.Contains(page, want) {
		t.Errorf("the page does not hand the template over escaped: want %s in\n%s", want, page)
	}
	for _, bad := range []string{"javascript:alert(1)//{trace_id}", "/trace/{trace_id}", "https://jaeger.example/trace/",
		"ftp://jaeger.example/{trace_id}", "https:///{trace_id}", "http://%zz/{trace_id}"} {
		if _, err := dashboard.Handler(&dashboard.Config{TraceURL: bad}); err == nil || !strings.Contains(err.Error(), "TraceURL") {
			t.Errorf("TraceURL %q: %v, want an error naming TraceURL", bad, err)
		}
	}
}
