package dtq_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dtq-dev/dtq"
	"github.com/dtq-dev/dtq/internal/redistest"
)

// outcome is one element of a parallel node's callback's Task.Previous.
type outcome struct {
	Node   int             `json:"node"`
	ID     string          `json:"id"`
	Status string          `json:"status"`
	Result json.RawMessage `json:"result"`
	Error  string          `json:"error"`
}

// waitWorkflow polls workflow id until it is no longer RUNNING.
func (e *env) waitWorkflow(id string, d time.Duration) *dtq.Workflow {
	e.t.Helper()
	var w *dtq.Workflow
	eventually(e.t, d, "workflow "+id+" ends", func() bool {
		var err error
		w, err = e.c.GetWorkflow(e.t.Context(), id)
		if err != nil {
			e.t.Fatalf("get workflow %s: %v", id, err)
		}
		return w.Status != dtq.WorkflowRunning
	})
	return w
}

// nodeLog keeps what handlers saw, by task type.
type nodeLog struct {
	mu   sync.Mutex
	seen map[string][]*dtq.Task
}

func (r *nodeLog) add(t *dtq.Task) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.seen == nil {
		r.seen = map[string][]*dtq.Task{}
	}
	r.seen[t.Type] = append(r.seen[t.Type], t)
}

func (r *nodeLog) get(typ string) []*dtq.Task {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]*dtq.Task(nil), r.seen[typ]...)
}

// A chain of three runs in order, each node getting the previous one's
// result; the workflow's result is the last node's.
func TestWorkflowChainPassesResultsAlong(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		rec := &nodeLog{}
		e.worker(&dtq.WorkerConfig{Concurrency: 4}, map[string]dtq.HandlerFunc{
			"add": func(_ context.Context, task *dtq.Task) (any, error) {
				rec.add(task)
				var prev, by int
				if task.Previous != nil {
					if err := json.Unmarshal(task.Previous, &prev); err != nil {
						return nil, dtq.Permanent(err)
					}
				}
				if err := json.Unmarshal(task.Payload, &by); err != nil {
					return nil, dtq.Permanent(err)
				}
				return prev + by, nil
			},
		})
		w, err := e.c.EnqueueWorkflow(t.Context(), dtq.Chain(dtq.Call("add", 1, nil), dtq.Call("add", 10, nil), dtq.Call("add", 100, nil)), nil)
		if err != nil {
			t.Fatal(err)
		}
		if w.Status != dtq.WorkflowRunning || w.Progress.Total != 3 || w.Root.Kind != "chain" || len(w.Root.Nodes) != 3 {
			t.Fatalf("submitted: %+v", w)
		}
		w = e.waitWorkflow(w.ID, 10*time.Second)
		if w.Status != dtq.WorkflowSucceeded || string(w.Result) != "111" {
			t.Fatalf("workflow %s result %s (%s), want SUCCEEDED 111", w.Status, w.Result, w.Error)
		}
		seen := rec.get("add")
		if len(seen) != 3 {
			t.Fatalf("%d runs, want 3", len(seen))
		}
		for i, want := range []string{"", "1", "11"} {
			if string(seen[i].Previous) != want {
				t.Errorf("node %d previous %q, want %q", i, seen[i].Previous, want)
			}
			if seen[i].Workflow != w.ID || seen[i].WorkflowNode != w.Root.Nodes[i].Node {
				t.Errorf("node %d: workflow %q node %d, want %q %d", i, seen[i].Workflow, seen[i].WorkflowNode, w.ID, w.Root.Nodes[i].Node)
			}
		}
		for i, s := range w.Root.Nodes {
			if s.Status != dtq.NodeSucceeded || s.TaskID == "" {
				t.Errorf("node %d: %+v", i, s)
			}
			task, err := e.c.Get(t.Context(), s.TaskID)
			if err != nil || task.Workflow != w.ID || task.Status != dtq.StatusSucceeded {
				t.Errorf("node %d task: %+v %v", i, task, err)
			}
		}
		if p := w.Progress; p.Succeeded != 3 || p.Pending+p.Active+p.Failed+p.Skipped+p.Cancelled != 0 {
			t.Errorf("progress %+v", p)
		}
	})
}

