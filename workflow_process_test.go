package dtq_test

import (
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dtq-dev/dtq"
	"github.com/dtq-dev/dtq/internal/redistest"
)

// A parallel node of 100 with an on_success callback, in 20 runs, while worker
// processes are SIGKILLed at random moments — in every other run the one
// running the last child, around the moment it ends: the callback is
// enqueued exactly once (one callback task, whatever its executions),
// with 100 outcomes, and every task ends once.
func TestWorkflowCallbackExactlyOnceUnderKills(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		ctx := t.Context()
		effects := filepath.Join(t.TempDir(), "effects")
		const vt = time.Second
		spawned := 0
		spawn := func() *exec.Cmd {
			spawned++
			return startChildWorker(t, e, fmt.Sprintf("w%d", spawned), vt, childEffectsEnv+"="+effects,
				childConcurrencyEnv+"=10")
		}
		procs := map[string]*exec.Cmd{}
		for range 2 {
			c := spawn()
			procs[fmt.Sprintf("w%d", spawned)] = c
		}
		kill := func(id string) {
			c, ok := procs[id]
			if !ok {
				return
			}
			c.Process.Kill()
			c.Wait()
			delete(procs, id)
			procs[fmt.Sprintf("w%d", spawned+1)] = spawn()
		}
		anyWorker := func() string {
			for id := range procs {
				return id
			}
			return ""
		}
		const runs, n = 20, 100
		var ids []string
		for r := range runs {
			kids := make([]dtq.Node, n)
			for i := range kids {
				ms := 1 + rand.IntN(3)
				if i == n-1 {
					ms = 150 // the last child: long enough to be caught running
				}
				kids[i] = dtq.Call("wfchild", ms, nil)
			}
			par := dtq.Parallel(kids...)
			cb := dtq.Call("wfcb", nil, nil)
			par.OnSuccess = &cb
			w, err := e.c.EnqueueWorkflow(ctx, par, nil)
			if err != nil {
				t.Fatal(err)
			}
			ids = append(ids, w.ID)
			last := w.Root.Children[n-1].TaskID
			if r%2 == 0 {
				time.Sleep(time.Duration(rand.IntN(60)) * time.Millisecond)
				kill(anyWorker())
			} else {
				// the worker running the last child, at a random moment of
				// its last milliseconds or just after its handler returned
				var on string
				eventually(t, 20*time.Second, "the last child runs", func() bool {
					task, err := e.c.Get(ctx, last)
					if err == nil && task.Status == dtq.StatusRunning {
						on = task.Worker
					}
					return on != "" || err == nil && task.Status.Finished()
				})
				time.Sleep(time.Duration(120+rand.IntN(60)) * time.Millisecond)
				kill(on)
			}
			done := e.waitWorkflow(w.ID, 30*time.Second)
			if done.Status != dtq.WorkflowSucceeded || string(done.Result) != strconv.Itoa(n) {
				t.Fatalf("run %d: workflow %s result %s (%s)", r, done.Status, done.Result, done.Error)
			}
		}
		raw, err := os.ReadFile(effects)
		if err != nil {
			t.Fatal(err)
		}
		cbTasks := map[string]map[string]bool{} // workflow → callback task ids
		for _, l := range strings.Split(strings.TrimSpace(string(raw)), "\n") {
			f := strings.Fields(l)
			if len(f) != 5 || f[0] != "cb" {
				t.Fatalf("effect line %q", l)
			}
			if f[3] != strconv.Itoa(n) || f[4] != strconv.Itoa(n) {
				t.Errorf("callback of %s saw %s outcomes, %s succeeded; want %d", f[1], f[3], f[4], n)
			}
			if cbTasks[f[1]] == nil {
				cbTasks[f[1]] = map[string]bool{}
			}
			cbTasks[f[1]][f[2]] = true
		}
		for _, id := range ids {
			w, err := e.c.GetWorkflow(ctx, id)
			if err != nil {
				t.Fatal(err)
			}
			if got := cbTasks[id]; len(got) != 1 || !got[w.Root.OnSuccess.TaskID] {
				t.Errorf("workflow %s: callback tasks %v, want exactly its on_success task %s", id, got, w.Root.OnSuccess.TaskID)
			}
			if w.Progress.Succeeded != n+1 {
				t.Errorf("workflow %s: progress %+v", id, w.Progress)
			}
		}
		st, err := e.a.Stats(ctx, "default")
		if err != nil {
			t.Fatal(err)
		}
		if st.Succeeded != runs*(n+1) || st.Running != 0 || st.Queued != 0 || st.Dead != 0 {
			t.Errorf("stats %+v: want %d succeeded (each task once) and nothing left", st, runs*(n+1))
		}
		t.Logf("%s: %d worker processes started, %d killed", e.Name, spawned, spawned-2)
	})
}

