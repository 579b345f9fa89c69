package dtq_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dtq-dev/dtq"
	"github.com/dtq-dev/dtq/internal/redisconn"
	"github.com/redis/rueidis"
)

// The test binary doubles as a worker process: with childWorkerEnv set,
// TestMain runs runChildWorker instead of the tests.
const (
	childWorkerEnv = "DTQ_TEST_CHILD_WORKER"
	childAddrEnv   = "DTQ_TEST_CHILD_ADDR"
	childNSEnv     = "DTQ_TEST_CHILD_NS"
	childEmbedded  = "DTQ_TEST_CHILD_EMBEDDED"
	childVTEnv     = "DTQ_TEST_CHILD_VT"
	// childEffectsEnv names a file the child appends "s|e <worker> <unix
	// ns>" to when a "nap" task starts and ends (O_APPEND: lines of
	// several processes do not interleave).
	childEffectsEnv = "DTQ_TEST_CHILD_EFFECTS"
	// childConcurrencyEnv sets the child worker's Concurrency.
	childConcurrencyEnv = "DTQ_TEST_CHILD_CONCURRENCY"
	// childQueuesEnv sets the child worker's Queues (comma-separated).
	childQueuesEnv = "DTQ_TEST_CHILD_QUEUES"
)

// runChildWorker serves "block" tasks (which never finish) and "nap" tasks
// (which sleep their payload's milliseconds, logging to childEffectsEnv)
// until killed, printing "ready" once started.
func runChildWorker() int {
	opt := rueidis.ClientOption{InitAddress: []string{os.Getenv(childAddrEnv)}, DisableCache: true}
	if os.Getenv(childEmbedded) != "" {
		opt.ForceSingleClient = true
	}
	rc, err := rueidis.NewClient(opt)
	if err != nil {
		fmt.Println("error:", err)
		return 1
	}
	c, err := dtq.NewClient(redisconn.Wrap(rc), &dtq.Config{Namespace: os.Getenv(childNSEnv)})
	if err != nil {
		fmt.Println("error:", err)
		return 1
	}
	vt, _ := time.ParseDuration(os.Getenv(childVTEnv))
	concurrency, _ := strconv.Atoi(os.Getenv(childConcurrencyEnv))
	var queues []string
	if q := os.Getenv(childQueuesEnv); q != "" {
		queues = strings.Split(q, ",")
	}
	w, err := dtq.NewWorker(c, &dtq.WorkerConfig{ID: os.Getenv(childWorkerEnv), VisibilityTimeout: vt, Concurrency: concurrency,
		Queues: queues})
	if err != nil {
		fmt.Println("error:", err)
		return 1
	}
	w.Handle("block", func(ctx context.Context, _ *dtq.Task) (any, error) {
		<-ctx.Done()
		return nil, ctx.Err()
	})
	id := os.Getenv(childWorkerEnv)
	w.Handle("nap", func(ctx context.Context, t *dtq.Task) (any, error) {
		var ms int
		if err := json.Unmarshal(t.Payload, &ms); err != nil {
			return nil, dtq.Permanent(err)
		}
		f, err := os.OpenFile(os.Getenv(childEffectsEnv), os.O_APPEND|os.O_WRONLY|os.O_CREATE, 0o644)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		group, key := t.Group, t.LimitKey
		if group == "" {
			group = "-"
		}
		if key == "" {
			key = "-"
		}
		fmt.Fprintf(f, "s %s %d %s %s\n", id, time.Now().UnixNano(), group, key)
		select {
		case <-time.After(time.Duration(ms) * time.Millisecond):
		case <-ctx.Done():
		}
		fmt.Fprintf(f, "e %s %d %s %s\n", id, time.Now().UnixNano(), group, key)
		return nil, ctx.Err()
	})
	// A workflow's child sleeps its payload's ms and returns it; its
	// callback logs "cb <workflow> <task id> <outcomes> <succeeded>".
	w.Handle("wfchild", func(ctx context.Context, t *dtq.Task) (any, error) {
		var ms int
		_ = json.Unmarshal(t.Payload, &ms)
		select {
		case <-time.After(time.Duration(ms) * time.Millisecond):
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		return ms, nil
	})
	w.Handle("wfcb", func(_ context.Context, t *dtq.Task) (any, error) {
		var outs []struct {
			Status string `json:"status"`
		}
		if err := json.Unmarshal(t.Previous, &outs); err != nil {
			return nil, dtq.Permanent(err)
		}
		ok := 0
		for _, o := range outs {
			if o.Status == dtq.NodeSucceeded {
				ok++
			}
		}
		f, err := os.OpenFile(os.Getenv(childEffectsEnv), os.O_APPEND|os.O_WRONLY|os.O_CREATE, 0o644)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		fmt.Fprintf(f, "cb %s %s %d %d\n", t.Workflow, t.ID, len(outs), ok)
		return len(outs), nil
	})
	// Handlers of the workflow behaviour tests' nodes: wfadd returns its
	// payload plus the previous result (numbers), wfecho its payload,
	// wfcount how many outcomes it got, wffail fails for good.
	w.Handle("wfadd", func(_ context.Context, t *dtq.Task) (any, error) {
		var by, prev int
		if err := json.Unmarshal(t.Payload, &by); err != nil {
			return nil, dtq.Permanent(err)
		}
		if t.Previous != nil {
			if err := json.Unmarshal(t.Previous, &prev); err != nil {
				return nil, dtq.Permanent(err)
			}
		}
		return by + prev, nil
	})
	w.Handle("wfecho", func(_ context.Context, t *dtq.Task) (any, error) { return t.Payload, nil })
	w.Handle("wfcount", func(_ context.Context, t *dtq.Task) (any, error) {
		var outs []json.RawMessage
		if err := json.Unmarshal(t.Previous, &outs); err != nil {
			return nil, dtq.Permanent(err)
		}
		return len(outs), nil
	})
	w.Handle("wffail", func(context.Context, *dtq.Task) (any, error) {
		return nil, dtq.Permanent(errors.New("broken on purpose"))
	})
	// stepper runs three durable steps; each step's fn logs "fn <task>
	// <step> <worker>", each step done logs "after <task> <step>
	// <worker>", and the handler then waits to be killed while the file
	// <effects>.stall-<step> exists. It returns the steps' sum.
	w.Handle("stepper", func(ctx context.Context, t *dtq.Task) (any, error) {
		effects := os.Getenv(childEffectsEnv)
		logLine := func(line string) error {
			f, err := os.OpenFile(effects, os.O_APPEND|os.O_WRONLY|os.O_CREATE, 0o644)
			if err != nil {
				return err
			}
			defer f.Close()
			_, err = fmt.Fprintln(f, line)
			return err
		}
		sum := 0
		for i := 1; i <= 3; i++ {
			name := "step-" + strconv.Itoa(i)
			v, err := dtq.Step(ctx, name, func(context.Context) (int, error) {
				return 10 * i, logLine("fn " + t.ID + " " + name + " " + id)
			})
			if err != nil {
				return nil, err
			}
			sum += v
			if err := logLine("after " + t.ID + " " + name + " " + id); err != nil {
				return nil, err
			}
			if _, err := os.Stat(effects + ".stall-" + name); err == nil {
				<-ctx.Done()
				return nil, ctx.Err()
			}
		}
		return sum, nil
	})
	handleSuspending(w, id)
	handleOrdered(w, id)
	w.Start(context.Background())
	fmt.Println("ready")
	select {}
}

// addr returns the backend's address for another process.
func (e *env) addr() string {
	if e.Server != nil {
		return e.Server.Addr
	}
	return e.Embedded.Server.Addr()
}

// startChildWorker starts a worker process with id and visibility timeout
// vt; it is killed at cleanup.
func startChildWorker(t *testing.T, e *env, id string, vt time.Duration, env ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childWorkerEnv+"="+id, childAddrEnv+"="+e.addr(), childNSEnv+"="+e.Namespace,
		childVTEnv+"="+vt.String())
	cmd.Env = append(cmd.Env, env...)
	if e.Embedded != nil {
		cmd.Env = append(cmd.Env, childEmbedded+"=1")
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil || strings.TrimSpace(line) != "ready" {
		t.Fatalf("child worker: %q %v", line, err)
	}
	return cmd
}

// A worker process killed (SIGKILL) mid-task: another worker takes the task
// over after the visibility timeout and completes it; the task has exactly
// one terminal state, and the crash is counted apart from attempts.
func TestWorkerKilledMidTask(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		child := startChildWorker(t, e, "doomed", 2*time.Second)
		task := e.enqueue("block", nil, nil)
		running := e.waitStatus(task.ID, dtq.StatusRunning, 10*time.Second)
		if running.Worker != "doomed" {
			t.Fatalf("running on %q, want the child worker", running.Worker)
		}
		if err := child.Process.Kill(); err != nil {
			t.Fatal(err)
		}
		child.Wait()
		e.worker(&dtq.WorkerConfig{ID: "survivor", VisibilityTimeout: 300 * time.Millisecond}, map[string]dtq.HandlerFunc{
			"block": func(context.Context, *dtq.Task) (any, error) { return "done", nil },
		})
		done := e.waitStatus(task.ID, dtq.StatusSucceeded, 15*time.Second)
		if done.Attempt != 1 || done.Crashes != 1 || len(done.History) != 2 {
			t.Fatalf("attempt %d crashes %d history %+v", done.Attempt, done.Crashes, done.History)
		}
		h := done.History
		if h[0].Outcome != dtq.OutcomeLost || h[0].Worker != "doomed" || h[1].Outcome != dtq.OutcomeSucceeded || h[1].Worker != "survivor" {
			t.Fatalf("history %+v", h)
		}
		st, _ := dtq.NewAdmin(e.c).Stats(t.Context(), "default")
		if st.Running != 0 || st.Queued != 0 || st.Succeeded != 1 {
			t.Fatalf("stats %+v", st)
		}
	})
}

