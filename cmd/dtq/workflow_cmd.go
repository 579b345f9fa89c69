package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"unicode/utf8"

	"github.com/dtq-dev/dtq/api/wire"
	"github.com/spf13/cobra"
)

// newWorkflowCmd builds `dtq workflow` and its subcommands get, cancel, list and
// submit: chains, and parallel nodes with callbacks.
func newWorkflowCmd(out io.Writer) *cobra.Command {
	var api apiOptions
	cmd := &cobra.Command{
		Use:   "workflow",
		Short: "Submit, list, show and cancel workflows (chains, parallel nodes with callbacks)",
		Args:  cobra.NoArgs,
		RunE:  func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	addAPIFlags(cmd, &api)
	cmd.AddCommand(newWorkflowSubmitCmd(out, &api), newWorkflowGetCmd(out, &api), newWorkflowCancelCmd(out, &api), newWorkflowListCmd(out, &api))
	return cmd
}

// workflowPath is /api/v1/workflows/{id}.
func workflowPath(id string) (string, error) {
	p, err := pathID("workflow id", id)
	if err != nil {
		return "", err
	}
	return "/api/v1/workflows/" + p, nil
}

// newWorkflowGetCmd builds `dtq workflow get ID`.
func newWorkflowGetCmd(out io.Writer, api *apiOptions) *cobra.Command {
	return &cobra.Command{
		Use:     "get ID",
		Short:   "Show a workflow: its status, progress and the state of each node",
		Example: "  dtq workflow get media-01JB8X6Q2R3M7ZC9Y5F4K0N1TW\n  dtq workflow get media-01JB8X6Q2R3M7ZC9Y5F4K0N1TW --json | jq .progress",
		Args:    cobra.ExactArgs(1),
		RunE:    workflowRun(out, api, "GET", ""),
	}
}

// newWorkflowCancelCmd builds `dtq workflow cancel ID`.
func newWorkflowCancelCmd(out io.Writer, api *apiOptions) *cobra.Command {
	return &cobra.Command{
		Use:     "cancel ID",
		Short:   "Cancel a workflow: no node starts any more and the tasks of its active nodes are cancelled",
		Example: "  dtq workflow cancel media-01JB8X6Q2R3M7ZC9Y5F4K0N1TW",
		Args:    cobra.ExactArgs(1),
		RunE:    workflowRun(out, api, "POST", "/cancel"),
	}
}

// workflowRun is the RunE of get and cancel: method on the workflow's path
// (and suffix), its answer drawn.
func workflowRun(out io.Writer, api *apiOptions, method, suffix string) func(*cobra.Command, []string) error {
	return func(cmd *cobra.Command, args []string) error {
		path, err := workflowPath(args[0])
		if err != nil {
			return err
		}
		var wf wire.Workflow
		return clientRun(cmd, api, out, func(c *apiClient) (*answer, error) {
			return c.doJSON(cmd.Context(), call{method: method, path: path + suffix}, &wf)
		}, func() error { return printWorkflow(out, &wf) })
	}
}

// newWorkflowSubmitCmd builds `dtq workflow submit --file FILE`.
func newWorkflowSubmitCmd(out io.Writer, api *apiOptions) *cobra.Command {
	var file, queue, idemKey string
	cmd := &cobra.Command{
		Use:   "submit --file FILE",
		Short: "Submit a workflow from a JSON file (- for standard input)",
		Long: `Submit the workflow of --file (a path, or - for standard input): the JSON body of
POST /api/v1/workflows, {"queue": "...", "root": NODE}, where a NODE is one of
  {"task": {"task_type": "...", "payload": ..., "priority": n, "max_attempts": n, "timeout_seconds": x}}
  {"chain": [NODE, ...]}
  {"parallel": [NODE, ...], "on_success": NODE, "on_complete": NODE}
--queue replaces the file's queue. Tasks that run as one unit (all or none),
with a callback once all have ended, are a root parallel node.`,
		Example: `  dtq workflow submit --file pipeline.json
  dtq workflow submit --file pipeline.json --queue media
  echo '{"root":{"parallel":[{"task":{"task_type":"resize","payload":1}}]}}' | dtq workflow submit --file -`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			body, err := readWorkflowFile(cmd, file)
			if err != nil {
				return err
			}
			if cmd.Flags().Changed("queue") {
				q, err := json.Marshal(queue)
				if err != nil {
					return err
				}
				body["queue"] = q
			}
			var wf wire.Workflow
			var ans *answer
			return clientRun(cmd, api, out, func(c *apiClient) (*answer, error) {
				h := http.Header{}
				if idemKey != "" {
					h.Set("Idempotency-Key", idemKey)
				}
				var err error
				ans, err = c.doJSON(cmd.Context(), call{method: "POST", path: "/api/v1/workflows", body: body, header: h}, &wf)
				return ans, err
			}, func() error {
				if ans.status == http.StatusOK {
					fmt.Fprintln(out, "already submitted (same Idempotency-Key):")
				}
				return printWorkflow(out, &wf)
			})
		},
	}
	f := cmd.Flags()
	f.StringVar(&idemKey, "idempotency-key", "", "submit at most once per key (Idempotency-Key header)")
	f.StringVar(&file, "file", "", `the workflow as JSON, {"queue", "root"} (- for standard input; required)`)
	f.StringVar(&queue, "queue", "", `queue of every task of the workflow, replacing the file's (default: the file's, else "default")`)
	if err := cmd.MarkFlagRequired("file"); err != nil {
		panic(err) // a flag defined above
	}
	return cmd
}

