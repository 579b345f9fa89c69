package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dtq-dev/dtq"
	"github.com/dtq-dev/dtq/api/wire"
)

// pipeline is a workflow file: a chain of a task, then a parallel node of
// two with an on_success callback. Its queue, parked, has no worker.
const pipeline = `{"queue": "parked", "root": {"chain": [
  {"task": {"task_type": "echo", "payload": "a"}},
  {"parallel": [{"task": {"task_type": "echo", "payload": 2}}, {"task": {"task_type": "echo", "payload": 3, "priority": 7}}],
   "on_success": {"task": {"task_type": "echo", "payload": "done"}}}]}}
`

// writeWorkflowFile writes content to workflow.json in a temporary
// directory and returns its path.
func writeWorkflowFile(t *testing.T, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "workflow.json")
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// workflowID returns the id of the header line of a workflow's human
// output.
func workflowID(t *testing.T, out string) string {
	t.Helper()
	f := strings.Fields(lines(out)[0])
	if len(f) < 2 || f[0] != "workflow" {
		t.Fatalf("the output does not start with a workflow header:\n%s", out)
	}
	return f[1]
}

// waitWorkflow waits, at most waitLimit, until workflow id has status
// want, and returns it.
func (e *apiEnv) waitWorkflow(id string, want dtq.WorkflowStatus) *dtq.Workflow {
	e.t.Helper()
	deadline := time.Now().Add(waitLimit)
	for {
		wf, err := e.c.GetWorkflow(e.t.Context(), id)
		if err != nil {
			e.t.Fatalf("get workflow %s: %v", id, err)
		}
		if wf.Status == want {
			return wf
		}
		if time.Now().After(deadline) {
			e.t.Fatalf("workflow %s is still %s after %v, want %s", id, wf.Status, waitLimit, want)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestWorkflowCommands: submit (from a file, with --queue, from standard
// input), get (human and --json) and cancel, against a live API.
func TestWorkflowCommands(t *testing.T) {
	forEachAPI(t, nil, func(t *testing.T, e *apiEnv) {
		file := writeWorkflowFile(t, pipeline)

		// submitted to parked, where nothing runs: the first node is
		// ACTIVE (its task queued), the others PENDING
		out := e.ok("workflow", "submit", "--file", file)
		parked := workflowID(t, out)
		wf, err := e.c.GetWorkflow(t.Context(), parked)
		if err != nil {
			t.Fatal(err)
		}
		first := wf.Root.Nodes[0].TaskID
		want := fmt.Sprintf(`workflow %s  queue parked  RUNNING  progress: 0 of 4 succeeded, 1 active, 3 pending
chain #0 ACTIVE
  task #1 ACTIVE echo %s
  parallel #2 PENDING
    task #3 PENDING echo
    task #4 PENDING echo
    on_success: task #5 PENDING echo
`, parked, first)
		if out != want {
			t.Errorf("dtq workflow submit printed\n%s\nwant\n%s", out, want)
		}
		if !strings.HasPrefix(parked, "parked-") || first == "" {
			t.Errorf("workflow %s, first task %q", parked, first)
		}
		if out := e.ok("workflow", "get", parked); out != want {
			t.Errorf("dtq workflow get of the parked workflow printed\n%s\nwant\n%s", out, want)
		}

		// --queue overrides the file's: in default the worker runs it
		out = e.ok("workflow", "submit", "--file", file, "--queue", "default")
		id := workflowID(t, out)
		if !strings.HasPrefix(id, "default-") || !strings.HasPrefix(out, "workflow "+id+"  queue default  RUNNING  progress: ") {
			t.Errorf("dtq workflow submit --queue default printed\n%s", out)
		}
		wf = e.waitWorkflow(id, dtq.WorkflowSucceeded)
		nodes, par := wf.Root.Nodes, wf.Root.Nodes[1]
		want = fmt.Sprintf(`workflow %s  queue default  SUCCEEDED  progress: 4 of 4 succeeded
result:  "done"
chain #0 SUCCEEDED
  task #1 SUCCEEDED echo %s
  parallel #2 SUCCEEDED
    task #3 SUCCEEDED echo %s
    task #4 SUCCEEDED echo %s
    on_success: task #5 SUCCEEDED echo %s
`, id, nodes[0].TaskID, par.Children[0].TaskID, par.Children[1].TaskID, par.OnSuccess.TaskID)
		if out := e.ok("workflow", "get", id); out != want {
			t.Errorf("dtq workflow get printed\n%s\nwant\n%s", out, want)
		}
		v := e.json("workflow", "get", id)
		p, _ := v["progress"].(map[string]any)
		root, _ := v["root"].(map[string]any)
		if v["id"] != id || v["queue"] != "default" || v["status"] != "SUCCEEDED" || v["result"] != "done" ||
			p["total"] != 4.0 || p["succeeded"] != 4.0 || root["kind"] != "chain" {
			t.Errorf("dtq workflow get --json: %v", v)
		}
		if task := e.json("get", nodes[0].TaskID); task["workflow"] != id || task["result"] != "a" {
			t.Errorf("the workflow's first task: %v", task)
		}
		// a finished workflow is answered as it is
		if out := e.ok("workflow", "cancel", id); out != want {
			t.Errorf("dtq workflow cancel of a finished workflow printed\n%s\nwant\n%s", out, want)
		}

		// cancel: the queued task is cancelled, every node ends CANCELLED
		want = fmt.Sprintf(`workflow %s  queue parked  CANCELLED  progress: 0 of 4 succeeded, 4 cancelled
chain #0 CANCELLED: node 1 of 2 (%[2]s) CANCELLED: cancelled
  task #1 CANCELLED echo %[2]s: cancelled
  parallel #2 CANCELLED: not run: node 1 of 2 (%[2]s) CANCELLED: cancelled
    task #3 CANCELLED echo
    task #4 CANCELLED echo
    on_success: task #5 CANCELLED echo
`, parked, first)
		if out := e.ok("workflow", "cancel", parked); out != want {
			t.Errorf("dtq workflow cancel printed\n%s\nwant\n%s", out, want)
		}
		if v := e.json("workflow", "get", parked); v["status"] != "CANCELLED" || v["cancel_requested"] != true {
			t.Errorf("dtq workflow get --json of the cancelled workflow: %v", v)
		}
		if task := e.json("get", first); task["status"] != "CANCELLED" {
			t.Errorf("the cancelled workflow's task: %v", task)
		}

		// standard input, with --json: the API's answer
		out, err = executeIn(t, pipeline, "workflow", "submit", "--file", "-", "--queue", "other", "--json", "--api-url", e.url)
		if err != nil {
			t.Fatalf("dtq workflow submit --file -: %v", err)
		}
		v = decodeOne(t, out)
		if id, _ := v["id"].(string); !strings.HasPrefix(id, "other-") || v["queue"] != "other" || v["status"] != "RUNNING" {
			t.Errorf("dtq workflow submit --file - --json: %v", v)
		} else {
			e.waitWorkflow(id, dtq.WorkflowSucceeded)
		}
	})
}

// TestWorkflowFailedAndCancelledRunning: a failed node shows its error and
// skips the rest; cancelling a workflow cancels its running task.
func TestWorkflowFailedAndCancelledRunning(t *testing.T) {
	forEachAPI(t, nil, func(t *testing.T, e *apiEnv) {
		out := e.ok("workflow", "submit", "--file", writeWorkflowFile(t, `{"root": {"chain": [{"task": {"task_type": "fail", "max_attempts": 1}}, {"task": {"task_type": "echo"}}]}}`))
		id := workflowID(t, out)
		wf := e.waitWorkflow(id, dtq.WorkflowFailed)
		dead := wf.Root.Nodes[0].TaskID
		want := fmt.Sprintf(`workflow %s  queue default  FAILED  progress: 0 of 2 succeeded, 1 failed, 1 skipped
chain #0 FAILED: node 1 of 2 (%[2]s) FAILED: boom
  task #1 FAILED fail %[2]s: boom
  task #2 SKIPPED echo: not run: node 1 of 2 (%[2]s) FAILED: boom
`, id, dead)
		if out := e.ok("workflow", "get", id); out != want {
			t.Errorf("dtq workflow get of a failed workflow printed\n%s\nwant\n%s", out, want)
		}
		if v := e.json("workflow", "get", id); v["status"] != "FAILED" || !strings.HasSuffix(fmt.Sprint(v["error"]), "FAILED: boom") {
			t.Errorf("dtq workflow get --json of a failed workflow: %v", v)
		}

		out = e.ok("workflow", "submit", "--file", writeWorkflowFile(t, `{"root": {"chain": [{"task": {"task_type": "block"}}, {"task": {"task_type": "echo"}}]}}`))
		id = workflowID(t, out)
		wf, err := e.c.GetWorkflow(t.Context(), id)
		if err != nil {
			t.Fatal(err)
		}
		running := wf.Root.Nodes[0].TaskID
		e.waitStatus(running, dtq.StatusRunning)
		out = e.ok("workflow", "cancel", id)
		// the handler may return before the answer is read
		if h := lines(out)[0]; h != "workflow "+id+"  queue default  RUNNING (cancel requested)  progress: 0 of 2 succeeded, 1 active, 1 pending" &&
			h != "workflow "+id+"  queue default  CANCELLED  progress: 0 of 2 succeeded, 2 cancelled" {
			t.Errorf("dtq workflow cancel of a running workflow printed\n%s", out)
		}
		e.waitWorkflow(id, dtq.WorkflowCancelled)
		e.waitStatus(running, dtq.StatusCancelled)
		out = e.ok("workflow", "get", id)
		if !strings.Contains(out, "\n  task #1 CANCELLED block "+running) || !strings.Contains(out, "\n  task #2 CANCELLED echo") {
			t.Errorf("dtq workflow get of a workflow cancelled while running printed\n%s", out)
		}
	})
}

// TestWorkflowErrors: unknown workflows, and files that are missing or not
// a workflow, each a one-line error.
func TestWorkflowErrors(t *testing.T) {
	forEachAPI(t, &apiEnvOpts{noWorker: true}, func(t *testing.T, e *apiEnv) {
		e.fails([]string{"workflow", "get", "default-01M8SJWJAMD1P1WJ13X3N86WT2"}, "404 not_found: no such workflow")
		e.fails([]string{"workflow", "get", "nope"}, "404 not_found: no such workflow")
		e.fails([]string{"workflow", "cancel", "default-01M8SJWJAMD1P1WJ13X3N86WT2"}, "404 not_found: no such workflow")
		e.fails([]string{"workflow", "get", "default-01M8SJWJAMD1P1WJ13X3N86WT2", "--json"}, "404 not_found")
		e.fails([]string{"workflow", "get", ""}, "the workflow id must not be empty")
		e.fails([]string{"workflow", "cancel", ""}, "the workflow id must not be empty")
		e.fails([]string{"workflow", "get"}, "accepts 1 arg(s), received 0")

		missing := filepath.Join(t.TempDir(), "missing.json")
		e.fails([]string{"workflow", "submit", "--file", missing}, "--file: open "+missing+": no such file or directory")
		e.fails([]string{"workflow", "submit"}, `required flag(s) "file" not set`)
		e.fails([]string{"workflow", "submit", "--file", ""}, "--file must not be empty")
		e.fails([]string{"workflow", "submit", "--file", "x.json", "y"}, `unknown command "y"`)
		for _, c := range []struct{ content, want string }{
			{"", "is empty"},
			{" \n", "is empty"},
			{`{"root": {"chain": [`, "is not valid JSON: unexpected EOF"},
			{`[{"task": {"task_type": "echo"}}]`, "is not a JSON object"},
			{`null`, "is not a JSON object"},
			{`{"root": {"task": {"task_type": "echo"}}} {}`, "unexpected data after the object"},
			{"{\"root\": {\"task\": {\"task_type\": \"\xff\"}}}", "is not valid UTF-8"},
			// the server checks the workflow itself
			{`{"queue": "default"}`, "400 invalid_field: root is required"},
			{`{"root": {"chain": []}}`, "400 invalid_field: root.chain must have at least one node"},
			{`{"root": {"chain": [{"task": {"task_type": "echo", "priority": 12}}]}}`, "400 invalid_field: root.chain[0].task.priority"},
			{`{"root": {"task": {"task_type": "echo"}, "on_success": {"task": {"task_type": "echo"}}}}`, "400 invalid_field: root has a callback"},
			{`{"queue": "a b", "root": {"task": {"task_type": "echo"}}}`, "400 invalid_field: queue"},
		} {
			f := writeWorkflowFile(t, c.content)
			msg := e.fails([]string{"workflow", "submit", "--file", f}, c.want)
			if !strings.HasPrefix(c.want, "400") && !strings.HasPrefix(msg, "--file "+f+" ") {
				t.Errorf("error %q does not name the file", msg)
			}
		}
		e.fails([]string{"workflow", "submit", "--file", writeWorkflowFile(t, pipeline), "--queue", ".."}, "400 invalid_field: queue")

		out, err := executeIn(t, "[]", "workflow", "submit", "--file", "-", "--api-url", e.url)
		if err == nil || err.Error() != `the workflow on standard input is not a JSON object {"queue": …, "root": node}` || out != "" {
			t.Errorf("dtq workflow submit --file - of []: error %v, output %q", err, out)
		}
	})
}

// TestPrintWorkflow: the header and the node tree, with every field a
// line of its own and nothing a terminal would act on.
func TestPrintWorkflow(t *testing.T) {
	t.Parallel()
	wf := &wire.Workflow{ID: "default-01J", Queue: "default", Status: "RUNNING", CancelRequested: true,
		Root: &wire.WorkflowNode{Node: 0, Kind: "chain", Status: "ACTIVE", Nodes: []*wire.WorkflowNode{
			{Node: 1, Kind: "task", Status: "SUCCEEDED", TaskType: "fetch", TaskID: "default-01A"},
			{Node: 2, Kind: "parallel", Status: "ACTIVE", Children: []*wire.WorkflowNode{
				{Node: 3, Kind: "task", Status: "ACTIVE", TaskType: "trans\x1b[2Jcode", TaskID: "default-01B"},
				{Node: 4, Kind: "chain", Status: "FAILED", Error: "line one\nline two", Nodes: []*wire.WorkflowNode{
					{Node: 5, Kind: "task", Status: "FAILED", TaskType: "x", TaskID: "default-01C", Error: "boom"},
				}},
			}, OnSuccess: &wire.WorkflowNode{Node: 6, Kind: "task", Status: "PENDING", TaskType: "publish"},
				OnComplete: &wire.WorkflowNode{Node: 7, Kind: "chain", Status: "PENDING", Nodes: []*wire.WorkflowNode{
					{Node: 8, Kind: "task", Status: "PENDING", TaskType: "report"}}}},
		}}}
	wf.Progress.Total, wf.Progress.Succeeded, wf.Progress.Active, wf.Progress.Failed, wf.Progress.Pending = 6, 1, 1, 1, 3
	var b bytes.Buffer
	if err := printWorkflow(&b, wf); err != nil {
		t.Fatal(err)
	}
	want := `workflow default-01J  queue default  RUNNING (cancel requested)  progress: 1 of 6 succeeded, 1 active, 3 pending, 1 failed
chain #0 ACTIVE
  task #1 SUCCEEDED fetch default-01A
  parallel #2 ACTIVE
    task #3 ACTIVE trans` + "\uFFFD" + `[2Jcode default-01B
    chain #4 FAILED: line one line two
      task #5 FAILED x default-01C: boom
    on_success: task #6 PENDING publish
    on_complete: chain #7 PENDING
      task #8 PENDING report
`
	if b.String() != want {
		t.Errorf("printWorkflow wrote\n%s\nwant\n%s", b.String(), want)
	}

	// a finished workflow: no cancel mark, its result shown
	wf = &wire.Workflow{ID: "q-01J", Queue: "q", Status: "CANCELLED", CancelRequested: true, Result: []byte(`{"n": 1}`),
		Root: &wire.WorkflowNode{Kind: "task", Status: "CANCELLED", TaskType: "t", Error: "cancelled"}}
	wf.Progress.Total, wf.Progress.Cancelled = 1, 1
	b.Reset()
	if err := printWorkflow(&b, wf); err != nil {
		t.Fatal(err)
	}
	want = "workflow q-01J  queue q  CANCELLED  progress: 0 of 1 succeeded, 1 cancelled\nresult:  {\"n\":1}\ntask #0 CANCELLED t: cancelled\n"
	if b.String() != want {
		t.Errorf("printWorkflow wrote\n%s\nwant\n%s", b.String(), want)
	}
}

// TestWorkflowHelp: dtq workflow lists its subcommands, each with the API
// flags.
func TestWorkflowHelp(t *testing.T) {
	t.Parallel()
	out, _, err := execute(t, "--help")
	if err != nil || !strings.Contains(out, "\n  workflow ") {
		t.Errorf("dtq --help does not list workflow (%v):\n%s", err, out)
	}
	out, _, err = execute(t, "workflow")
	if err != nil {
		t.Fatalf("dtq workflow: %v", err)
	}
	for _, sub := range []string{"get", "cancel", "submit"} {
		if !strings.Contains(out, "\n  "+sub+" ") {
			t.Errorf("dtq workflow does not list %q:\n%s", sub, out)
		}
		out, _, err := execute(t, "workflow", sub, "--help")
		if err != nil {
			t.Fatalf("dtq workflow %s --help: %v", sub, err)
		}
		for _, flag := range []string{"--api-url", "--api-key", "--json", "--timeout"} {
			if !strings.Contains(out, flag) {
				t.Errorf("dtq workflow %s --help does not list %s:\n%s", sub, flag, out)
			}
		}
	}
	if out, _, _ := execute(t, "workflow", "submit", "--help"); !strings.Contains(out, "--file") || !strings.Contains(out, "--queue") {
		t.Errorf("dtq workflow submit --help:\n%s", out)
	}
}

// TestWorkflowSubmitIdempotent: --idempotency-key submits once; a repeat
// says so and shows the first workflow; another workflow with the key is
// refused.
func TestWorkflowSubmitIdempotent(t *testing.T) {
	forEachAPI(t, nil, func(t *testing.T, e *apiEnv) {
		file := writeWorkflowFile(t, pipeline)
		first := workflowID(t, e.ok("workflow", "submit", "--file", file, "--idempotency-key", "k1"))
		again := e.ok("workflow", "submit", "--file", file, "--idempotency-key", "k1")
		if !strings.HasPrefix(again, "already submitted (same Idempotency-Key):\nworkflow "+first+" ") {
			t.Fatalf("repeat:\n%s", again)
		}
		other := writeWorkflowFile(t, `{"queue":"parked","root":{"task":{"task_type":"echo"}}}`)
		e.fails([]string{"workflow", "submit", "--file", other, "--idempotency-key", "k1"}, "422", "idempotency_key_reused")
		st, err := dtq.NewAdmin(e.c).Stats(t.Context(), "parked")
		if err != nil || st.Queued != 1 {
			t.Fatalf("queued %d (%v), want the one workflow's first node", st.Queued, err)
		}
	})
}
