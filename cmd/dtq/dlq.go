package main

import (
	"fmt"
	"io"
	"net/url"
	"strconv"

	"github.com/dtq-dev/dtq/api/wire"
	"github.com/spf13/cobra"
)

// dlqOptions are the flags of the dlq group, shared by its subcommands;
// those with flags of their own have their own options too.
type dlqOptions struct {
	api apiOptions
}

// newDLQCmd builds `dtq dlq` and its subcommands list, requeue, discard
// and purge, which share the API flags of the group.
func newDLQCmd(out io.Writer) *cobra.Command {
	var o dlqOptions
	api := &o.api
	cmd := &cobra.Command{
		Use:   "dlq",
		Short: "Inspect and act on dead letters (tasks that failed for good)",
		Args:  cobra.NoArgs,
		RunE:  func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	addAPIFlags(cmd, api)
	cmd.AddCommand(newDLQListCmd(out, api), newDLQRequeueCmd(out, api), newDLQDiscardCmd(out, api), newDLQPurgeCmd(out, api),
		newDLQRedriveCmd(out, api))
	return cmd
}

type dlqListOptions struct {
	api    *apiOptions
	queue  string
	limit  int
	cursor string
}

// newDLQListCmd builds `dtq dlq list`: GET /api/v1/dlq.
func newDLQListCmd(out io.Writer, api *apiOptions) *cobra.Command {
	o := dlqListOptions{api: api}
	cmd := &cobra.Command{
		Use:     "list",
		Short:   "List the dead letters of a queue, newest first",
		Example: "  dtq dlq list\n  dtq dlq list --queue emails --json",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			q := url.Values{}
			if o.queue != "" {
				q.Set("queue", o.queue)
			}
			if o.cursor != "" {
				q.Set("cursor", o.cursor)
			}
			if cmd.Flags().Changed("limit") {
				q.Set("limit", strconv.Itoa(o.limit))
			}
			var page wire.DeadLetterPage
			return clientRun(cmd, o.api, out, func(c *apiClient) (*answer, error) {
				return c.doJSON(cmd.Context(), call{method: "GET", path: "/api/v1/dlq", query: q}, &page)
			}, func() error {
				if len(page.DeadLetters) == 0 {
					fmt.Fprintln(out, "no dead letters")
				} else {
					tb := newTable(out, "ID", "TYPE", "ATTEMPTS", "DIED", "REASON")
					for _, l := range page.DeadLetters {
						t := l.Task
						if t == nil {
							t = &wire.Task{}
						}
						reason := l.Reason
						if reason == "" {
							reason = t.LastError
						}
						tb.row(t.ID, t.TaskType, attempts(t), fmtTime(l.DeadAt), oneLine(reason, 80))
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
	f.IntVar(&o.limit, "limit", 50, "dead letters per page, 1-1000")
	f.StringVar(&o.cursor, "cursor", "", "continue after a previous page (its \"next page\" cursor)")
	return cmd
}

// newDLQRequeueCmd builds `dtq dlq requeue ID`: POST /api/v1/dlq/{id}/requeue.
func newDLQRequeueCmd(out io.Writer, api *apiOptions) *cobra.Command {
	return &cobra.Command{
		Use:     "requeue ID",
		Short:   "Requeue one dead task: QUEUED again with its attempts and crashes reset (all of its max attempts), its history kept",
		Example: "  dtq dlq requeue default-01JB8X6Q2R3M7ZC9Y5F4K0N1TW",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			id, err := pathID("task id", args[0])
			if err != nil {
				return err
			}
			var task wire.Task
			return clientRun(cmd, api, out, func(c *apiClient) (*answer, error) {
				return c.doJSON(cmd.Context(), call{method: "POST", path: "/api/v1/dlq/" + id + "/requeue"}, &task)
			}, func() error {
				_, err := fmt.Fprintf(out, "requeued %s (status %s, attempt %s)\n", oneLine(task.ID, 0), task.Status, attempts(&task))
				return err
			})
		},
	}
}

// newDLQDiscardCmd builds `dtq dlq discard ID`: DELETE /api/v1/dlq/{id}.
func newDLQDiscardCmd(out io.Writer, api *apiOptions) *cobra.Command {
	return &cobra.Command{
		Use:     "discard ID",
		Short:   "Delete one dead task for good",
		Example: "  dtq dlq discard default-01JB8X6Q2R3M7ZC9Y5F4K0N1TW",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			id, err := pathID("task id", args[0])
			if err != nil {
				return err
			}
			var res wire.DiscardedTask
			return clientRun(cmd, api, out, func(c *apiClient) (*answer, error) {
				return c.doJSON(cmd.Context(), call{method: "DELETE", path: "/api/v1/dlq/" + id}, &res)
			}, func() error {
				_, err := fmt.Fprintf(out, "discarded %s\n", oneLine(res.Discarded, 0))
				return err
			})
		},
	}
}

// queueScope is the --queue or --all-queues of a command that acts on
// many dead letters at once (dlq purge, dlq redrive, retry-dlq): such a
// command names its queue or says --all-queues, and has no default.
type queueScope struct {
	queue string
	all   bool
}

// add adds --queue and --all-queues to cmd; what is what it does to the
// dead letters ("delete the dead letters").
func (s *queueScope) add(cmd *cobra.Command, what string) {
	cmd.Flags().StringVar(&s.queue, "queue", "", what+" of this queue (this or --all-queues is required)")
	cmd.Flags().BoolVar(&s.all, "all-queues", false, what+" of every queue")
	cmd.MarkFlagsMutuallyExclusive("queue", "all-queues")
}

// check refuses a command given neither --queue nor --all-queues.
func (s *queueScope) check(cmd *cobra.Command) error {
	if s.queue == "" && !s.all {
		return fmt.Errorf("%s acts on the dead letters of one queue or of all: give --queue NAME or --all-queues", cmd.CommandPath())
	}
	return nil
}

// query is the ?queue= of the scope (none for every queue).
func (s *queueScope) query() url.Values {
	q := url.Values{}
	if !s.all {
		q.Set("queue", s.queue)
	}
	return q
}

// String names the scope in output: "queue NAME" or "every queue".
func (s *queueScope) String() string {
	if s.all {
		return "every queue"
	}
	return "queue " + oneLine(s.queue, 0)
}

type dlqPurgeOptions struct {
	api   *apiOptions
	scope queueScope
	yes   bool
}

// newDLQPurgeCmd builds `dtq dlq purge`: DELETE /api/v1/dlq.
func newDLQPurgeCmd(out io.Writer, api *apiOptions) *cobra.Command {
	o := dlqPurgeOptions{api: api}
	cmd := &cobra.Command{
		Use:     "purge",
		Short:   "Delete every dead letter of a queue (--queue), or of all queues (--all-queues), for good",
		Example: "  dtq dlq purge --queue emails --yes\n  dtq dlq purge --all-queues --yes",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := o.scope.check(cmd); err != nil {
				return err
			}
			scope := o.scope.String()
			if !o.yes {
				return fmt.Errorf("dlq purge deletes the dead letters of %s for good: add --yes to confirm", scope)
			}
			q := o.scope.query()
			var res wire.DiscardedCount
			return clientRun(cmd, o.api, out, func(c *apiClient) (*answer, error) {
				return c.doJSON(cmd.Context(), call{method: "DELETE", path: "/api/v1/dlq", query: q}, &res)
			}, func() error {
				_, err := fmt.Fprintf(out, "discarded %d dead letters of %s\n", res.Discarded, scope)
				return err
			})
		},
	}
	o.scope.add(cmd, "delete the dead letters")
	cmd.Flags().BoolVar(&o.yes, "yes", false, "confirm: the dead letters are deleted for good")
	return cmd
}
