package main

import (
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/dtq-dev/dtq/api/wire"
	"github.com/spf13/cobra"
)

// queueOptions are the flags of the queue group, shared by its
// subcommands.
type queueOptions struct {
	api apiOptions
}

// newQueueCmd builds `dtq queue` and its subcommands list, stats, pause,
// resume, rm and order-keys, which share the API flags of the group.
func newQueueCmd(out io.Writer) *cobra.Command {
	var o queueOptions
	api := &o.api
	cmd := &cobra.Command{
		Use:   "queue",
		Short: "Inspect, pause, resume and delete queues",
		Args:  cobra.NoArgs,
		RunE:  func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	addAPIFlags(cmd, api)
	cmd.AddCommand(newQueueListCmd(out, api), newQueueStatsCmd(out, api),
		newQueuePauseCmd(out, api, "pause", "Stop workers from starting tasks of a queue (submits still succeed)"),
		newQueuePauseCmd(out, api, "resume", "Let workers start tasks of a paused queue again"),
		newQueueRmCmd(out, api), newQueueOrderKeysCmd(out, api))
	return cmd
}

// newQueueListCmd builds `dtq queue list`: GET /api/v1/queues.
func newQueueListCmd(out io.Writer, api *apiOptions) *cobra.Command {
	return &cobra.Command{
		Use:     "list",
		Short:   "List the queues with their counts",
		Example: "  dtq queue list",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var res wire.QueueList
			return clientRun(cmd, api, out, func(c *apiClient) (*answer, error) {
				return c.doJSON(cmd.Context(), call{method: "GET", path: "/api/v1/queues"}, &res)
			}, func() error {
				if len(res.Queues) == 0 {
					_, err := fmt.Fprintln(out, "no queues")
					return err
				}
				tb := newTable(out, "NAME", "STATE", "QUEUED", "SCHEDULED", "RUNNING", "DEAD", "SUBMITTED", "SUCCEEDED")
				for _, q := range res.Queues {
					tb.row(q.Name, state(q.Paused), num(q.Queued), num(q.Scheduled), num(q.Running), num(q.Dead), num(q.SubmittedTotal), num(q.SucceededTotal))
				}
				return tb.flush()
			})
		},
	}
}

// newQueueStatsCmd builds `dtq queue stats NAME`: GET /api/v1/queues/{name}.
func newQueueStatsCmd(out io.Writer, api *apiOptions) *cobra.Command {
	return &cobra.Command{
		Use:     "stats NAME",
		Short:   "Show the counts of a queue",
		Example: "  dtq queue stats default",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			name, err := pathID("queue name", args[0])
			if err != nil {
				return err
			}
			var q wire.QueueStats
			return clientRun(cmd, api, out, func(c *apiClient) (*answer, error) {
				return c.doJSON(cmd.Context(), call{method: "GET", path: "/api/v1/queues/" + name}, &q)
			}, func() error { return printQueue(out, &q) })
		},
	}
}

// newQueuePauseCmd builds `dtq queue pause NAME` or `dtq queue resume
// NAME` (action): POST /api/v1/queues/{name}/{action}.
func newQueuePauseCmd(out io.Writer, api *apiOptions, action, short string) *cobra.Command {
	return &cobra.Command{
		Use:     action + " NAME",
		Short:   short,
		Example: "  dtq queue " + action + " emails",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			name, err := pathID("queue name", args[0])
			if err != nil {
				return err
			}
			var q wire.QueueStats
			return clientRun(cmd, api, out, func(c *apiClient) (*answer, error) {
				return c.doJSON(cmd.Context(), call{method: "POST", path: "/api/v1/queues/" + name + "/" + action}, &q)
			}, func() error {
				_, err := fmt.Fprintf(out, "queue %s is %s (%d queued, %d running)\n", oneLine(q.Name, 0), state(q.Paused), q.Queued, q.Running)
				return err
			})
		},
	}
}

// newQueueRmCmd builds `dtq queue rm NAME [--force]`: DELETE
// /api/v1/queues/{name}.
func newQueueRmCmd(out io.Writer, api *apiOptions) *cobra.Command {
	var force bool
	cmd := &cobra.Command{
		Use:     "rm NAME",
		Aliases: []string{"delete"},
		Short:   "Delete a queue and everything of it (refused while it holds work, unless --force)",
		Long: "Deletes the queue's tasks (finished ones too), dead letters, schedules, unique locks, idempotency\n" +
			"records, pause flag and totals. A queue that holds queued, scheduled, running or dead tasks is\n" +
			"refused unless --force, which deletes those too (running tasks' outcomes are then not recorded).",
		Example: "  dtq queue rm old-imports\n  dtq queue rm old-imports --force",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			name, err := pathID("queue name", args[0])
			if err != nil {
				return err
			}
			path := "/api/v1/queues/" + name
			if force {
				path += "?force=true"
			}
			var d wire.DeletedQueue
			return clientRun(cmd, api, out, func(c *apiClient) (*answer, error) {
				ans, err := c.doJSON(cmd.Context(), call{method: "DELETE", path: path}, &d)
				return ans, forceHint(err)
			}, func() error {
				_, err := fmt.Fprintf(out, "deleted queue %s (it held %d queued, %d scheduled, %d running, %d dead)\n",
					oneLine(d.Queue, 0), d.Queued, d.Scheduled, d.Running, d.Dead)
				return err
			})
		},
	}
	cmd.Flags().BoolVar(&force, "force", false, "delete the queue even though it holds queued, scheduled, running or dead tasks")
	return cmd
}

// forceHint rewrites the API's hint in a 409 queue_not_empty ("?force=true
// deletes them too") as the command's: --force.
func forceHint(err error) error {
	var ae *apiError
	if errors.As(err, &ae) && ae.Code == wire.CodeNotEmpty {
		msg, _, _ := strings.Cut(ae.Message, "; ?force=true")
		ae.Message = msg + "; dtq queue rm --force deletes them too"
	}
	return err
}

// printQueue writes a queue's counts.
func printQueue(out io.Writer, q *wire.QueueStats) error {
	var prio []string
	for p := len(q.QueuedByPriority) - 1; p >= 0; p-- {
		if n := q.QueuedByPriority[p]; n > 0 {
			prio = append(prio, fmt.Sprintf("p%d=%d", p, n))
		}
	}
	return fields(out,
		"name", q.Name,
		"state", state(q.Paused),
		"queued", num(q.Queued),
		"by priority", strings.Join(prio, " "),
		"scheduled", num(q.Scheduled),
		"suspended", num(q.Suspended),
		"running", num(q.Running),
		"dead letters", num(q.Dead),
		"submitted", num(q.SubmittedTotal),
		"succeeded", num(q.SucceededTotal),
		"retried", num(q.RetriedTotal),
		"dead (total)", num(q.DeadTotal),
		"cancelled", num(q.CancelledTotal),
	)
}

func num(n int64) string { return strconv.FormatInt(n, 10) }
