// Package browsertest drives the dashboard in headless Chromium (chromedp)
// against the real dtq binary: it builds the binary, starts `dtq serve` (or
// `dtq api` and `dtq worker` on a redis-server it started) and clicks
// through the pages as a user would.
//
// It needs Chromium: `make deps` (scripts/ensure-chromium.sh) installs
// Debian's chromium when it is missing; without a browser the tests fail,
// unless DTQ_SKIP_BROWSER_TESTS=1 skips them explicitly. Screenshots of every page go to
// $DTQ_ARTIFACTS/dashboard (default: dtq-dashboard-artifacts in the temp
// directory); the tests log the path. DTQ_UPDATE_DOCS=1 also writes the
// screenshots docs/dashboard.md shows to docs/img/.
package browsertest

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
	"github.com/dtq-dev/dtq/internal/pgtest"
	"github.com/dtq-dev/dtq/internal/proctest"
	"github.com/dtq-dev/dtq/internal/redistest"
)

// Bounds of the waits: every browser action and every condition has one,
// so no test can hang.
const (
	actionTimeout = 20 * time.Second // one chromedp action
	waitTimeout   = 30 * time.Second // a condition polled in the page
	tabTimeout    = 3 * time.Minute  // the whole life of one test's tab
	startTimeout  = 60 * time.Second // the browser starting
)

var (
	binary    string          // the dtq binary built for this run
	browser   context.Context // a running headless Chromium; tests open tabs in it
	artifacts string          // where screenshots go
)

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	dir, err := os.MkdirTemp("", "dtq-browser-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)

	if os.Getenv("DTQ_SKIP_BROWSER_TESTS") == "1" {
		fmt.Fprintln(os.Stderr, "browsertest: DTQ_SKIP_BROWSER_TESTS=1: the dashboard's browser tests are skipped")
		return 0
	}
	exe := findBrowser()
	if exe == "" {
		fmt.Fprintln(os.Stderr, "browsertest: FAIL: no chromium, chromium-browser or google-chrome on PATH. "+
			"Run scripts/ensure-chromium.sh (make test runs it through make deps), "+
			"or set DTQ_SKIP_BROWSER_TESTS=1 to skip the dashboard's browser tests explicitly.")
		return 1
	}

	binary = filepath.Join(dir, "dtq")
	if err := proctest.Build(binary, &proctest.BuildOpts{Race: true}); err != nil {
		fmt.Fprintln(os.Stderr, "browsertest:", err)
		return 1
	}

	artifacts = filepath.Join(os.TempDir(), "dtq-dashboard-artifacts")
	if a := os.Getenv("DTQ_ARTIFACTS"); a != "" {
		artifacts = filepath.Join(a, "dashboard")
	}
	if err := os.MkdirAll(artifacts, 0o755); err != nil {
		fmt.Fprintln(os.Stderr, "browsertest:", err)
		return 1
	}
	fmt.Fprintln(os.Stderr, "browsertest: screenshots go to", artifacts)

	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(exe),
		chromedp.NoSandbox, // CI runs as root, where Chromium's sandbox cannot start
		chromedp.DisableGPU,
		chromedp.WindowSize(1280, 800),
		chromedp.UserDataDir(filepath.Join(dir, "profile")),
		chromedp.Flag("lang", "en-US"),
		chromedp.Flag("hide-scrollbars", true),
	)
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancelAlloc()
	b, cancelBrowser := chromedp.NewContext(alloc)
	defer cancelBrowser()
	started := make(chan error, 1)
	go func() { started <- chromedp.Do(b) }() // starts the browser
	select {
	case err := <-started:
		if err != nil {
			fmt.Fprintln(os.Stderr, "browsertest: starting", exe+":", err)
			return 1
		}
	case <-time.After(startTimeout):
		fmt.Fprintln(os.Stderr, "browsertest: the browser did not start within", startTimeout)
		return 1
	}
	browser = b
	code := redistest.Main(m)
	pgtest.StopShared()
	return code
}

// findBrowser returns the path of a Chromium or Chrome, or "".
func findBrowser() string {
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

// ---- the dtq process ----------------------------------------------------

// start runs `dtq args...` with the environment variables env (NAME=value;
// the DTQ_* variables of the test's own environment are left out), waits
// until it logs "dtq is ready" and stops it (SIGTERM, then SIGKILL after
// 30 s) at cleanup, failing the test if it logged a panic or a race.
func start(t *testing.T, env []string, args ...string) *proctest.Proc {
	t.Helper()
	return proctest.Start(t, binary, &proctest.StartOpts{Env: env, DropDTQEnv: true, CheckAtStop: true}, args...)
}

// ---- the browser --------------------------------------------------------

// tab is one test's browser tab.
type tab struct {
	t   *testing.T
	ctx context.Context
}

// newTab opens a tab in the shared browser, closed at cleanup, with a
// viewport of width×height (opts: mobile for a phone). Before any page script runs, every document
// records Content-Security-Policy violations in window.__csp, so a test can
// prove that nothing tried to run inline code.
func newTab(t *testing.T, width, height int64, opts ...chromedp.EmulateViewportOption) *tab {
	t.Helper()
	life, cancelLife := context.WithTimeout(browser, tabTimeout)
	ctx, cancel := chromedp.NewContext(life)
	t.Cleanup(func() {
		cancel()
		cancelLife()
	})
	tb := &tab{t: t, ctx: ctx}
	// The first Run binds the tab to the context it is given: it must be
	// the tab's own (bounded by tabTimeout), not one action's, or the tab
	// closes when that action's timeout is cancelled.
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(width, height, opts...)); err != nil {
		t.Fatalf("opening a browser tab: %v", err)
	}
	tb.do(chromedp.Func(func(ctx context.Context, target *chromedp.Target) error {
		_, err := cdp.Call(ctx, target, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{
			Source: initScript,
		})
		return err
	}))
	tb.media("light")
	return tb
}