// A parallel node's on_success callback runs once, after every child, with
// every child's outcome; a retried child counts once, by its final outcome.
func TestWorkflowParallelCallbackGetsEveryOutcome(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		rec := &nodeLog{}
		var mu sync.Mutex
		tries := map[string]int{}
		e.worker(&dtq.WorkerConfig{Concurrency: 8}, map[string]dtq.HandlerFunc{
			"square": func(_ context.Context, task *dtq.Task) (any, error) {
				var n int
				_ = json.Unmarshal(task.Payload, &n)
				mu.Lock()
				tries[task.ID]++
				try := tries[task.ID]
				mu.Unlock()
				if n%5 == 0 && try == 1 {
					return nil, dtq.RetryAfter(time.Millisecond, errors.New("flaky"))
				}
				return n * n, nil
			},
			"sum": func(_ context.Context, task *dtq.Task) (any, error) {
				rec.add(task)
				var outs []outcome
				if err := json.Unmarshal(task.Previous, &outs); err != nil {
					return nil, dtq.Permanent(err)
				}
				total := 0
				for _, o := range outs {
					var v int
					_ = json.Unmarshal(o.Result, &v)
					total += v
				}
				return total, nil
			},
		})
		const n = 30
		kids := make([]dtq.Node, n)
		want := 0
		for i := range kids {
			kids[i] = dtq.Call("square", i, nil)
			want += i * i
		}
		par := dtq.Parallel(kids...)
		cb := dtq.Call("sum", nil, nil)
		par.OnSuccess = &cb
		w, err := e.c.EnqueueWorkflow(t.Context(), par, nil)
		if err != nil {
			t.Fatal(err)
		}
		w = e.waitWorkflow(w.ID, 15*time.Second)
		if w.Status != dtq.WorkflowSucceeded || string(w.Result) != fmt.Sprint(want) {
			t.Fatalf("workflow %s result %s (%s), want SUCCEEDED %d", w.Status, w.Result, w.Error, want)
		}
		calls := rec.get("sum")
		if len(calls) != 1 {
			t.Fatalf("callback ran %d times, want 1", len(calls))
		}
		var outs []outcome
		if err := json.Unmarshal(calls[0].Previous, &outs); err != nil || len(outs) != n {
			t.Fatalf("callback got %d outcomes (%v), want %d", len(outs), err, n)
		}
		for i, o := range outs {
			if o.Status != dtq.NodeSucceeded || o.ID != w.Root.Children[i].TaskID || string(o.Result) != fmt.Sprint(i*i) {
				t.Errorf("outcome %d: %+v (child %+v)", i, o, w.Root.Children[i])
			}
		}
		if w.Root.OnSuccess == nil || w.Root.OnSuccess.Status != dtq.NodeSucceeded {
			t.Errorf("on_success: %+v", w.Root.OnSuccess)
		}
	})
}