// A workflow of a parallel node of 200 tasks submitted while Redis is
// killed (SIGKILL) and restarted on its append-only file (fsync always) is
// all there or not at all: every workflow Redis holds afterwards has its
// every task, and no task is there beside them.
func TestWorkflowAtomicAcrossRedisRestart(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t, &redistest.Options{AppendFsync: "always"})
	rc := redistest.Client(t, srv)
	e := newEnv(t, &redistest.Backend{Name: "redis", Client: rc, Namespace: "wfrestart", Server: srv}, nil)
	ctx := t.Context()
	const size = 200
	items := make([]dtq.Node, size)
	for i := range items {
		items[i] = dtq.Call("item", strings.Repeat("x", 200), nil)
	}
	stop := make(chan struct{})
	type result struct {
		id  string
		err error
		at  time.Time
	}
	results := make(chan result, 10000)
	go func() {
		defer close(results)
		for {
			select {
			case <-stop:
				return
			default:
			}
			w, err := e.c.EnqueueWorkflow(ctx, dtq.Parallel(items...), nil)
			r := result{err: err, at: time.Now()}
			if w != nil {
				r.id = w.ID
			}
			results <- r
		}
	}()
	time.Sleep(300 * time.Millisecond)
	killed := time.Now()
	if err := srv.Kill(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(200 * time.Millisecond)
	if err := srv.Restart(); err != nil {
		t.Fatal(err)
	}
	restarted := time.Now()
	time.Sleep(300 * time.Millisecond)
	close(stop)
	var ok, failed []string
	before, after := 0, 0
	for r := range results {
		switch {
		case r.err != nil:
			failed = append(failed, r.err.Error())
		case r.at.Before(killed):
			before++
			ok = append(ok, r.id)
		default:
			if r.at.After(restarted) {
				after++
			}
			ok = append(ok, r.id)
		}
	}
	if before == 0 || after == 0 {
		t.Fatalf("%d workflows acknowledged before the kill, %d after the restart: the restart did not fall amid submissions", before, after)
	}
	// Every workflow Redis holds, acknowledged or not, is whole.
	var present []string
	cursor := uint64(0)
	for {
		entry, err := rc.Do(ctx, rc.B().Scan().Cursor(cursor).Match("wfrestart:{default}:wf:*").Count(1000).Build()).AsScanEntry()
		if err != nil {
			t.Fatal(err)
		}
		present = append(present, entry.Elements...)
		if cursor = entry.Cursor; cursor == 0 {
			break
		}
	}
	for _, k := range present {
		id := "default-" + k[len(k)-26:]
		w, err := e.c.GetWorkflow(ctx, id)
		if err != nil {
			t.Fatalf("workflow %s: %v", id, err)
		}
		if w.Progress.Total != size || w.Progress.Active != size {
			t.Fatalf("workflow %s is partial: %+v", id, w.Progress)
		}
		for _, c := range w.Root.Children {
			if task, err := e.c.Get(ctx, c.TaskID); err != nil || task.Status != dtq.StatusQueued {
				t.Fatalf("workflow %s child %d: %+v %v", id, c.Node, task, err)
			}
		}
	}
	// Acknowledged ones all survived (fsync always).
	have := map[string]bool{}
	for _, k := range present {
		have["default-"+k[len(k)-26:]] = true
	}
	for _, id := range ok {
		if !have[id] {
			t.Errorf("acknowledged workflow %s is gone after the restart", id)
		}
	}
	st, err := e.a.Stats(ctx, "default")
	if err != nil {
		t.Fatal(err)
	}
	if st.Queued != int64(size*len(present)) {
		t.Fatalf("%d tasks queued, want %d (%d whole workflows): a partial workflow left tasks", st.Queued, size*len(present), len(present))
	}
	t.Logf("%d workflows acknowledged, %d failed during the restart, %d in Redis", len(ok), len(failed), len(present))
}

