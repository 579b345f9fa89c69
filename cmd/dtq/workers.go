package main

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/dtq-dev/dtq/api/wire"
	"github.com/spf13/cobra"
)

type workersOptions struct {
	api apiOptions
}

// newWorkersCmd builds `dtq workers`: GET /api/v1/workers.
func newWorkersCmd(out io.Writer) *cobra.Command {
	var o workersOptions
	cmd := &cobra.Command{
		Use:     "workers",
		Short:   "List the live workers (those with a fresh heartbeat)",
		Example: "  dtq workers\n  dtq workers --json",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var res wire.WorkerList
			return clientRun(cmd, &o.api, out, func(c *apiClient) (*answer, error) {
				return c.doJSON(cmd.Context(), call{method: "GET", path: "/api/v1/workers"}, &res)
			}, func() error {
				if len(res.Workers) == 0 {
					_, err := fmt.Fprintln(out, "no live workers")
					return err
				}
				tb := newTable(out, "ID", "HOST", "PID", "QUEUES", "BUSY", "STATE", "STARTED", "HEARTBEAT")
				for _, w := range res.Workers {
					tb.row(w.ID, w.Host, strconv.Itoa(w.PID), strings.Join(w.Queues, ","),
						fmt.Sprintf("%d/%d", w.Busy, w.Concurrency), workerState(w), fmtTime(w.StartedAt), fmtTime(w.LastHeartbeat))
				}
				return tb.flush()
			})
		},
	}
	addAPIFlags(cmd, &o.api)
	cmd.AddCommand(newWorkerControlCmd(out, "quiet"), newWorkerControlCmd(out, "stop"))
	return cmd
}

// workerState is a worker's state for the table: what it says, and what
// was asked of it that it has not shown yet ("-" for a lease holder).
func workerState(w wire.WorkerInfo) string {
	s := w.State
	if s == "" {
		s = "-"
	}
	if (w.Requested == "quiet" && w.State == "running") || (w.Requested == "stop" && w.State != "stopping") {
		s += "(" + w.Requested + "-asked)"
	}
	return s
}