// Under on_success, a child that fails skips the callback, and the
// workflow says why; on_complete runs whatever the children did, with the
// failures among the outcomes.
func TestWorkflowFailedChildSkipsOnSuccess(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		rec := &nodeLog{}
		e.worker(&dtq.WorkerConfig{Concurrency: 4}, map[string]dtq.HandlerFunc{
			"ok":   func(context.Context, *dtq.Task) (any, error) { return "fine", nil },
			"fail": func(context.Context, *dtq.Task) (any, error) { return nil, dtq.Permanent(errors.New("disk on fire")) },
			"cb":   func(_ context.Context, task *dtq.Task) (any, error) { rec.add(task); return "called", nil },
		})
		par := dtq.Parallel(dtq.Call("ok", nil, nil), dtq.Call("fail", nil, nil), dtq.Call("ok", nil, nil))
		cb := dtq.Call("cb", "success", nil)
		par.OnSuccess = &cb
		w, err := e.c.EnqueueWorkflow(t.Context(), par, nil)
		if err != nil {
			t.Fatal(err)
		}
		w = e.waitWorkflow(w.ID, 10*time.Second)
		if w.Status != dtq.WorkflowFailed {
			t.Fatalf("workflow %s, want FAILED", w.Status)
		}
		if s := w.Root.OnSuccess; s.Status != dtq.NodeSkipped || !strings.Contains(s.Error, "disk on fire") ||
			!strings.Contains(s.Error, w.Root.Children[1].TaskID) {
			t.Errorf("on_success %+v: want SKIPPED naming the failed child and its error", s)
		}
		if !strings.Contains(w.Error, "1 of 3 children did not succeed") {
			t.Errorf("workflow error %q", w.Error)
		}
		if w.Root.Children[1].Status != dtq.NodeFailed || w.Progress.Failed != 1 || w.Progress.Skipped != 1 {
			t.Errorf("child 1 %+v, progress %+v", w.Root.Children[1], w.Progress)
		}
		if n := len(rec.get("cb")); n != 0 {
			t.Fatalf("on_success ran %d times", n)
		}

		// on_complete: runs, sees the failure, and decides the parallel
		// node's outcome
		par2 := dtq.Parallel(dtq.Call("ok", nil, nil), dtq.Call("fail", nil, nil))
		cb2 := dtq.Call("cb", "complete", nil)
		par2.OnComplete = &cb2
		w2, err := e.c.EnqueueWorkflow(t.Context(), par2, nil)
		if err != nil {
			t.Fatal(err)
		}
		w2 = e.waitWorkflow(w2.ID, 10*time.Second)
		if w2.Status != dtq.WorkflowSucceeded || string(w2.Result) != `"called"` {
			t.Fatalf("on_complete workflow %s %s (%s)", w2.Status, w2.Result, w2.Error)
		}
		calls := rec.get("cb")
		if len(calls) != 1 {
			t.Fatalf("on_complete ran %d times", len(calls))
		}
		var outs []outcome
		_ = json.Unmarshal(calls[0].Previous, &outs)
		if len(outs) != 2 || outs[0].Status != dtq.NodeSucceeded || outs[1].Status != dtq.NodeFailed ||
			!strings.Contains(outs[1].Error, "disk on fire") || string(outs[1].Result) != "null" {
			t.Errorf("outcomes %+v", outs)
		}
	})
}

// A chain whose node goes DEAD runs no further node; the chain and the
// workflow say which node and why.
func TestWorkflowChainStopsAtADeadNode(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		rec := &nodeLog{}
		e.worker(&dtq.WorkerConfig{Concurrency: 2}, map[string]dtq.HandlerFunc{
			"ok":   func(_ context.Context, task *dtq.Task) (any, error) { rec.add(task); return 1, nil },
			"fail": func(context.Context, *dtq.Task) (any, error) { return nil, errors.New("nope") },
		})
		w, err := e.c.EnqueueWorkflow(t.Context(), dtq.Chain(dtq.Call("ok", nil, nil),
			dtq.Call("fail", nil, &dtq.EnqueueOpts{MaxAttempts: 2}), dtq.Call("ok", nil, nil),
			dtq.Parallel(dtq.Call("ok", nil, nil), dtq.Call("ok", nil, nil))), nil)
		if err != nil {
			t.Fatal(err)
		}
		w = e.waitWorkflow(w.ID, 20*time.Second)
		if w.Status != dtq.WorkflowFailed || !strings.Contains(w.Error, "node 2 of 4") || !strings.Contains(w.Error, "nope") {
			t.Fatalf("workflow %s %q", w.Status, w.Error)
		}
		st := w.Root.Nodes
		if st[1].Status != dtq.NodeFailed || st[2].Status != dtq.NodeSkipped || st[3].Status != dtq.NodeSkipped ||
			st[3].Children[0].Status != dtq.NodeSkipped || st[2].TaskID != "" {
			t.Errorf("nodes %+v %+v %+v", st[1], st[2], st[3])
		}
		if n := len(rec.get("ok")); n != 1 {
			t.Errorf("ok ran %d times, want 1 (only the first node)", n)
		}
		dead, err := e.c.Get(t.Context(), st[1].TaskID)
		if err != nil || dead.Status != dtq.StatusDead || dead.Attempt != 2 || dead.Workflow != w.ID {
			t.Fatalf("dead node task %+v %v", dead, err)
		}
		// Requeued, the dead task runs again, but its node ended: nothing
		// of the workflow changes.
		if _, err := e.a.Requeue(t.Context(), dead.ID); err != nil {
			t.Fatal(err)
		}
		e.waitStatus(dead.ID, dtq.StatusDead, 10*time.Second)
		again, err := e.c.GetWorkflow(t.Context(), w.ID)
		if err != nil || again.Status != dtq.WorkflowFailed || again.Root.Nodes[2].Status != dtq.NodeSkipped {
			t.Fatalf("after requeue: %+v %v", again, err)
		}
		if n := len(rec.get("ok")); n != 1 {
			t.Errorf("ok ran %d times after the requeue, want 1", n)
		}
	})
}