// A worker whose task was taken over (its renewals lapsed) cannot complete
// it: its late result is rejected and the new execution's stands.
func TestStaleCompletionRejected(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		release := make(chan struct{})
		staleDone := make(chan struct{})
		// A renews every 10s/4: its claim lapses for B (visibility 500ms: long
		// enough that B keeps its own run renewed on a loaded CI machine)
		// long before A's next renewal could notice.
		e.worker(&dtq.WorkerConfig{ID: "A", VisibilityTimeout: 10 * time.Second}, map[string]dtq.HandlerFunc{
			"job": func(context.Context, *dtq.Task) (any, error) {
				<-release
				defer close(staleDone)
				return "from A", nil
			},
		})
		task := e.enqueue("job", nil, nil)
		e.waitStatus(task.ID, dtq.StatusRunning, 10*time.Second)
		bStarted := make(chan struct{})
		e.worker(&dtq.WorkerConfig{ID: "B", VisibilityTimeout: 500 * time.Millisecond}, map[string]dtq.HandlerFunc{
			"job": func(ctx context.Context, task *dtq.Task) (any, error) {
				close(bStarted)
				<-staleDone // finish after A tried
				return "from B", nil
			},
		})
		select {
		case <-bStarted:
		case <-time.After(10 * time.Second):
			t.Fatal("B never took the task over")
		}
		close(release) // A finishes now, late
		done := e.waitStatus(task.ID, dtq.StatusSucceeded, 10*time.Second)
		if string(done.Result) != `"from B"` || done.Worker != "B" {
			t.Fatalf("result %s by %s; the stale worker's completion was accepted", done.Result, done.Worker)
		}
		if len(done.History) != 2 || done.History[0].Worker != "A" || done.History[1].Worker != "B" {
			t.Fatalf("history %+v", done.History)
		}
	})
}

