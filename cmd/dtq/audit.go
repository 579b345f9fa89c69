package main

import (
	"fmt"
	"io"
	"net/url"
	"strconv"
	"strings"

	"github.com/dtq-dev/dtq"
	"github.com/dtq-dev/dtq/api/wire"
	"github.com/spf13/cobra"
)

type auditOptions struct {
	api   apiOptions
	limit int
}

// newAuditCmd builds `dtq audit`: GET /api/v1/audit.
func newAuditCmd(out io.Writer) *cobra.Command {
	var o auditOptions
	cmd := &cobra.Command{
		Use:   "audit",
		Short: "List recent admin actions, newest first",
		Long: "List the latest entries of the audit stream, newest first. The actions:\n" +
			strings.Join(dtq.AuditActions(), ", ") + "\n(workflow is a workflow's submission; discard-all and redrive act on dead letters, retry-dlq records a redrive).",
		Example: "  dtq audit --limit 20",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			q := url.Values{}
			if cmd.Flags().Changed("limit") {
				q.Set("limit", strconv.Itoa(o.limit))
			}
			var res wire.AuditList
			return clientRun(cmd, &o.api, out, func(c *apiClient) (*answer, error) {
				return c.doJSON(cmd.Context(), call{method: "GET", path: "/api/v1/audit", query: q}, &res)
			}, func() error {
				if len(res.Entries) == 0 {
					_, err := fmt.Fprintln(out, "no audit entries")
					return err
				}
				tb := newTable(out, "TIME", "ACTION", "QUEUE", "TASK", "DETAIL")
				for _, e := range res.Entries {
					tb.row(fmtTime(e.Time), e.Action, dash(e.Queue), dash(e.TaskID), dash(oneLine(e.Detail, 80)))
				}
				return tb.flush()
			})
		},
	}
	cmd.Flags().IntVar(&o.limit, "limit", 100, "entries to show, 1-1000")
	addAPIFlags(cmd, &o.api)
	return cmd
}