// The workflow behaviours, run by two worker processes of their own (no
// handler in this process): a chain of 3 passes results along; a failed
// child under on_success skips the callback and says why; a nested chain
// of parallel nodes; a running workflow cancelled.
func TestWorkflowsInWorkerProcesses(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		ctx := t.Context()
		startChildWorker(t, e, "p1", 2*time.Second)
		startChildWorker(t, e, "p2", 2*time.Second)
		submit := func(root dtq.Node) *dtq.Workflow {
			t.Helper()
			w, err := e.c.EnqueueWorkflow(ctx, root, nil)
			if err != nil {
				t.Fatal(err)
			}
			return w
		}
		ran := func(id string) string {
			t.Helper()
			task, err := e.c.Get(ctx, id)
			if err != nil {
				t.Fatal(err)
			}
			return task.Worker
		}

		chain := submit(dtq.Chain(dtq.Call("wfadd", 1, nil), dtq.Call("wfadd", 10, nil), dtq.Call("wfadd", 100, nil)))
		fail := dtq.Parallel(dtq.Call("wfecho", "a", nil), dtq.Call("wffail", nil, nil), dtq.Call("wfecho", "b", nil))
		cb := dtq.Call("wfcount", nil, nil)
		fail.OnSuccess = &cb
		failed := submit(fail)
		inner := dtq.Parallel(dtq.Chain(dtq.Call("wfadd", 1, nil), dtq.Call("wfadd", 2, nil)), dtq.Call("wfadd", 5, nil))
		count := dtq.Call("wfcount", nil, nil)
		inner.OnComplete = &count
		nested := submit(dtq.Chain(dtq.Call("wfadd", 3, nil), inner, dtq.Parallel(dtq.Call("wfadd", 1, nil), dtq.Call("wfadd", 2, nil)),
			dtq.Call("wfcount", nil, nil)))
		blocked := submit(dtq.Chain(dtq.Call("block", nil, nil), dtq.Call("wfecho", "never", nil)))

		w := e.waitWorkflow(chain.ID, 20*time.Second)
		if w.Status != dtq.WorkflowSucceeded || string(w.Result) != "111" {
			t.Errorf("chain: %s %s (%s)", w.Status, w.Result, w.Error)
		}
		for i, s := range w.Root.Nodes {
			if worker := ran(s.TaskID); worker != "p1" && worker != "p2" {
				t.Errorf("chain node %d ran on %q, not a worker process", i, worker)
			}
		}

		w = e.waitWorkflow(failed.ID, 20*time.Second)
		if w.Status != dtq.WorkflowFailed || w.Root.OnSuccess.Status != dtq.NodeSkipped ||
			!strings.Contains(w.Root.OnSuccess.Error, "broken on purpose") {
			t.Errorf("failed child: %s, on_success %+v", w.Status, w.Root.OnSuccess)
		}

		w = e.waitWorkflow(nested.ID, 20*time.Second)
		// 3 → the parallel node's children get 3: the chain makes 4 then 6,
		// the other 8; on_complete counts 2; the next parallel node gets 2
		// and makes 3 and 4; the last node counts 2.
		if w.Status != dtq.WorkflowSucceeded || string(w.Result) != "2" {
			t.Errorf("nested: %s %s (%s)", w.Status, w.Result, w.Error)
		}
		par := w.Root.Nodes[1]
		if string(par.Children[0].Result) != "6" || string(par.Children[1].Result) != "8" || string(par.Result) != "2" ||
			string(w.Root.Nodes[2].Children[1].Result) != "4" {
			t.Errorf("nested results: %s %s %s %s", par.Children[0].Result, par.Children[1].Result, par.Result,
				w.Root.Nodes[2].Children[1].Result)
		}

		first := blocked.Root.Nodes[0].TaskID
		e.waitStatus(first, dtq.StatusRunning, 20*time.Second)
		if _, err := e.c.CancelWorkflow(ctx, blocked.ID); err != nil {
			t.Fatal(err)
		}
		w = e.waitWorkflow(blocked.ID, 20*time.Second)
		if w.Status != dtq.WorkflowCancelled || w.Root.Nodes[1].Status != dtq.NodeCancelled || w.Root.Nodes[1].TaskID != "" {
			t.Errorf("cancelled: %s, next node %+v", w.Status, w.Root.Nodes[1])
		}
		if task, err := e.c.Get(ctx, first); err != nil || task.Status != dtq.StatusCancelled || (task.Worker != "p1" && task.Worker != "p2") {
			t.Errorf("the running node's task: %+v %v", task, err)
		}
	})
}
