package main

import (
	"fmt"
	"io"
	"net/url"

	"github.com/dtq-dev/dtq/api/wire"
	"github.com/spf13/cobra"
)

// workerControlShort are the subcommands' help lines.
var workerControlShort = map[string]string{
	"quiet": "Ask a worker to take no new tasks (its running ones finish; it stays quiet until stopped)",
	"stop":  "Ask a worker to stop as on SIGTERM (running tasks get its --shutdown-timeout; `dtq worker` then exits 0)",
}

// newWorkerControlCmd builds `dtq workers quiet|stop ID`: POST
// /api/v1/workers/{id}/quiet or …/stop.
func newWorkerControlCmd(out io.Writer, ask string) *cobra.Command {
	var o apiOptions
	cmd := &cobra.Command{
		Use:     ask + " ID",
		Short:   workerControlShort[ask],
		Example: "  dtq workers " + ask + " host-1-4242-x7k2",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			var res wire.WorkerControl
			return clientRun(cmd, &o, out, func(c *apiClient) (*answer, error) {
				return c.doJSON(cmd.Context(), call{method: "POST", path: "/api/v1/workers/" + url.PathEscape(args[0]) + "/" + ask}, &res)
			}, func() error {
				_, err := fmt.Fprintf(out, "worker %s asked to %s (it hears it at once, or at its next heartbeat within 5 s)\n", oneLine(res.Worker, 0), res.Requested)
				return err
			})
		},
	}
	addAPIFlags(cmd, &o)
	return cmd
}