// initScript runs in every document before its own scripts: it records
// Content-Security-Policy violations in window.__csp and replaces alert,
// confirm and prompt (which would stall the page) by recorders.
const initScript = `
window.__csp = [];
document.addEventListener('securitypolicyviolation', (e) => window.__csp.push(e.violatedDirective + ' ' + e.blockedURI));
window.__dialogs = [];
for (const name of ['alert', 'confirm', 'prompt']) {
	window[name] = (msg) => { window.__dialogs.push(name + ': ' + msg); return null; };
}`

// mobile makes a tab's viewport a phone's: touch, and the page's
// viewport meta tag applies.
var mobile = chromedp.EmulateMobile

// media sets the media features the tab's pages see: reduced motion
// always (no transition half done in a screenshot), and the colour scheme.
func (tb *tab) media(scheme string) {
	tb.t.Helper()
	tb.do(chromedp.Func(func(ctx context.Context, target *chromedp.Target) error {
		_, err := cdp.Call(ctx, target, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{
			Features: []*emulation.MediaFeature{
				{Name: "prefers-reduced-motion", Value: "reduce"},
				{Name: "prefers-color-scheme", Value: scheme},
			},
		})
		return err
	}))
}

// darkMode makes the tab's pages prefer a dark colour scheme.
func (tb *tab) darkMode() {
	tb.t.Helper()
	tb.media("dark")
}

// do runs actions, each bounded by actionTimeout, and fails the test on an
// error.
func (tb *tab) do(actions ...chromedp.Action[chromedp.Void]) {
	tb.t.Helper()
	for _, a := range actions {
		ctx, cancel := context.WithTimeout(tb.ctx, actionTimeout)
		err := chromedp.Do(ctx, a)
		cancel()
		if err != nil {
			tb.fail("browser action: %v", err)
		}
	}
}

// open navigates to url and waits for the page's first heading.
func (tb *tab) open(url string) {
	tb.t.Helper()
	tb.do(chromedp.Navigate(url))
	tb.waitFor("a page heading", `document.querySelector('main h1') !== null`)
}

// click clicks the first element matching a CSS selector (waiting for it
// to be visible).
func (tb *tab) click(sel string) {
	tb.t.Helper()
	tb.do(chromedp.Click(chromedp.CSS(sel)))
}

// eval evaluates a JavaScript expression in the page.
func eval[T any](tb *tab, expr string) T {
	tb.t.Helper()
	ctx, cancel := context.WithTimeout(tb.ctx, actionTimeout)
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr))
	if err != nil {
		tb.fail("evaluating %s: %v", expr, err)
	}
	return v
}

// waitFor polls a JavaScript condition in the page until it is truthy,
// failing after waitTimeout with a screenshot and the page's text.
func (tb *tab) waitFor(what, cond string) {
	tb.t.Helper()
	ctx, cancel := context.WithTimeout(tb.ctx, waitTimeout+5*time.Second)
	defer cancel()
	_, err := chromedp.Run(ctx, chromedp.Poll[chromedp.Void](cond,
		chromedp.WithPollingInterval(50*time.Millisecond), chromedp.WithPollingTimeout(waitTimeout)))
	if err != nil {
		tb.fail("waiting for %s (%s): %v", what, cond, err)
	}
}

// text returns the text of the first element matching a CSS selector, ""
// when there is none.
func (tb *tab) text(sel string) string {
	tb.t.Helper()
	return eval[string](tb, fmt.Sprintf(`(document.querySelector(%q) || {textContent: ''}).textContent`, sel))
}

// fail ends the test with the page's state: its URL, its text and a
// screenshot among the artifacts.
func (tb *tab) fail(format string, args ...any) {
	tb.t.Helper()
	msg := fmt.Sprintf(format, args...)
	ctx, cancel := context.WithTimeout(tb.ctx, 5*time.Second)
	defer cancel()
	state, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`location.href + '\n' + document.body.innerText`))
	if png, err := chromedp.Run(ctx, chromedp.CaptureScreenshot()); err == nil {
		name := filepath.Join(artifacts, "failed-"+strings.NewReplacer("/", "_", " ", "_").Replace(tb.t.Name())+".png")
		if os.WriteFile(name, png, 0o644) == nil {
			msg += "\nscreenshot: " + name
		}
	}
	tb.t.Fatalf("%s\npage:\n%s", msg, state)
}

