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

// A group of 100 with an on_success callback, in 20 runs, while worker
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
			kids := make([]dtq.Step, n)
			for i := range kids {
				ms := 1 + rand.IntN(3)
				if i == n-1 {
					ms = 150 // the last child: long enough to be caught running
				}
				kids[i] = dtq.Call("wfchild", ms, nil)
			}
			g := dtq.Group(kids...)
			cb := dtq.Call("wfcb", nil, nil)
			g.OnSuccess = &cb
			w, err := e.c.EnqueueWorkflow(ctx, g, nil)
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
		st, err := e.c.Stats(ctx, "default")
		if err != nil {
			t.Fatal(err)
		}
		if st.Succeeded != runs*(n+1) || st.Running != 0 || st.Queued != 0 || st.Dead != 0 {
			t.Errorf("stats %+v: want %d succeeded (each task once) and nothing left", st, runs*(n+1))
		}
		t.Logf("%s: %d worker processes started, %d killed", e.Name, spawned, spawned-2)
	})
}

// A batch submitted while Redis is killed (SIGKILL) and restarted on its
// append-only file (fsync always) is all there or not at all: every
// workflow Redis holds afterwards has its every task, and no task is
// there beside them.
func TestWorkflowBatchAtomicAcrossRedisRestart(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t, &redistest.Options{AppendFsync: "always"})
	rc := redistest.Client(t, srv)
	e := newEnv(t, &redistest.Backend{Name: "redis", Client: rc, Namespace: "wfrestart", Server: srv}, nil)
	ctx := t.Context()
	const size = 200
	items := make([]dtq.Step, size)
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
			w, err := e.c.EnqueueBatch(ctx, items, nil)
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
		t.Fatalf("%d batches acknowledged before the kill, %d after the restart: the restart did not fall amid submissions", before, after)
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
				t.Fatalf("workflow %s child %d: %+v %v", id, c.Step, task, err)
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
	st, err := e.c.Stats(ctx, "default")
	if err != nil {
		t.Fatal(err)
	}
	if st.Queued != int64(size*len(present)) {
		t.Fatalf("%d tasks queued, want %d (%d whole workflows): a partial batch left tasks", st.Queued, size*len(present), len(present))
	}
	t.Logf("%d batches acknowledged, %d failed during the restart, %d in Redis", len(ok), len(failed), len(present))
}
