package proctest

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Bounds of the waits on a process.
const (
	readyTimeout = 60 * time.Second // from the start to "dtq is ready"
	stopTimeout  = 30 * time.Second // from SIGTERM to the exit, then SIGKILL
)

// BuildOpts are the options of Build.
type BuildOpts struct {
	// Race builds the binary with the race detector. Defaults to false.
	Race bool
}

// Build compiles github.com/dtq-dev/dtq/cmd/dtq to the file out with the go
// command of the toolchain running the test; the compiler's output goes to
// os.Stderr. A nil opts means the defaults. It blocks until the build ends.
func Build(out string, opts *BuildOpts) error {
	return BuildPackage(out, "github.com/dtq-dev/dtq/cmd/dtq", opts)
}

// BuildPackage compiles the main package pkg to the file out, as Build
// compiles dtq.
func BuildPackage(out, pkg string, opts *BuildOpts) error {
	if opts == nil {
		opts = &BuildOpts{}
	}
	args := []string{"build"}
	if opts.Race {
		args = append(args, "-race")
	}
	args = append(args, "-o", out, pkg)
	build := exec.Command(filepath.Join(runtime.GOROOT(), "bin", "go"), args...)
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		return fmt.Errorf("proctest: building %s: %w", pkg, err)
	}
	return nil
}

// Main is the TestMain of a package that tests the built dtq binary: it
// builds dtq (with opts) into a temporary folder, sets *binary to its path,
// runs run(m) — redistest.Main, or a function that builds more into the
// same folder first — and removes the folder. A failed build prints why,
// prefixed with name, and returns 1:
//
//	func TestMain(m *testing.M) { os.Exit(proctest.Main(m, "e2e", nil, &binary, redistest.Main)) }
func Main(m *testing.M, name string, opts *BuildOpts, binary *string, run func(*testing.M) int) int {
	dir, err := os.MkdirTemp("", "dtq-"+name+"-")
	if err != nil {
		fmt.Fprintln(os.Stderr, name+":", err)
		return 1
	}
	defer os.RemoveAll(dir)
	*binary = filepath.Join(dir, "dtq")
	if err := Build(*binary, opts); err != nil {
		fmt.Fprintln(os.Stderr, name+":", err)
		return 1
	}
	return run(m)
}

// StartOpts are the options of Start.
type StartOpts struct {
	// Env holds environment variables (NAME=value) added to the test's own
	// environment. Defaults to none.
	Env []string
	// DropDTQEnv leaves the DTQ_* variables of the test's own environment
	// out, so that only Env configures the process. Defaults to false: the
	// process inherits them.
	DropDTQEnv bool
	// CheckAtStop makes Stop fail the test (without stopping it) when the
	// process logged a panic or a data race, as CheckNoPanic does. Defaults
	// to false: the test calls CheckNoPanic where it wants the check.
	CheckAtStop bool
}

// Proc is a running dtq child process.
type Proc struct {
	// URL is the base URL of the process's HTTP server (http://host:port),
	// from the addr of its "dtq is ready" log line.
	URL string

	t           testing.TB
	cmd         *exec.Cmd
	exit        chan error // holds the exit error once the process is gone
	checkAtStop bool

	mu    sync.Mutex
	lines []string // stderr, line by line
}

// Start runs `binary args...` (with opts; nil means the defaults), waits
// until it logs the JSON line {"msg":"dtq is ready","addr":…} and returns
// it. It fails the test when the process exits first or is not ready
// within 60 s. The process is stopped with Stop at the test's cleanup, and
// killed (SIGKILL) if the test binary dies.
func Start(t testing.TB, binary string, opts *StartOpts, args ...string) *Proc {
	t.Helper()
	if opts == nil {
		opts = &StartOpts{}
	}
	cmd := exec.Command(binary, args...)
	for _, kv := range os.Environ() {
		if !opts.DropDTQEnv || !strings.HasPrefix(kv, "DTQ_") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, opts.Env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &Proc{t: t, cmd: cmd, exit: make(chan error, 1), checkAtStop: opts.CheckAtStop}
	ready := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			p.mu.Lock()
			p.lines = append(p.lines, sc.Text())
			p.mu.Unlock()
			var rec struct {
				Msg  string `json:"msg"`
				Addr string `json:"addr"`
			}
			if json.Unmarshal(sc.Bytes(), &rec) == nil && rec.Msg == "dtq is ready" {
				select {
				case ready <- rec.Addr:
				default: // only the first one counts
				}
			}
		}
		p.exit <- cmd.Wait()
	}()
	t.Cleanup(func() { p.Stop() })
	select {
	case addr := <-ready:
		p.URL = "http://" + addr
	case err := <-p.exit:
		p.exit <- err
		t.Fatalf("dtq %s exited before it was ready (%v):\n%s", strings.Join(args, " "), err, p.Stderr())
	case <-time.After(readyTimeout):
		t.Fatalf("dtq %s not ready after %v:\n%s", strings.Join(args, " "), readyTimeout, p.Stderr())
	}
	return p
}