// readWorkflowFile reads the workflow body from file (- for standard
// input) and checks it is one JSON object; the server checks the rest.
func readWorkflowFile(cmd *cobra.Command, file string) (map[string]json.RawMessage, error) {
	var raw []byte
	var err error
	name := "--file " + file
	if file == "-" {
		name = "the workflow on standard input"
		if raw, err = io.ReadAll(cmd.InOrStdin()); err != nil {
			return nil, fmt.Errorf("reading the workflow from standard input: %w", err)
		}
	} else {
		if file == "" {
			return nil, fmt.Errorf("--file must not be empty: give a path, or - for standard input")
		}
		if raw, err = os.ReadFile(file); err != nil {
			return nil, fmt.Errorf("--file: %w", err)
		}
	}
	raw = bytes.TrimSpace(raw)
	switch {
	case len(raw) == 0:
		return nil, fmt.Errorf(`%s is empty: give a JSON object {"queue": …, "root": node}`, name)
	case !utf8.Valid(raw):
		return nil, fmt.Errorf("%s is not valid UTF-8", name)
	case raw[0] != '{':
		return nil, fmt.Errorf(`%s is not a JSON object {"queue": …, "root": node}`, name)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	var body map[string]json.RawMessage
	if err := dec.Decode(&body); err != nil {
		return nil, fmt.Errorf("%s is not valid JSON: %v", name, err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("%s is not valid JSON: unexpected data after the object", name)
	}
	return body, nil
}

// printWorkflow writes a workflow's header line (id, queue, status,
// progress), its result, then its graph: one line per node, indented.
func printWorkflow(out io.Writer, wf *wire.Workflow) error {
	status := wf.Status
	if wf.CancelRequested && wf.Status == "RUNNING" {
		status += " (cancel requested)"
	}
	if _, err := fmt.Fprintf(out, "workflow %s  queue %s  %s  progress: %s\n", oneLine(wf.ID, 0), oneLine(wf.Queue, 0),
		oneLine(status, 0), workflowProgress(wf)); err != nil {
		return err
	}
	if err := fields(out, "result", oneLine(compact(wf.Result), maxValueRunes)); err != nil {
		return err
	}
	var b strings.Builder
	writeNode(&b, wf.Root, 0, "")
	_, err := io.WriteString(out, b.String())
	return err
}

// workflowProgress formats the progress: "1 of 4 succeeded, 1 active, 2
// pending", leaving out the counts that are 0.
func workflowProgress(wf *wire.Workflow) string {
	p := wf.Progress
	s := fmt.Sprintf("%d of %d succeeded", p.Succeeded, p.Total)
	for _, c := range []struct {
		n    int
		what string
	}{{p.Active, "active"}, {p.Pending, "pending"}, {p.Failed, "failed"}, {p.Cancelled, "cancelled"}, {p.Skipped, "skipped"}} {
		if c.n > 0 {
			s += fmt.Sprintf(", %d %s", c.n, c.what)
		}
	}
	return s
}

// writeNode writes n and its descendants, depth levels in; label (such as
// "on_success: ") comes before its kind.
func writeNode(b *strings.Builder, n *wire.WorkflowNode, depth int, label string) {
	if n == nil {
		return
	}
	b.WriteString(strings.Repeat("  ", depth))
	b.WriteString(label)
	fmt.Fprintf(b, "%s #%d %s", oneLine(n.Kind, 0), n.Node, oneLine(n.Status, 0))
	for _, s := range []string{n.TaskType, n.TaskID} {
		if s = oneLine(s, 0); s != "" {
			b.WriteString(" " + s)
		}
	}
	if e := oneLine(n.Error, maxValueRunes); e != "" {
		b.WriteString(": " + e)
	}
	b.WriteByte('\n')
	for _, s := range n.Nodes {
		writeNode(b, s, depth+1, "")
	}
	for _, c := range n.Children {
		writeNode(b, c, depth+1, "")
	}
	writeNode(b, n.OnSuccess, depth+1, "on_success: ")
	writeNode(b, n.OnComplete, depth+1, "on_complete: ")
}