// Compositions nest: a chain of parallel nodes whose children are chains,
// each level passing results on.
func TestWorkflowNestedChainOfParallelNodes(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		rec := &nodeLog{}
		e.worker(&dtq.WorkerConfig{Concurrency: 6}, map[string]dtq.HandlerFunc{
			"echo": func(_ context.Context, task *dtq.Task) (any, error) {
				rec.add(task)
				var p string
				_ = json.Unmarshal(task.Payload, &p)
				return p, nil
			},
			"count": func(_ context.Context, task *dtq.Task) (any, error) {
				rec.add(task)
				var outs []outcome
				if err := json.Unmarshal(task.Previous, &outs); err != nil {
					return nil, dtq.Permanent(err)
				}
				return len(outs), nil
			},
		})
		inner := dtq.Parallel(dtq.Chain(dtq.Call("echo", "a1", nil), dtq.Call("echo", "a2", nil)), dtq.Call("echo", "b", nil))
		cb := dtq.Call("count", nil, nil)
		inner.OnSuccess = &cb
		root := dtq.Chain(dtq.Call("echo", "start", nil), inner, dtq.Parallel(dtq.Call("echo", "c", nil), dtq.Call("echo", "d", nil)),
			dtq.Call("count", nil, nil))
		w, err := e.c.EnqueueWorkflow(t.Context(), root, nil)
		if err != nil {
			t.Fatal(err)
		}
		w = e.waitWorkflow(w.ID, 15*time.Second)
		if w.Status != dtq.WorkflowSucceeded || string(w.Result) != "2" {
			t.Fatalf("workflow %s %s (%s)", w.Status, w.Result, w.Error)
		}
		prevOf := map[string]string{}
		for _, task := range rec.get("echo") {
			var p string
			_ = json.Unmarshal(task.Payload, &p)
			prevOf[p] = string(task.Previous)
		}
		// a1 and b get the parallel node's input (start's result); a2 gets
		// a1's; c and d get the first parallel node's result (its
		// callback's, 2).
		for p, want := range map[string]string{"start": "", "a1": `"start"`, "a2": `"a1"`, "b": `"start"`, "c": "2", "d": "2"} {
			if prevOf[p] != want {
				t.Errorf("%s got previous %q, want %q", p, prevOf[p], want)
			}
		}
		counts := rec.get("count")
		if len(counts) != 2 {
			t.Fatalf("count ran %d times", len(counts))
		}
		var outs []outcome
		_ = json.Unmarshal(counts[0].Previous, &outs)
		if len(outs) != 2 || string(outs[0].Result) != `"a2"` || outs[0].ID != "" || string(outs[1].Result) != `"b"` {
			t.Errorf("inner callback outcomes %+v", outs)
		}
		if w.Progress.Total != 8 || w.Progress.Succeeded != 8 {
			t.Errorf("progress %+v", w.Progress)
		}
	})
}