// capture saves a screenshot (the viewport's, or the whole page's) as
// name.png among the artifacts and returns the PNG.
func (tb *tab) capture(name string, whole bool) []byte {
	tb.t.Helper()
	ctx, cancel := context.WithTimeout(tb.ctx, actionTimeout)
	defer cancel()
	shot := chromedp.CaptureScreenshot()
	if whole {
		shot = chromedp.FullScreenshot(100)
	}
	png, err := chromedp.Run(ctx, shot)
	if err != nil {
		tb.fail("screenshot %s: %v", name, err)
	}
	path := filepath.Join(artifacts, name+".png")
	if err := os.WriteFile(path, png, 0o644); err != nil {
		tb.t.Fatal(err)
	}
	tb.t.Logf("screenshot: %s", path)
	return png
}

// fullScreenshot saves the whole page, scrolled, as name.png among the
// artifacts.
func (tb *tab) fullScreenshot(name string) {
	tb.t.Helper()
	tb.capture(name, true)
}

// docImages are the screenshots docs/dashboard.md shows, as
// docs/img/dashboard-<name>.png.
var docImages = map[string]bool{
	"overview": true, "tasks": true, "task": true, "workflow": true, "dead-letters": true, "schedules": true, "workers": true, "audit": true, "history": true,
	"mobile-overview": true, "mobile-task": true, "dark-overview": true, "dark-task": true, "api-key": true, "unauthorized": true, "disconnected": true, "role-read": true,
	"limit-form": true, "schedule-form": true, "workflows": true, "messages": true,
}

// screenshot saves the viewport as name.png among the artifacts (and in
// docs/img when docs/dashboard.md shows it and DTQ_UPDATE_DOCS=1).
func (tb *tab) screenshot(name string) {
	tb.t.Helper()
	png := tb.capture(name, false)
	if docImages[name] && os.Getenv("DTQ_UPDATE_DOCS") == "1" {
		dir := filepath.Join("..", "..", "docs", "img")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			tb.t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "dashboard-"+name+".png"), png, 0o644); err != nil {
			tb.t.Fatal(err)
		}
	}
}

// scriptReport is what noScriptRan looks at.
type scriptReport struct {
	XSS     any      `json:"xss"`     // window.__xss, set by the markup the tests inject
	Title   string   `json:"title"`   // document.title
	CSP     []string `json:"csp"`     // Content-Security-Policy violations
	Dialogs []string `json:"dialogs"` // alert, confirm or prompt calls
	Foreign []string `json:"foreign"` // elements of main that the dashboard never makes
}

func (r scriptReport) clean() bool {
	return r.XSS == nil && !strings.Contains(r.Title, "pwned") && len(r.CSP) == 0 && len(r.Dialogs) == 0 && len(r.Foreign) == 0
}

// report reads the page's scriptReport.
func (tb *tab) report() scriptReport {
	tb.t.Helper()
	return eval[scriptReport](tb, reportJS)
}

// reportJS is the JavaScript of a scriptReport.
const reportJS = `({
	xss: window.__xss === undefined ? null : window.__xss,
	title: document.title,
	csp: window.__csp || [],
	dialogs: window.__dialogs || [],
	foreign: [...document.querySelectorAll('main img, main script, main iframe, main svg:not(.chart-svg), main [onerror], main [onload], main [onclick]')].map((e) => e.outerHTML),
})`

// dirtyJS is the JavaScript condition "the scriptReport is not clean", so
// that a wait for text ends as soon as the page misbehaves.
const dirtyJS = `((r) => r.xss !== null || r.title.includes('pwned') || r.csp.length > 0 || r.dialogs.length > 0 || r.foreign.length > 0)(` + reportJS + `)`

// noScriptRan fails when anything in the page tried to run code from data
// or turned data into markup: a global the injected markup would set, a
// changed title, a CSP violation, a dialog, or an element in main that the
// dashboard never makes (<img>, <script>, <iframe>, handler attributes).
// Inline handlers are blocked by the CSP, so the check does not rely on
// them running: markup that became elements is caught by the elements
// themselves and by the CSP violations they cause.
func (tb *tab) noScriptRan(title string) {
	tb.t.Helper()
	r := tb.report()
	if !r.clean() {
		tb.fail("task data ran or became markup: window.__xss=%v title=%q CSP violations=%v dialogs=%v elements=%v", r.XSS, r.Title, r.CSP, r.Dialogs, r.Foreign)
	}
	if title != "" && !strings.Contains(r.Title, title) {
		tb.fail("title %q, want it to contain %q", r.Title, title)
	}
}

// sendKeys types text into the first element matching a CSS selector.
func sendKeys(sel, text string) chromedp.Action[chromedp.Void] {
	return chromedp.SendKeys(chromedp.CSS(sel), text)
}

// keyTab and keyEnter press a key in the focused element.
func keyTab() chromedp.Action[chromedp.Void]   { return chromedp.KeyEvent(kb.Tab) }
func keyEnter() chromedp.Action[chromedp.Void] { return chromedp.KeyEvent(kb.Enter) }
