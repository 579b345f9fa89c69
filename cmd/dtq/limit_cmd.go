package main

import (
	"fmt"
	"io"
	"strconv"

	"github.com/spf13/cobra"
)

// limitView is the API's limit object.
type limitView struct {
	Queue      string `json:"queue"`
	MaxRunning int64  `json:"max_running"`
	InUse      int64  `json:"in_use"`
}

// newLimitCmd builds `dtq limit` and its subcommands list, set and rm, which
// share the API flags of the group.
func newLimitCmd(out io.Writer) *cobra.Command {
	var api apiOptions
	cmd := &cobra.Command{
		Use:   "limit",
		Short: "List, set and remove queues' concurrency limits (across every worker)",
		Args:  cobra.NoArgs,
		RunE:  func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	addAPIFlags(cmd, &api)
	cmd.AddCommand(newLimitListCmd(out, &api), newLimitSetCmd(out, &api), newLimitRmCmd(out, &api))
	return cmd
}

// newLimitListCmd builds `dtq limit list`: GET /api/v1/limits.
func newLimitListCmd(out io.Writer, api *apiOptions) *cobra.Command {
	return &cobra.Command{
		Use:     "list",
		Short:   "List the queues that have a concurrency limit",
		Example: "  dtq limit list",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var res struct {
				Limits []limitView `json:"limits"`
			}
			return clientRun(cmd, api, out, func(c *apiClient) (*answer, error) {
				return c.doJSON(cmd.Context(), call{method: "GET", path: "/api/v1/limits"}, &res)
			}, func() error {
				if len(res.Limits) == 0 {
					_, err := fmt.Fprintln(out, "no limits")
					return err
				}
				tb := newTable(out, "QUEUE", "MAX RUNNING", "IN USE")
				for _, l := range res.Limits {
					tb.row(l.Queue, num(l.MaxRunning), num(l.InUse))
				}
				return tb.flush()
			})
		},
	}
}

// newLimitSetCmd builds `dtq limit set QUEUE N`: PUT /api/v1/limits/{queue}.
func newLimitSetCmd(out io.Writer, api *apiOptions) *cobra.Command {
	return &cobra.Command{
		Use:     "set QUEUE MAX_RUNNING",
		Short:   "Run at most MAX_RUNNING of the queue's tasks at once, across every worker",
		Example: "  dtq limit set reports 5",
		Args:    cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			name, err := pathID("queue name", args[0])
			if err != nil {
				return err
			}
			n, err := strconv.ParseInt(args[1], 10, 64)
			if err != nil || n < 1 {
				return fmt.Errorf("MAX_RUNNING must be a whole number of at least 1 (got %q; dtq limit rm removes a limit)", args[1])
			}
			var l limitView
			return clientRun(cmd, api, out, func(c *apiClient) (*answer, error) {
				return c.doJSON(cmd.Context(), call{method: "PUT", path: "/api/v1/limits/" + name, body: map[string]int64{"max_running": n}}, &l)
			}, func() error {
				_, err := fmt.Fprintf(out, "queue %s: at most %d running at once (%d in use)\n", oneLine(l.Queue, 0), l.MaxRunning, l.InUse)
				return err
			})
		},
	}
}

// newLimitRmCmd builds `dtq limit rm QUEUE`: DELETE /api/v1/limits/{queue}.
func newLimitRmCmd(out io.Writer, api *apiOptions) *cobra.Command {
	return &cobra.Command{
		Use:     "rm QUEUE",
		Short:   "Remove a queue's concurrency limit",
		Example: "  dtq limit rm reports",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			name, err := pathID("queue name", args[0])
			if err != nil {
				return err
			}
			var l limitView
			return clientRun(cmd, api, out, func(c *apiClient) (*answer, error) {
				return c.doJSON(cmd.Context(), call{method: "DELETE", path: "/api/v1/limits/" + name}, &l)
			}, func() error {
				_, err := fmt.Fprintf(out, "queue %s: no concurrency limit\n", oneLine(l.Queue, 0))
				return err
			})
		},
	}
}