// Cancelling a running workflow cancels its running task (the handler's
// ctx ends) and starts nothing after it.
func TestWorkflowCancelWhileRunning(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		started := make(chan string, 4)
		rec := &nodeLog{}
		e.worker(&dtq.WorkerConfig{Concurrency: 4}, map[string]dtq.HandlerFunc{
			"block": func(ctx context.Context, task *dtq.Task) (any, error) {
				started <- task.ID
				<-ctx.Done()
				return nil, ctx.Err()
			},
			"after": func(_ context.Context, task *dtq.Task) (any, error) { rec.add(task); return nil, nil },
		})
		par := dtq.Parallel(dtq.Call("block", nil, nil), dtq.Call("block", nil, nil))
		cb := dtq.Call("after", nil, nil)
		par.OnComplete = &cb
		w, err := e.c.EnqueueWorkflow(t.Context(), dtq.Chain(par, dtq.Call("after", nil, nil)), nil)
		if err != nil {
			t.Fatal(err)
		}
		for range 2 {
			select {
			case <-started:
			case <-time.After(10 * time.Second):
				t.Fatal("the blocking nodes did not start")
			}
		}
		cw, err := e.c.CancelWorkflow(t.Context(), w.ID)
		if err != nil {
			t.Fatal(err)
		}
		if !cw.CancelRequested {
			t.Errorf("cancel_requested not set: %+v", cw)
		}
		w = e.waitWorkflow(w.ID, 10*time.Second)
		if w.Status != dtq.WorkflowCancelled {
			t.Fatalf("workflow %s, want CANCELLED", w.Status)
		}
		for _, c := range w.Root.Nodes[0].Children {
			task, err := e.c.Get(t.Context(), c.TaskID)
			if err != nil || task.Status != dtq.StatusCancelled || c.Status != dtq.NodeCancelled {
				t.Errorf("child %+v task %+v %v", c, task, err)
			}
		}
		if w.Root.Nodes[0].OnComplete.Status != dtq.NodeCancelled || w.Root.Nodes[1].Status != dtq.NodeCancelled {
			t.Errorf("callback %+v, next node %+v", w.Root.Nodes[0].OnComplete, w.Root.Nodes[1])
		}
		if n := len(rec.get("after")); n != 0 {
			t.Errorf("a node after the cancel ran %d times", n)
		}
		// Cancelling again, or a finished workflow, changes nothing.
		if again, err := e.c.CancelWorkflow(t.Context(), w.ID); err != nil || again.Status != dtq.WorkflowCancelled {
			t.Errorf("cancel again: %+v %v", again, err)
		}
	})
}

// A queued node cancelled alone (Cancel of its task) ends its node
// CANCELLED, and the workflow goes on as for any node that did not succeed.
func TestWorkflowNodeTaskCancelledAlone(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		w, err := e.c.EnqueueWorkflow(t.Context(), dtq.Chain(dtq.Call("never", nil, nil), dtq.Call("next", nil, nil)), nil)
		if err != nil {
			t.Fatal(err)
		}
		first := w.Root.Nodes[0].TaskID
		if first == "" || w.Root.Nodes[0].Status != dtq.NodeActive || w.Root.Nodes[1].Status != dtq.NodePending {
			t.Fatalf("submitted: %+v %+v", w.Root.Nodes[0], w.Root.Nodes[1])
		}
		task, err := e.c.Cancel(t.Context(), first)
		if err != nil || task.Status != dtq.StatusCancelled {
			t.Fatalf("cancel: %+v %v", task, err)
		}
		w, err = e.c.GetWorkflow(t.Context(), w.ID)
		if err != nil || w.Status != dtq.WorkflowCancelled || w.Root.Nodes[1].Status != dtq.NodeSkipped {
			t.Fatalf("workflow %+v %v", w, err)
		}
	})
}