// Signal sends sig to the process; it does not wait.
func (p *Proc) Signal(sig os.Signal) error {
	return p.cmd.Process.Signal(sig)
}

// Freeze sends SIGSTOP and waits until the kernel reports the process
// stopped (a signal is delivered asynchronously: on a loaded machine the
// process may run on for a moment after Signal returns).
func (p *Proc) Freeze() error {
	if err := p.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		return err
	}
	stat := "/proc/" + strconv.Itoa(p.cmd.Process.Pid) + "/stat"
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		b, err := os.ReadFile(stat)
		if err != nil {
			return err
		}
		// "pid (comm) S …": the state follows the last ')'.
		if i := bytes.LastIndexByte(b, ')'); i >= 0 && i+2 < len(b) && b[i+2] == 'T' {
			return nil
		}
	}
	return errors.New("proctest: the process did not stop within 10s of SIGSTOP")
}

// Stop sends SIGTERM (unless the process already exited) and waits for the
// exit; after 30 s it kills the process and fails the test. It returns the
// exit error and may be called any number of times. With
// StartOpts.CheckAtStop it then checks stderr as CheckNoPanic does, failing
// the test with Errorf.
func (p *Proc) Stop() error {
	// Once the process is gone, Signal only returns os.ErrProcessDone
	// (reading cmd.ProcessState here would race with cmd.Wait).
	p.cmd.Process.Signal(syscall.SIGTERM)
	var err error
	select {
	case err = <-p.exit:
		p.exit <- err
	case <-time.After(stopTimeout):
		p.cmd.Process.Kill()
		p.t.Errorf("dtq did not stop within %v of SIGTERM:\n%s", stopTimeout, p.Stderr())
		err = <-p.exit
		p.exit <- err
	}
	if p.checkAtStop && p.panicked() {
		p.t.Errorf("dtq logged a panic or a race:\n%s", p.Stderr())
	}
	return err
}

// Wait waits up to d for the process to exit by itself (no signal) and
// returns its exit error; exited is false when it still runs after d.
func (p *Proc) Wait(d time.Duration) (err error, exited bool) {
	select {
	case err = <-p.exit:
		p.exit <- err
		return err, true
	case <-time.After(d):
		return nil, false
	}
}

// Stderr returns what the process wrote to stderr so far.
func (p *Proc) Stderr() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	var b strings.Builder
	for _, l := range p.lines {
		b.WriteString(l)
		b.WriteByte('\n')
	}
	return b.String()
}

// Logged returns the JSON log records the process wrote so far, in order;
// stderr lines that are not JSON objects are left out.
func (p *Proc) Logged() []map[string]any {
	p.mu.Lock()
	lines := append([]string(nil), p.lines...)
	p.mu.Unlock()
	var recs []map[string]any
	for _, l := range lines {
		var rec map[string]any
		if json.Unmarshal([]byte(l), &rec) == nil && rec != nil {
			recs = append(recs, rec)
		}
	}
	return recs
}

// CheckNoPanic fails the test (Fatalf) when the process logged a panic or
// a data race.
func (p *Proc) CheckNoPanic() {
	p.t.Helper()
	if p.panicked() {
		p.t.Fatalf("dtq logged a panic or a race:\n%s", p.Stderr())
	}
}

// panicked reports whether stderr shows a panic or a race report.
func (p *Proc) panicked() bool {
	s := p.Stderr()
	return strings.Contains(s, "panic") || strings.Contains(s, "goroutine ") || strings.Contains(s, "DATA RACE")
}
