// Package workers tests the example workers in other languages (python/,
// node/) against `dtq serve` on a real redis-server: the leases of
// docs/workers.md, from the worker's side.
package workers

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"reflect"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/dtq-dev/dtq"
	"github.com/dtq-dev/dtq/internal/proctest"
	"github.com/dtq-dev/dtq/internal/redisconn"
	"github.com/dtq-dev/dtq/internal/redistest"
)

// binary is the dtq binary built for this test run.
var binary string

func TestMain(m *testing.M) {
	os.Exit(proctest.Main(m, "workers", nil, &binary, redistest.Main))
}

// languages are the example workers: the command that runs each (its
// runtime must be installed: `make deps` installs python3 and nodejs).
var languages = []struct{ name, runtime, script string }{
	{"python", "python3", "python/worker.py"},
	{"node", "node", "node/worker.mjs"},
}

// leaseSeconds is the example workers' lease timeout here: short, so that
// a lost worker's task is taken over within a few seconds.
const leaseSeconds = "1"

// proc is one example worker process and the events it printed.
type proc struct {
	name string
	cmd  *exec.Cmd
	mu   sync.Mutex
	evs  []map[string]any
}

func (p *proc) events() []map[string]any {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]map[string]any(nil), p.evs...)
}

// has reports whether p printed event for task.
func (p *proc) has(event, task string) bool {
	for _, e := range p.events() {
		if e["event"] == event && e["task"] == task {
			return true
		}
	}
	return false
}

// startWorker runs the example worker of lang as name against url, given
// as the dtq CLI's DTQ_API_URL: the ready event says the worker took it.
func startWorker(t *testing.T, runtime, script, name, url string) *proc {
	t.Helper()
	p := startScript(t, []string{"DTQ_API_URL=" + url}, name, runtime, script, "--worker", name, "--queues", "poly",
		"--concurrency", "8", "--lease-seconds", leaseSeconds)
	if got := p.events()[0]["url"]; got != url {
		t.Fatalf("%s with DTQ_API_URL=%s is ready for %v", name, url, got)
	}
	return p
}

// scriptEnv is this process's environment without any DTQ_ variable, and
// with env.
func scriptEnv(env ...string) []string {
	var out []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "DTQ_") {
			out = append(out, kv)
		}
	}
	out = append(out, "PYTHONDONTWRITEBYTECODE=1")
	for _, kv := range env {
		if kv != "" {
			out = append(out, kv)
		}
	}
	return out
}

// startScript runs an example process as name with env and collects the
// JSON events it prints, once it printed ready.
func startScript(t *testing.T, env []string, name, runtime string, args ...string) *proc {
	t.Helper()
	cmd := exec.Command(runtime, args...)
	cmd.Env = scriptEnv(env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("%s %v: %v (make deps installs python3 and nodejs)", runtime, args, err)
	}
	p := &proc{name: name, cmd: cmd}
	ready := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(out)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		once := sync.Once{}
		for sc.Scan() {
			var ev map[string]any
			if json.Unmarshal(sc.Bytes(), &ev) != nil {
				continue
			}
			p.mu.Lock()
			p.evs = append(p.evs, ev)
			p.mu.Unlock()
			if ev["event"] == "ready" {
				once.Do(func() { close(ready) })
			}
		}
	}()
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	select {
	case <-ready:
	case <-time.After(30 * time.Second):
		t.Fatalf("%s did not print ready", name)
	}
	return p
}