// A worker frozen between claiming a task and running it (SIGSTOP, a long
// pause) finds it taken over when it wakes, and does not run it: the claim
// is its start, so without a check the task would run twice (fault
// scenario 3 saw it). The freeze here comes while the read's reply is on
// its way: the claim's age counts from when the read went out.
func TestStaleClaimNotRun(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		const vt = time.Second // reclaim passes every 250 ms: the task most likely comes through a blocking read
		var mu sync.Mutex
		runs := map[string]int{}
		handler := func(id string) map[string]dtq.HandlerFunc {
			return map[string]dtq.HandlerFunc{"effect": func(context.Context, *dtq.Task) (any, error) {
				mu.Lock()
				runs[id]++
				mu.Unlock()
				return id, nil
			}}
		}
		a, err := dtq.NewWorker(e.c, &dtq.WorkerConfig{ID: "A", VisibilityTimeout: vt, Concurrency: 1})
		if err != nil {
			t.Fatal(err)
		}
		for typ, h := range handler("A") {
			a.Handle(typ, h)
		}
		frozen, thaw := make(chan struct{}), make(chan struct{})
		var once sync.Once
		dtq.StallClaims(a, func() {
			once.Do(func() {
				close(frozen)
				<-thaw
			})
		})
		if err := a.Start(t.Context()); err != nil {
			t.Fatal(err)
		}
		task := e.enqueue("effect", nil, nil)
		select {
		case <-frozen:
		case <-time.After(10 * time.Second):
			t.Fatal("A never claimed the task")
		}
		e.worker(&dtq.WorkerConfig{ID: "B", VisibilityTimeout: vt}, handler("B"))
		done := e.waitStatus(task.ID, dtq.StatusSucceeded, 10*time.Second)
		close(thaw) // A wakes with its claim long lapsed
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := a.Stop(ctx); err != nil {
			t.Fatal(err)
		}
		mu.Lock()
		defer mu.Unlock()
		if runs["A"] != 0 || runs["B"] != 1 {
			t.Fatalf("handler runs %v; want B's only: A ran a task it had lost while frozen", runs)
		}
		if done.Worker != "B" || done.Crashes != 1 {
			t.Fatalf("done by %q with %d crashes, want B's takeover counting A's lost claim", done.Worker, done.Crashes)
		}
		after, err := e.c.Get(t.Context(), task.ID)
		if err != nil || after.Status != dtq.StatusSucceeded || after.Worker != "B" || len(after.History) != 2 {
			t.Fatalf("after A woke: %+v, %v; want B's success unchanged", after, err)
		}
		if st, err := dtq.NewAdmin(e.c).Stats(t.Context(), "default"); err != nil || st.Succeeded != 1 || st.Running != 0 {
			t.Fatalf("stats after A woke: %+v, %v; want one success, nothing running", st, err)
		}
	})
}

