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

type listOptions struct {
	api      apiOptions
	queue    string
	status   string
	taskType string
	limit    int
	cursor   string
	// search
	idPrefix, errContains, after, before string
	suspended                            bool // ?suspended=true
}

// newListCmd builds `dtq list`: GET /api/v1/tasks.
func newListCmd(out io.Writer) *cobra.Command {
	var o listOptions
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List the tasks of a queue, in the order they run",
		Long: `List the tasks of one queue, a page at a time, in this order: running and
queued tasks in the order they run (priority 9 first, oldest first within a
priority), then scheduled ones (earliest due first), dead letters (newest
first), then finished tasks (most recently finished first); --suspended
lists only the tasks in a durable sleep or waiting for a signal, earliest
due first. While more
follow, a page ends with a line "next page: --cursor CURSOR": give that
CURSOR, as it is, to --cursor for the next page (a cursor is opaque; one
no page printed answers 400).`,
		Example: `  dtq list --status dead
  dtq list --queue emails --type email.send --limit 20
  dtq list --queue emails --type email.send --limit 20 --cursor CURSOR
  dtq list --status dead --error timeout --created-after 2026-12-01T08:00:00Z
  dtq list --queue orders --suspended`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			q := url.Values{}
			set := func(k, v string) {
				if v != "" {
					q.Set(k, v)
				}
			}
			set("queue", o.queue)
			set("status", strings.ToUpper(o.status))
			set("type", o.taskType)
			set("cursor", o.cursor)
			set("id_prefix", o.idPrefix)
			set("error", o.errContains)
			set("created_after", o.after)
			set("created_before", o.before)
			if o.suspended {
				q.Set("suspended", "true")
			}
			if cmd.Flags().Changed("limit") {
				q.Set("limit", strconv.Itoa(o.limit))
			}
			var page wire.TaskPage
			return clientRun(cmd, &o.api, out, func(c *apiClient) (*answer, error) {
				return c.doJSON(cmd.Context(), call{method: "GET", path: "/api/v1/tasks", query: q}, &page)
			}, func() error {
				if len(page.Tasks) == 0 {
					fmt.Fprintln(out, "no tasks")
				} else {
					tb := newTable(out, "ID", "TYPE", "STATUS", "PRIO", "ATTEMPT", "CREATED")
					for _, t := range page.Tasks {
						tb.row(t.ID, t.TaskType, t.Status, strconv.Itoa(t.Priority), attempts(t), fmtTime(t.CreatedAt))
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
	f.StringVar(&o.status, "status", "", "only this status: queued, scheduled, running, succeeded, dead, cancelled")
	f.StringVar(&o.taskType, "type", "", "only this task type")
	f.BoolVar(&o.suspended, "suspended", false, "only suspended tasks (a durable sleep, a wait for a signal), earliest due first")
	f.StringVar(&o.idPrefix, "id-prefix", "", "only tasks whose id starts with this")
	f.StringVar(&o.errContains, "error", "", "only tasks whose last error contains this (any letter case)")
	f.StringVar(&o.after, "created-after", "", "only tasks created at or after this time (RFC 3339)")
	f.StringVar(&o.before, "created-before", "", "only tasks created before this time (RFC 3339)")
	f.IntVar(&o.limit, "limit", 50, "tasks per page, 1-500")
	f.StringVar(&o.cursor, "cursor", "", "continue after a previous page (its \"next page\" cursor)")
	addAPIFlags(cmd, &o.api)
	return cmd
}
