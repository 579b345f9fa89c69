// Package conformance runs one list of worker behaviours (README.md)
// against every worker implementation — the Go worker, the Python library
// and the TypeScript library — each scenario on its own redis-server and
// `dtq api`, the worker a separate process, checked through the HTTP API.
package conformance_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/dtq-dev/dtq/internal/proctest"
	"github.com/dtq-dev/dtq/internal/redistest"
)

// The binaries built for this run.
var dtqBin, goWorkerBin string

func TestMain(m *testing.M) {
	os.Exit(proctest.Main(m, "conformance", nil, &dtqBin, func(m *testing.M) int {
		goWorkerBin = filepath.Join(filepath.Dir(dtqBin), "goworker")
		if err := proctest.BuildPackage(goWorkerBin, "github.com/dtq-dev/dtq/conformance/goworker", nil); err != nil {
			fmt.Fprintln(os.Stderr, "conformance:", err)
			return 1
		}
		return redistest.Main(m)
	}))
}

// impl is a worker implementation: how to start its conformance worker.
type impl struct {
	name string
	// http: it works over the lease protocol (the Go worker talks to Redis).
	http bool
	// argv is the command before the conformance flags.
	argv func() []string
}

var impls = []impl{
	{name: "go", argv: func() []string { return []string{goWorkerBin} }},
	{name: "python", http: true, argv: func() []string {
		return []string{"python3", "../clients/python/tests/conformance_worker.py"}
	}},
	{name: "typescript", http: true, argv: func() []string {
		return []string{"node", "../clients/typescript/test/conformance-worker.mjs"}
	}},
}

// chosen are the implementations this run checks: DTQ_CONFORMANCE names
// them (comma-separated), else all. A missing runtime fails the run.
func chosen(t *testing.T) []impl {
	want := os.Getenv("DTQ_CONFORMANCE")
	var out []impl
	for _, im := range impls {
		if want != "" && !slices.Contains(strings.Split(want, ","), im.name) {
			continue
		}
		if _, err := exec.LookPath(im.argv()[0]); err != nil {
			t.Fatalf("%s: %s is not installed (make deps installs python3 and nodejs): %v", im.name, im.argv()[0], err)
		}
		out = append(out, im)
	}
	if len(out) == 0 {
		t.Fatalf("DTQ_CONFORMANCE=%q names no implementation (go, python, typescript)", want)
	}
	return out
}

// queue is the queue every scenario's tasks are on.
const queue = "conf"

// env is one scenario's world: a redis-server, `dtq api` on it, and the
// workers the scenario starts.
type env struct {
	t     *testing.T
	impl  impl
	redis *redistest.Server
	api   *proctest.Proc
	n     int
}

func newEnv(t *testing.T, im impl) *env {
	srv := redistest.Start(t, nil)
	api := proctest.Start(t, dtqBin, &proctest.StartOpts{DropDTQEnv: true}, "api", "--redis", "redis://"+srv.Addr,
		"--addr", "127.0.0.1:0")
	return &env{t: t, impl: im, redis: srv, api: api}
}

// worker is a running conformance worker and the events it printed.
type worker struct {
	name string
	cmd  *exec.Cmd
	mu   sync.Mutex
	evs  []string
	exit chan error
}

// start runs a conformance worker of the env's implementation on the
// queue, with flags added to the defaults, and waits for its ready event.
func (e *env) start(flags ...string) *worker {
	e.t.Helper()
	e.n++
	w := &worker{name: fmt.Sprintf("%s-%d", e.impl.name, e.n), exit: make(chan error, 1)}
	argv := append(e.impl.argv(), "--url", e.api.URL, "--redis", "redis://"+e.redis.Addr, "--queues", queue,
		"--worker", w.name, "--lease-seconds", "2")
	argv = append(argv, flags...)
	w.cmd = exec.Command(argv[0], argv[1:]...)
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "DTQ_") {
			w.cmd.Env = append(w.cmd.Env, kv)
		}
	}
	w.cmd.Env = append(w.cmd.Env, "PYTHONDONTWRITEBYTECODE=1", "PYTHONUNBUFFERED=1")
	w.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	w.cmd.Stderr = os.Stderr
	out, err := w.cmd.StdoutPipe()
	if err != nil {
		e.t.Fatal(err)
	}
	if err := w.cmd.Start(); err != nil {
		e.t.Fatal(err)
	}
	ready := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(out)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		once := sync.Once{}
		for sc.Scan() {
			var ev struct {
				Event string `json:"event"`
			}
			if json.Unmarshal(sc.Bytes(), &ev) != nil {
				continue
			}
			w.mu.Lock()
			w.evs = append(w.evs, ev.Event)
			w.mu.Unlock()
			if ev.Event == "ready" {
				once.Do(func() { close(ready) })
			}
		}
		w.exit <- w.cmd.Wait()
	}()
	e.t.Cleanup(func() {
		_ = w.cmd.Process.Signal(syscall.SIGCONT)
		_ = w.cmd.Process.Kill()
		<-w.exited()
	})
	select {
	case <-ready:
	case err := <-w.exit:
		w.exit <- err
		e.t.Fatalf("%s exited before it was ready: %v", w.name, err)
	case <-time.After(30 * time.Second):
		e.t.Fatalf("%s printed no ready event within 30 s", w.name)
	}
	return w
}

