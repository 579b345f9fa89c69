package main

import (
	"fmt"
	"io"

	"github.com/dtq-dev/dtq/api/wire"
	"github.com/spf13/cobra"
)

type runNowOptions struct {
	api apiOptions
}

// newRunNowCmd builds `dtq run-now ID`: POST /api/v1/tasks/{id}/run-now.
func newRunNowCmd(out io.Writer) *cobra.Command {
	var o runNowOptions
	cmd := &cobra.Command{
		Use:   "run-now ID",
		Short: "Run a scheduled task (delayed, retrying, sleeping or debounced) now",
		Long: "Moves a task waiting in the schedule into its priority band at once, as its due time coming now\n" +
			"would: it is QUEUED and runs in its turn. A task that is not SCHEDULED is refused (409 not_scheduled).",
		Example: "  dtq run-now default-01JB8X6Q2R3M7ZC9Y5F4K0N1TW",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			id, err := pathID("task id", args[0])
			if err != nil {
				return err
			}
			var task wire.Task
			return clientRun(cmd, &o.api, out, func(c *apiClient) (*answer, error) {
				return c.doJSON(cmd.Context(), call{method: "POST", path: "/api/v1/tasks/" + id + "/run-now"}, &task)
			}, func() error {
				_, err := fmt.Fprintf(out, "%s runs now (status %s)\n", oneLine(task.ID, 0), task.Status)
				return err
			})
		},
	}
	addAPIFlags(cmd, &o.api)
	return cmd
}