// A crash-looping task ends DEAD once its worker was lost more than
// MaxCrashes times.
func TestCrashLoopEndsDead(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		task := e.enqueue("block", nil, nil)
		for i, id := range []string{"w1", "w2"} {
			// w2 takes the task over from the killed w1 after 200ms. It
			// runs it once its start counted w1's crash: between its
			// reclaim and its start the task shows w2 already, and a kill
			// there loses a claim no run began under (not counted).
			child := startChildWorker(t, e, id, 200*time.Millisecond)
			eventually(t, 15*time.Second, fmt.Sprintf("crash %d: %s runs the task", i+1, id), func() bool {
				got, err := e.c.Get(t.Context(), task.ID)
				return err == nil && got.Status == dtq.StatusRunning && got.Worker == id && got.Crashes == i
			})
			child.Process.Kill()
			child.Wait()
		}
		// A third worker finds the task crashed twice: past MaxCrashes 1.
		e.worker(&dtq.WorkerConfig{ID: "w3", VisibilityTimeout: 100 * time.Millisecond, MaxCrashes: 1},
			map[string]dtq.HandlerFunc{"block": func(context.Context, *dtq.Task) (any, error) { return "ran", nil }})
		dead := e.waitStatus(task.ID, dtq.StatusDead, 15*time.Second)
		if dead.Crashes != 2 || !strings.Contains(dead.LastError, "crashed 2 times") {
			t.Fatalf("crashes %d error %q", dead.Crashes, dead.LastError)
		}
	})
}

// A task of a lost worker is taken over even while higher-priority bands
// hold a backlog that fills every free slot: a reclaim pass looks at every
// band before new entries take the credit (it was started once already).
func TestReclaimNotStarvedByBacklog(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		child := startChildWorker(t, e, "doomed", 2*time.Second)
		lost := e.enqueue("block", nil, &dtq.EnqueueOpts{Priority: dtq.Ptr(0)})
		e.waitStatus(lost.ID, dtq.StatusRunning, 10*time.Second)
		child.Process.Kill()
		child.Wait()
		const backlog = 100
		items := make([]dtq.EnqueueRequest, backlog)
		for i := range items {
			items[i] = dtq.EnqueueRequest{Type: "slow", Opts: &dtq.EnqueueOpts{Priority: dtq.Ptr(9)}}
		}
		if _, err := e.c.EnqueueMany(t.Context(), items); err != nil {
			t.Fatal(err)
		}
		var ranBefore atomic.Int64 // backlog tasks run when the lost task ran
		var slow atomic.Int64
		e.worker(&dtq.WorkerConfig{ID: "survivor", Concurrency: 1, VisibilityTimeout: 300 * time.Millisecond}, map[string]dtq.HandlerFunc{
			"slow": func(context.Context, *dtq.Task) (any, error) {
				slow.Add(1)
				time.Sleep(20 * time.Millisecond)
				return nil, nil
			},
			"block": func(context.Context, *dtq.Task) (any, error) {
				ranBefore.Store(slow.Load())
				return "done", nil
			},
		})
		e.waitStatus(lost.ID, dtq.StatusSucceeded, 30*time.Second)
		if n := ranBefore.Load(); n >= backlog {
			t.Fatalf("the lost task was taken over only after the whole backlog (%d tasks) ran", n)
		}
	})
}
