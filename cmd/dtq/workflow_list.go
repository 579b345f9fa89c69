package main

import (
	"fmt"
	"io"
	"net/url"
	"strconv"
	"strings"

	"github.com/dtq-dev/dtq/api/wire"
	"github.com/spf13/cobra"
)

// workflowListOptions are the flags of `dtq workflow list`.
type workflowListOptions struct {
	queue, status, after, before, cursor string
	limit                                int
}

// newWorkflowListCmd builds `dtq workflow list`: GET /api/v1/workflows.
func newWorkflowListCmd(out io.Writer, api *apiOptions) *cobra.Command {
	var o workflowListOptions
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List the workflows of a queue, newest first",
		Long: `List the workflows of one queue, newest first, a page at a time: each with its
status, progress (task nodes succeeded of all) and creation time, from its
submission until it expires. While more follow, a page ends with a line
"next page: --cursor CURSOR": give that CURSOR, as it is, to --cursor for the
next page (a cursor is opaque; one no page printed answers 400).`,
		Example: `  dtq workflow list --queue media
  dtq workflow list --queue media --status failed --created-after 2026-12-01T09:00:00Z
  dtq workflow list --queue media --limit 20 --cursor CURSOR`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			q := url.Values{}
			for k, v := range map[string]string{"queue": o.queue, "status": strings.ToUpper(o.status), "created_after": o.after,
				"created_before": o.before, "cursor": o.cursor} {
				if v != "" {
					q.Set(k, v)
				}
			}
			if cmd.Flags().Changed("limit") {
				q.Set("limit", strconv.Itoa(o.limit))
			}
			var page wire.WorkflowPage
			return clientRun(cmd, api, out, func(c *apiClient) (*answer, error) {
				return c.doJSON(cmd.Context(), call{method: "GET", path: "/api/v1/workflows", query: q}, &page)
			}, func() error {
				if len(page.Workflows) == 0 {
					fmt.Fprintln(out, "no workflows")
				} else {
					tb := newTable(out, "ID", "STATUS", "PROGRESS", "CREATED", "FINISHED")
					for _, w := range page.Workflows {
						status := w.Status
						if w.CancelRequested && status == "RUNNING" {
							status += " (cancel requested)"
						}
						finished := "-"
						if w.FinishedAt != nil {
							finished = fmtTime(*w.FinishedAt)
						}
						tb.row(w.ID, status, workflowProgressLine(w.Progress), fmtTime(w.CreatedAt), finished)
					}
					if err := tb.flush(); err != nil {
						return err
					}
				}
				if page.NextCursor != "" {
					fmt.Fprintf(out, "next page: --cursor %s\n", oneLine(page.NextCursor, 0))
				}
				return nil
			})
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.queue, "queue", "", "queue (default: the server's, \"default\")")
	f.StringVar(&o.status, "status", "", "only this status: running, succeeded, failed, cancelled")
	f.StringVar(&o.after, "created-after", "", "only workflows created at or after this time (RFC 3339)")
	f.StringVar(&o.before, "created-before", "", "only workflows created before this time (RFC 3339)")
	f.IntVar(&o.limit, "limit", 50, "workflows per page, 1-500")
	f.StringVar(&o.cursor, "cursor", "", "continue after a previous page (its \"next page\" cursor)")
	return cmd
}

// workflowProgressLine is "<succeeded>/<total>" and the counts of the
// other statuses that are not zero.
func workflowProgressLine(p wire.WorkflowProgress) string {
	s := fmt.Sprintf("%d/%d", p.Succeeded, p.Total)
	for _, c := range []struct {
		n    int
		word string
	}{{p.Active, "active"}, {p.Failed, "failed"}, {p.Cancelled, "cancelled"}, {p.Skipped, "skipped"}} {
		if c.n > 0 {
			s += fmt.Sprintf(" %d %s", c.n, c.word)
		}
	}
	return s
}