// exited is closed (after its exit is known) once the worker has exited.
func (w *worker) exited() <-chan error {
	ch := make(chan error, 1)
	go func() {
		err := <-w.exit
		w.exit <- err
		ch <- err
	}()
	return ch
}

func (w *worker) signal(t *testing.T, sig syscall.Signal) {
	t.Helper()
	if err := w.cmd.Process.Signal(sig); err != nil {
		t.Fatalf("%s: %v: %v", w.name, sig, err)
	}
}

func (w *worker) printed(event string) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Contains(w.evs, event)
}

// holder is how the worker appears as a task's worker.
func (e *env) holder(w *worker) string {
	if e.impl.http {
		return "http:" + w.name
	}
	return w.name
}

// submit submits a task of typ with payload (JSON) and the extra fields
// (`"max_attempts": 3` …) on the queue, and returns its id.
func (e *env) submit(typ, payload string, extra ...string) string {
	e.t.Helper()
	body := fmt.Sprintf(`{"task_type":%q,"queue":%q,"payload":%s`, typ, queue, payload)
	for _, x := range extra {
		body += "," + x
	}
	return e.api.Submit(body + "}")
}

// task is a task's state as GET /api/v1/tasks/{id} answers it.
type task struct {
	Status    string          `json:"status"`
	Attempt   int             `json:"attempt"`
	Crashes   int             `json:"crashes"`
	Worker    string          `json:"worker"`
	Result    json.RawMessage `json:"result"`
	LastError string          `json:"last_error"`
	Progress  *struct {
		Fraction float64 `json:"fraction"`
		Note     string  `json:"note"`
	} `json:"progress"`
	Suspended *struct {
		For string `json:"for"`
	} `json:"suspended"`
	History []struct {
		Worker     string    `json:"worker"`
		Outcome    string    `json:"outcome"`
		Error      string    `json:"error"`
		StartedAt  time.Time `json:"started_at"`
		FinishedAt time.Time `json:"finished_at"`
	} `json:"history"`
}

func (e *env) get(id string) task {
	e.t.Helper()
	var t task
	if err := json.Unmarshal(e.api.Task(id).Raw, &t); err != nil {
		e.t.Fatal(err)
	}
	return t
}

// await polls task id until ok holds (30 s at most) and returns it.
func (e *env) await(id, what string, ok func(task) bool) task {
	e.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		t := e.get(id)
		if ok(t) {
			return t
		}
		if time.Now().After(deadline) {
			e.t.Fatalf("task %s: not %s within 30 s: %+v", id, what, t)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (e *env) awaitStatus(id, status string) task {
	e.t.Helper()
	return e.await(id, status, func(t task) bool { return t.Status == status })
}

// outcomes are a task's history outcomes, in order.
func (t task) outcomes() []string {
	var out []string
	for _, h := range t.History {
		out = append(out, h.Outcome)
	}
	return out
}

// sameJSON reports whether two JSON texts hold the same value.
func sameJSON(a, b string) bool {
	var x, y any
	if json.Unmarshal([]byte(a), &x) != nil || json.Unmarshal([]byte(b), &y) != nil {
		return false
	}
	xb, _ := json.Marshal(x)
	yb, _ := json.Marshal(y)
	return string(xb) == string(yb)
}

// TestConformance runs every scenario against every implementation.
func TestConformance(t *testing.T) {
	ims := chosen(t)
	for _, sc := range scenarios {
		t.Run(sc.name, func(t *testing.T) {
			for _, im := range ims {
				t.Run(im.name, func(t *testing.T) {
					t.Parallel()
					sc.run(newEnv(t, im))
				})
			}
		})
	}
}
