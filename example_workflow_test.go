package dtq_test

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/dtq-dev/dtq"
)

// waitWorkflow polls workflow id until it has ended (the examples' way to
// wait).
func waitWorkflow(c *dtq.Client, id string) *dtq.Workflow {
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(2 * time.Millisecond) {
		if w, err := c.GetWorkflow(context.Background(), id); err == nil && w.Status != dtq.WorkflowRunning {
			return w
		}
	}
	panic("workflow " + id + " did not end")
}

// Tasks that run as one unit: a parallel node as the workflow's root is
// submitted all or none, its children run at once, and its OnComplete
// callback runs once every child has ended, with their outcomes as
// Task.Previous (OnSuccess would run only if every child succeeded).
func ExampleParallel() {
	ctx := context.Background()
	client, stop := start(nil, map[string]dtq.HandlerFunc{
		"resize": func(_ context.Context, t *dtq.Task) (any, error) {
			var width int
			if err := json.Unmarshal(t.Payload, &width); err != nil || width > 2000 {
				return nil, dtq.Permanent(errors.New("width out of range"))
			}
			return fmt.Sprintf("%dpx", width), nil
		},
		"report": func(_ context.Context, t *dtq.Task) (any, error) {
			var outcomes []struct {
				Status string `json:"status"`
			}
			if err := json.Unmarshal(t.Previous, &outcomes); err != nil {
				return nil, dtq.Permanent(err)
			}
			ok := 0
			for _, o := range outcomes {
				if o.Status == dtq.NodeSucceeded {
					ok++
				}
			}
			return fmt.Sprintf("%d of %d resized", ok, len(outcomes)), nil
		},
	})
	defer stop()

	all := dtq.Parallel(dtq.Call("resize", 480, nil), dtq.Call("resize", 1080, nil), dtq.Call("resize", 4000, nil))
	report := dtq.Call("report", nil, nil)
	all.OnComplete = &report
	wf, err := client.EnqueueWorkflow(ctx, all, nil)
	if err != nil {
		panic(err)
	}
	wf = waitWorkflow(client, wf.ID)
	fmt.Println(wf.Root.Kind, wf.Status, string(wf.Result))
	for _, child := range wf.Root.Children {
		fmt.Println(child.Kind, child.Status, cmp.Or(string(child.Result), child.Error))
	}
	// Output:
	// parallel SUCCEEDED "2 of 3 resized"
	// task SUCCEEDED "480px"
	// task SUCCEEDED "1080px"
	// task FAILED width out of range
}

// Listing workflows: Admin.ListWorkflows pages a queue's workflows, newest
// first, here only the failed ones, each with its progress.
func ExampleAdmin_ListWorkflows() {
	ctx := context.Background()
	client, stop := start(&dtq.WorkerConfig{Queues: []string{"imports"}}, map[string]dtq.HandlerFunc{
		"step": func(_ context.Context, t *dtq.Task) (any, error) {
			if string(t.Payload) == `"bad"` {
				return nil, dtq.Permanent(errors.New("bad input"))
			}
			return "ok", nil
		},
	})
	defer stop()

	for _, input := range []string{"good", "bad"} {
		wf, err := client.EnqueueWorkflow(ctx, dtq.Chain(dtq.Call("step", input, nil), dtq.Call("step", "next", nil)),
			&dtq.WorkflowOpts{Queue: "imports"})
		if err != nil {
			panic(err)
		}
		waitWorkflow(client, wf.ID)
	}
	page, err := dtq.NewAdmin(client).ListWorkflows(ctx, dtq.ListWorkflowsOpts{Queue: "imports", Status: dtq.WorkflowFailed})
	if err != nil {
		panic(err)
	}
	for _, w := range page.Workflows {
		p := w.Progress
		fmt.Printf("%s: %d of %d succeeded, %d failed, %d skipped\n", w.Status, p.Succeeded, p.Total, p.Failed, p.Skipped)
	}
	// Output:
	// FAILED: 0 of 2 succeeded, 1 failed, 1 skipped
}