// eventually polls cond until it holds or d passes.
func eventually(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not true within %v", what, d)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// The example workers against dtq serve on real Redis: 1,000 tasks with
// retries, a worker SIGKILLed mid-task (its task completes on another, one
// terminal state), a frozen worker's stale lease refused, a cancellation
// seen by the holder.
func TestExampleWorkers(t *testing.T) {
	for _, lang := range languages {
		t.Run(lang.name, func(t *testing.T) {
			t.Parallel()
			srv := redistest.Start(t, nil)
			serve := proctest.Start(t, binary, &proctest.StartOpts{DropDTQEnv: true}, "serve", "--redis", "redis://"+srv.Addr,
				"--addr", "127.0.0.1:0", "--queues", "default")
			c, err := dtq.NewClient(redisconn.Wrap(redistest.Client(t, srv)), nil)
			if err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()
			workers := map[string]*proc{}
			spawned := 0
			spawn := func() {
				spawned++
				name := fmt.Sprintf("%s-%d", lang.name, spawned)
				workers[name] = startWorker(t, lang.runtime, lang.script, name, serve.URL)
			}
			spawn()
			spawn()
			holder := func(id string) *proc {
				task, err := c.Get(ctx, id)
				if err != nil || task.Status != dtq.StatusRunning {
					return nil
				}
				return workers[task.Worker[len("http:"):]]
			}
			waitStatus := func(id string, want dtq.Status) *dtq.Task {
				var task *dtq.Task
				eventually(t, 30*time.Second, id+" is "+string(want), func() bool {
					task, err = c.Get(ctx, id)
					return err == nil && task.Status == want
				})
				return task
			}
			poly := &dtq.EnqueueOpts{Queue: "poly"}

			// 1,000 tasks, every fifth failing its first attempt
			reqs := make([]dtq.EnqueueRequest, 1000)
			for i := range reqs {
				reqs[i] = dtq.EnqueueRequest{Type: "echo", Payload: i, Opts: poly}
				if i%5 == 0 {
					reqs[i] = dtq.EnqueueRequest{Type: "flaky", Payload: map[string]int{"fail_times": 1}, Opts: poly}
				}
			}
			res, err := c.EnqueueMany(ctx, reqs)
			if err != nil {
				t.Fatal(err)
			}
			eventually(t, 120*time.Second, "1,000 tasks succeed", func() bool {
				st, err := dtq.NewAdmin(c).Stats(ctx, "poly")
				return err == nil && st.Succeeded == 1000
			})
			for i, r := range res {
				task, err := c.Get(ctx, r.Task.ID)
				if err != nil || task.Status != dtq.StatusSucceeded {
					t.Fatalf("task %d: %+v %v", i, task, err)
				}
				want := 1
				if i%5 == 0 {
					want = 2
				}
				if task.Attempt != want || len(task.History) != want {
					t.Fatalf("task %d: attempt %d, %d executions; want %d", i, task.Attempt, len(task.History), want)
				}
				if i%5 != 0 && !sameJSON(task.Result, fmt.Sprintf(`{"echo":%d,"attempt":1}`, i)) {
					t.Fatalf("task %d: result %s", i, task.Result)
				}
			}
			if st, _ := dtq.NewAdmin(c).Stats(ctx, "poly"); st.Dead != 0 || st.Retried != 200 {
				t.Fatalf("stats %+v: want 200 retries and nothing dead", st)
			}

			// SIGKILL the worker running a task: it completes on another,
			// its crash counted, one terminal state
			task := must(t, c, "sleep", map[string]float64{"seconds": 1.5}, poly)
			var victim *proc
			eventually(t, 10*time.Second, "the sleep runs", func() bool { victim = holder(task); return victim != nil })
			victim.cmd.Process.Kill()
			victim.cmd.Wait()
			delete(workers, victim.name)
			spawn()
			done := waitStatus(task, dtq.StatusSucceeded)
			if !oneOK(done) || done.Worker == "http:"+victim.name {
				t.Fatalf("after the kill: %+v", done)
			}

			// freeze a holder past its lease: another takes the task over,
			// and the frozen one's late report is refused
			task = must(t, c, "sleep", map[string]float64{"seconds": 1.5}, poly)
			var frozen *proc
			eventually(t, 10*time.Second, "the sleep runs", func() bool { frozen = holder(task); return frozen != nil })
			frozen.cmd.Process.Signal(syscall.SIGSTOP)
			var taker string
			eventually(t, 20*time.Second, "another worker takes it over", func() bool {
				got, err := c.Get(ctx, task)
				if err == nil && got.Status == dtq.StatusRunning && got.Worker != "http:"+frozen.name {
					taker = got.Worker
				}
				return taker != ""
			})
			frozen.cmd.Process.Signal(syscall.SIGCONT)
			done = waitStatus(task, dtq.StatusSucceeded)
			for deadline := time.Now().Add(10 * time.Second); !frozen.has("lost", task); time.Sleep(20 * time.Millisecond) {
				if time.Now().After(deadline) || frozen.has("done", task) {
					got, _ := c.Get(ctx, task)
					t.Fatalf("the frozen worker did not learn its lease is lost: %v\n%+v", frozen.events(), got)
				}
			}
			if done.Worker != taker || !oneOK(done) {
				t.Fatalf("after the takeover: %+v (taken over by %s)", done, taker)
			}
			if frozen.has("done", task) {
				t.Fatal("the frozen worker's completion was accepted")
			}

			// a cancellation reaches the holder through its extension
			task = must(t, c, "sleep", map[string]int{"seconds": 60}, poly)
			var h *proc
			eventually(t, 10*time.Second, "the long sleep runs", func() bool { h = holder(task); return h != nil })
			eventually(t, 10*time.Second, "its progress shows", func() bool {
				got, err := c.Get(ctx, task)
				return err == nil && got.Progress != nil && got.Progress.Note == "sleeping 60 s"
			})
			if _, err := c.Cancel(ctx, task); err != nil {
				t.Fatal(err)
			}
			waitStatus(task, dtq.StatusCancelled)
			if !h.has("cancel_seen", task) {
				t.Fatalf("%s did not see the cancellation: %v", h.name, h.events())
			}
			sameAsGo(t, c, workers)
			serve.CheckNoPanic()
		})
	}
}

// sameAsGo submits each example task twice, to the queue the Go handlers
// of dtq serve run (default) and to the example workers' (poly): each pair
// ends the same, with the same result or error. One payload vocabulary for
// every language (issue 30: sleep took {"seconds"} in Go, {"ms"} here).
func sameAsGo(t *testing.T, c *dtq.Client, workers map[string]*proc) {
	t.Helper()
	ctx := context.Background()
	for _, tc := range []struct{ typ, payload string }{
		{"echo", `{"a":[1,"x"]}`},
		{"echo", `null`},
		{"sleep", `{"seconds":0.01}`},
		{"sleep", `{}`},
		{"sleep", `{"seconds":-1}`},
		{"flaky", `{"fail_times":1}`},
		{"always_fail", `{"permanent":true}`},
	} {
		var ids [2]string
		for i, q := range []string{"default", "poly"} {
			ids[i] = must(t, c, tc.typ, json.RawMessage(tc.payload), &dtq.EnqueueOpts{Queue: q})
		}
		var ends [2]*dtq.Task
		for i, id := range ids {
			eventually(t, 30*time.Second, id+" ends", func() bool {
				task, err := c.Get(ctx, id)
				ends[i] = task
				return err == nil && (task.Status == dtq.StatusSucceeded || task.Status == dtq.StatusDead)
			})
		}
		g, x := ends[0], ends[1]
		if g.Status != x.Status || g.Attempt != x.Attempt || !sameJSON(x.Result, string(g.Result)) || g.LastError != x.LastError {
			t.Errorf("%s %s: Go handler %s attempt %d result %s error %q; example worker %s attempt %d result %s error %q",
				tc.typ, tc.payload, g.Status, g.Attempt, g.Result, g.LastError, x.Status, x.Attempt, x.Result, x.LastError)
		}
	}
}

// sameJSON reports whether got and want are the same JSON value (or both
// none: a failed task has no result).
func sameJSON(got json.RawMessage, want string) bool {
	if len(got) == 0 || want == "" {
		return len(got) == 0 && want == ""
	}
	var a, b any
	return json.Unmarshal(got, &a) == nil && json.Unmarshal([]byte(want), &b) == nil && reflect.DeepEqual(a, b)
}

// The example workers' --url defaults to DTQ_API_URL, else to where dtq
// serve listens, as the dtq CLI's --api-url does (issue 30: they read
// DTQ_URL and defaulted to localhost:8080). Read from the scripts' own
// argument parsing, so that nothing connects to port 8000.
func TestExampleWorkersDefaultURL(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ runtime, code string }{
		{"python3", `import sys; sys.path.insert(0, "python"); import worker; print(worker.parse_args([]).url)`},
		{"python3", `import sys; sys.path.insert(0, "python"); import consumer; print(consumer.parse_args([]).url)`},
		{"node", `import("./node/worker.mjs").then((m) => console.log(m.args().url))`},
	} {
		flag := "-c"
		if c.runtime == "node" {
			flag = "-e"
		}
		for env, want := range map[string]string{"": "http://localhost:8000", "DTQ_API_URL=http://127.0.0.1:9": "http://127.0.0.1:9"} {
			cmd := exec.Command(c.runtime, flag, c.code)
			cmd.Env = scriptEnv(env)
			out, err := cmd.Output()
			if got := strings.TrimSpace(string(out)); err != nil || got != want {
				t.Errorf("%s %q with %q: %q %v, want %s", c.runtime, c.code, env, got, err, want)
			}
		}
	}
}

// oneOK reports whether task ended in one execution that succeeded, after
// executions lost with their worker only (counted as crashes, not
// attempts). A takeover may count more than one: a lease the server
// started for a worker frozen or killed during its long poll is lost too.
func oneOK(task *dtq.Task) bool {
	h := task.History
	if task.Attempt != 1 || task.Crashes < 1 || len(h) != task.Crashes+1 || h[len(h)-1].Outcome != dtq.OutcomeSucceeded {
		return false
	}
	for _, x := range h[:len(h)-1] {
		if x.Outcome != dtq.OutcomeLost {
			return false
		}
	}
	return true
}

// must enqueues a task and returns its id.
func must(t *testing.T, c *dtq.Client, typ string, payload any, o *dtq.EnqueueOpts) string {
	t.Helper()
	res, err := c.Enqueue(context.Background(), typ, payload, o)
	if err != nil {
		t.Fatal(err)
	}
	return res.Task.ID
}