// Tasks submitted as one unit are a root parallel node: its progress
// counts its tasks as they end, and its callbacks run once.
func TestWorkflowParallelRootProgressAndCallbacks(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		release := make(chan struct{})
		rec := &nodeLog{}
		e.worker(&dtq.WorkerConfig{Concurrency: 10}, map[string]dtq.HandlerFunc{
			"item": func(ctx context.Context, task *dtq.Task) (any, error) {
				var n int
				_ = json.Unmarshal(task.Payload, &n)
				if n >= 5 {
					select {
					case <-release:
					case <-ctx.Done():
						return nil, ctx.Err()
					}
				}
				if n == 9 {
					return nil, dtq.Permanent(errors.New("bad item"))
				}
				return n, nil
			},
			"done": func(_ context.Context, task *dtq.Task) (any, error) { rec.add(task); return nil, nil },
		})
		items := make([]dtq.Node, 10)
		for i := range items {
			items[i] = dtq.Call("item", i, nil)
		}
		ok, all := dtq.Call("done", "success", nil), dtq.Call("done", "complete", nil)
		par := dtq.Parallel(items...)
		par.OnSuccess, par.OnComplete = &ok, &all
		w, err := e.c.EnqueueWorkflow(t.Context(), par, nil)
		if err != nil {
			t.Fatal(err)
		}
		eventually(t, 10*time.Second, "5 items done", func() bool {
			w, err = e.c.GetWorkflow(t.Context(), w.ID)
			return err == nil && w.Progress.Succeeded == 5
		})
		if p := w.Progress; p.Total != 12 || p.Pending != 2 || p.Active != 5 {
			t.Errorf("progress mid-way %+v", p)
		}
		close(release)
		w = e.waitWorkflow(w.ID, 10*time.Second)
		if w.Status != dtq.WorkflowFailed || w.Progress.Succeeded != 10 || w.Progress.Failed != 1 || w.Progress.Skipped != 1 {
			t.Fatalf("workflow %s progress %+v (%s)", w.Status, w.Progress, w.Error)
		}
		calls := rec.get("done")
		if len(calls) != 1 || string(calls[0].Payload) != `"complete"` {
			t.Fatalf("callbacks %d", len(calls))
		}
	})
}

// Bad workflows get a clear error naming the node, and nothing is written.
func TestWorkflowValidation(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		ctx := t.Context()
		cb := dtq.Call("x", nil, nil)
		withCallback := dtq.Call("x", nil, nil)
		withCallback.OnSuccess = &cb
		deep := dtq.Call("x", nil, nil)
		for range dtq.MaxWorkflowDepth + 1 {
			deep = dtq.Chain(deep)
		}
		for _, tc := range []struct {
			node  dtq.Node
			field string
		}{
			{dtq.Node{}, "root"},
			{dtq.Chain(), "root.chain"},
			{dtq.Parallel(dtq.Call("ok", nil, nil), dtq.Parallel()), "root.parallel[1].parallel"},
			{dtq.Chain(dtq.Call("", nil, nil)), "root.chain[0].task.task_type"},
			{dtq.Chain(dtq.Call("x", nil, &dtq.EnqueueOpts{Priority: dtq.Ptr(12)})), "root.chain[0].task.priority"},
			{dtq.Call("x", nil, &dtq.EnqueueOpts{Delay: time.Second}), "root.task.delay"},
			{dtq.Call("x", nil, &dtq.EnqueueOpts{Queue: "other"}), "root.task.queue"},
			{dtq.Call("x", func() {}, nil), "root.task.payload"},
			{withCallback, "root"},
			{deep, "root" + strings.Repeat(".chain[0]", dtq.MaxWorkflowDepth+1)},
		} {
			_, err := e.c.EnqueueWorkflow(ctx, tc.node, nil)
			var ve *dtq.ValidationError
			if !errors.As(err, &ve) || ve.Field != tc.field {
				t.Errorf("%s: error %v, want a ValidationError of %s", tc.field, err, tc.field)
			}
		}
		if _, err := e.c.GetWorkflow(ctx, "default-01ARZ3NDEKTSV4RRFFQ69G5FAV"); !errors.Is(err, dtq.ErrWorkflowNotFound) ||
			!errors.Is(err, dtq.ErrNotFound) {
			t.Errorf("unknown workflow: %v", err)
		}
		if _, err := e.c.GetWorkflow(ctx, "nonsense"); !errors.Is(err, dtq.ErrWorkflowNotFound) {
			t.Errorf("bad id: %v", err)
		}
		st, err := e.a.Stats(ctx, "default")
		if err != nil || st.Queued != 0 || st.Scheduled != 0 {
			t.Errorf("a refused workflow left tasks: %+v %v", st, err)
		}
	})
}

