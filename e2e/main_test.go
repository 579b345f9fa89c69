// Package e2e holds black-box tests: they build the dtq binary, start it as
// a child process (on the embedded backend or on a redis-server the test
// started) and talk to it over HTTP only.
package e2e

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/dtq-dev/dtq/internal/redistest"
)

// binary is the dtq binary built for this test run.
var binary string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "dtq-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binary = filepath.Join(dir, "dtq")
	goBin := filepath.Join(runtime.GOROOT(), "bin", "go")
	build := exec.Command(goBin, "build", "-race", "-o", binary, "github.com/dtq-dev/dtq/cmd/dtq")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "e2e: building dtq:", err)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := redistest.Main(m)
	os.RemoveAll(dir)
	os.Exit(code)
}

// proc is a running dtq child process.
type proc struct {
	t    *testing.T
	cmd  *exec.Cmd
	url  string // http://addr
	exit chan error

	mu   sync.Mutex
	logs []map[string]any // stderr JSON lines, in order
	text []string         // stderr lines that are not JSON
}

// start runs `dtq args...` with env added to the environment, waits until
// it logs "dtq is ready", and stops it (SIGTERM) at cleanup.
func start(t *testing.T, env []string, args ...string) *proc {
	t.Helper()
	cmd := exec.Command(binary, args...)
	cmd.Env = append(os.Environ(), env...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &proc{t: t, cmd: cmd, exit: make(chan error, 1)}
	ready := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			var rec map[string]any
			p.mu.Lock()
			if json.Unmarshal(sc.Bytes(), &rec) == nil {
				p.logs = append(p.logs, rec)
				if rec["msg"] == "dtq is ready" {
					addr, _ := rec["addr"].(string)
					ready <- addr
				}
			} else {
				p.text = append(p.text, sc.Text())
			}
			p.mu.Unlock()
		}
		p.exit <- cmd.Wait()
	}()
	t.Cleanup(func() { p.stop() })
	select {
	case addr := <-ready:
		p.url = "http://" + addr
	case err := <-p.exit:
		p.exit <- err
		t.Fatalf("dtq %s exited before it was ready (%v):\n%s", strings.Join(args, " "), err, p.stderr())
	case <-time.After(60 * time.Second):
		t.Fatalf("dtq %s not ready after 60s:\n%s", strings.Join(args, " "), p.stderr())
	}
	return p
}

// stop sends SIGTERM and waits for the exit, killing the process after
// 30s; it returns the exit error.
func (p *proc) stop() error {
	if p.cmd.ProcessState == nil {
		p.cmd.Process.Signal(syscall.SIGTERM)
	}
	select {
	case err := <-p.exit:
		p.exit <- err
		return err
	case <-time.After(30 * time.Second):
		p.cmd.Process.Kill()
		p.t.Errorf("dtq did not stop within 30s of SIGTERM:\n%s", p.stderr())
		return <-p.exit
	}
}

// stderr returns what the process logged so far.
func (p *proc) stderr() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	var b strings.Builder
	for _, rec := range p.logs {
		j, _ := json.Marshal(rec)
		b.Write(j)
		b.WriteByte('\n')
	}
	for _, l := range p.text {
		b.WriteString(l)
		b.WriteByte('\n')
	}
	return b.String()
}

// logged returns the JSON log records so far.
func (p *proc) logged() []map[string]any {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]map[string]any(nil), p.logs...)
}

// resp is an HTTP answer with its JSON body decoded (when it is JSON).
type resp struct {
	status int
	header http.Header
	raw    []byte
	body   map[string]any
}

func (r *resp) str(field string) string {
	s, _ := r.body[field].(string)
	return s
}

func (r *resp) errCode() string {
	e, _ := r.body["error"].(map[string]any)
	c, _ := e["code"].(string)
	return c
}

// do sends a request with a JSON body (Content-Type application/json when
// body is not empty) and extra headers as name, value pairs.
func (p *proc) do(method, path, body string, headers ...string) *resp {
	p.t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, p.url+path, rd)
	if err != nil {
		p.t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	return p.send(req)
}

func (p *proc) send(req *http.Request) *resp {
	p.t.Helper()
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		p.t.Fatalf("%s %s: %v", req.Method, req.URL.Path, err)
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	r := &resp{status: res.StatusCode, header: res.Header, raw: raw}
	if strings.HasPrefix(res.Header.Get("Content-Type"), "application/json") {
		if err := json.Unmarshal(raw, &r.body); err != nil {
			p.t.Fatalf("%s %s: JSON answer does not parse: %v\n%s", req.Method, req.URL.Path, err, raw)
		}
	}
	return r
}

// must sends a request and fails unless the status is want.
func (p *proc) must(want int, method, path, body string, headers ...string) *resp {
	p.t.Helper()
	r := p.do(method, path, body, headers...)
	if r.status != want {
		p.t.Fatalf("%s %s %.200s: status %d, want %d: %s", method, path, body, r.status, want, r.raw)
	}
	return r
}

// waitStatus polls a task until it has status want.
func (p *proc) waitStatus(id, want string) *resp {
	p.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		r := p.must(http.StatusOK, "GET", "/api/v1/tasks/"+id, "")
		if r.str("status") == want {
			return r
		}
		if time.Now().After(deadline) {
			p.t.Fatalf("task %s is %s, want %s: %s", id, r.str("status"), want, r.raw)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// checkNo5xx fails when the process logged a panic.
func (p *proc) checkNoPanic() {
	p.t.Helper()
	if s := p.stderr(); strings.Contains(s, "panic") || bytes.Contains([]byte(s), []byte("goroutine ")) {
		p.t.Fatalf("dtq logged a panic:\n%s", s)
	}
}

// redisURL returns the URL of the test's shared redis-server.
func redisURL(t *testing.T) string {
	return "redis://" + redistest.Shared(t).Addr
}

// metrics returns the process's /metrics text.
func (p *proc) metrics() string {
	p.t.Helper()
	r := p.must(http.StatusOK, "GET", "/metrics", "")
	return string(r.raw)
}

// metricValue returns the value of the series named exactly series (with
// its labels), 0 when it is absent.
func metricValue(t *testing.T, text, series string) float64 {
	t.Helper()
	for _, line := range strings.Split(text, "\n") {
		if v, ok := strings.CutPrefix(line, series+" "); ok {
			var f float64
			if _, err := fmt.Sscan(v, &f); err != nil {
				t.Fatalf("metric %s: %q", series, line)
			}
			return f
		}
	}
	return 0
}
