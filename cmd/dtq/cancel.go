package main

import (
	"fmt"
	"io"

	"github.com/dtq-dev/dtq/api/wire"
	"github.com/spf13/cobra"
)

type cancelOptions struct {
	api apiOptions
}

// newCancelCmd builds `dtq cancel ID`: POST /api/v1/tasks/{id}/cancel.
func newCancelCmd(out io.Writer) *cobra.Command {
	var o cancelOptions
	cmd := &cobra.Command{
		Use:     "cancel ID",
		Short:   "Cancel a queued, scheduled or running task",
		Example: "  dtq cancel default-01JB8X6Q2R3M7ZC9Y5F4K0N1TW",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			id, err := pathID("task id", args[0])
			if err != nil {
				return err
			}
			var task wire.Task
			return clientRun(cmd, &o.api, out, func(c *apiClient) (*answer, error) {
				return c.doJSON(cmd.Context(), call{method: "POST", path: "/api/v1/tasks/" + id + "/cancel"}, &task)
			}, func() error {
				if task.CancelRequested && task.Status != "CANCELLED" {
					_, err := fmt.Fprintf(out, "cancel requested for %s: it is %s and ends CANCELLED when its handler returns\n", oneLine(task.ID, 0), task.Status)
					return err
				}
				_, err := fmt.Fprintf(out, "cancelled %s (status %s)\n", oneLine(task.ID, 0), task.Status)
				return err
			})
		},
	}
	addAPIFlags(cmd, &o.api)
	return cmd
}