// A workflow submitted again with its idempotency key creates nothing and
// returns the first; another workflow with the key is a conflict; task
// keys and workflow keys are apart; a replay after the workflow expired
// still creates nothing.
func TestWorkflowIdempotentSubmission(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		ctx := t.Context()
		wf := dtq.Chain(dtq.Call("idle", 1, nil), dtq.Call("idle", 2, nil))
		o := &dtq.WorkflowOpts{Queue: "idle", IdempotencyKey: "order-7"}
		first, err := e.c.EnqueueWorkflow(ctx, wf, o)
		if err != nil || first.Duplicate {
			t.Fatalf("first: %+v %v", first, err)
		}
		again, err := e.c.EnqueueWorkflow(ctx, wf, o)
		if err != nil || again.ID != first.ID || !again.Duplicate || again.Status != dtq.WorkflowRunning {
			t.Fatalf("replay: %+v %v, want %s with duplicate set", again, err, first.ID)
		}
		other := dtq.Chain(dtq.Call("idle", 1, nil), dtq.Call("idle", 3, nil))
		var conflict *dtq.IdempotencyConflictError
		if _, err := e.c.EnqueueWorkflow(ctx, other, o); !errors.As(err, &conflict) || conflict.TaskID != first.ID {
			t.Fatalf("another workflow with the key: %v, want a conflict naming %s", err, first.ID)
		}
		if _, err := e.c.Enqueue(ctx, "idle", nil, &dtq.EnqueueOpts{Queue: "idle", IdempotencyKey: "order-7"}); err != nil {
			t.Fatalf("a task with the workflow's key: %v", err)
		}
		st, err := e.a.Stats(ctx, "idle")
		if err != nil || st.Queued != 2 {
			t.Fatalf("queued %d (%v), want 2: the workflow's first node and the task", st.Queued, err)
		}
	})
	t.Run("expired", func(t *testing.T) {
		t.Parallel()
		b := redistest.Embedded(t)
		e := newEnv(t, &redistest.Backend{Name: "embedded", Client: b.Client, Namespace: redistest.Namespace(t), Embedded: b},
			&dtq.Config{Retention: 50 * time.Millisecond})
		e.worker(nil, map[string]dtq.HandlerFunc{"ok": func(context.Context, *dtq.Task) (any, error) { return nil, nil }})
		o := &dtq.WorkflowOpts{IdempotencyKey: "k"}
		w, err := e.c.EnqueueWorkflow(t.Context(), dtq.Call("ok", nil, nil), o)
		if err != nil {
			t.Fatal(err)
		}
		eventually(t, 10*time.Second, "the workflow expires", func() bool {
			_, err := e.c.GetWorkflow(t.Context(), w.ID)
			return errors.Is(err, dtq.ErrWorkflowNotFound)
		})
		again, err := e.c.EnqueueWorkflow(t.Context(), dtq.Call("ok", nil, nil), o)
		if err != nil || again.ID != w.ID || !again.Duplicate || again.Status != "" {
			t.Fatalf("replay after expiry: %+v %v", again, err)
		}
	})
}
