package main

import (
	"fmt"
	"io"

	"github.com/dtq-dev/dtq/api/wire"
	"github.com/spf13/cobra"
)

type retryDLQOptions struct {
	api   apiOptions
	scope queueScope
}

// newRetryDLQCmd builds `dtq retry-dlq`: POST /api/v1/dlq/requeue.
func newRetryDLQCmd(out io.Writer) *cobra.Command {
	var o retryDLQOptions
	cmd := &cobra.Command{
		Use:     "retry-dlq",
		Short:   "Requeue every dead letter of a queue (--queue), or of all queues (--all-queues)",
		Example: "  dtq retry-dlq --queue emails\n  dtq retry-dlq --all-queues",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := o.scope.check(cmd); err != nil {
				return err
			}
			q, scope := o.scope.query(), o.scope.String()
			var res wire.RequeuedCount
			return clientRun(cmd, &o.api, out, func(c *apiClient) (*answer, error) {
				return c.doJSON(cmd.Context(), call{method: "POST", path: "/api/v1/dlq/requeue", query: q}, &res)
			}, func() error {
				_, err := fmt.Fprintf(out, "requeued %d dead letters of %s\n", res.Requeued, scope)
				return err
			})
		},
	}
	o.scope.add(cmd, "requeue the dead letters")
	addAPIFlags(cmd, &o.api)
	return cmd
}
