package main

import (
	"fmt"
	"io"
	"net/url"

	"github.com/spf13/cobra"
)

type retryDLQOptions struct {
	api   apiOptions
	queue string
}

// newRetryDLQCmd builds `dtq retry-dlq`: POST /api/v1/dlq/requeue.
func newRetryDLQCmd(out io.Writer) *cobra.Command {
	var o retryDLQOptions
	cmd := &cobra.Command{
		Use:     "retry-dlq",
		Short:   "Requeue every dead letter of a queue, or of all queues",
		Example: "  dtq retry-dlq --queue emails\n  dtq retry-dlq   # every queue",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			q := url.Values{}
			scope := "every queue"
			if o.queue != "" {
				q.Set("queue", o.queue)
				scope = "queue " + o.queue
			}
			var res struct {
				Requeued int `json:"requeued"`
			}
			return clientRun(cmd, &o.api, out, func(c *apiClient) (*answer, error) {
				return c.doJSON(cmd.Context(), call{method: "POST", path: "/api/v1/dlq/requeue", query: q}, &res)
			}, func() error {
				_, err := fmt.Fprintf(out, "requeued %d dead letters of %s\n", res.Requeued, oneLine(scope, 0))
				return err
			})
		},
	}
	cmd.Flags().StringVar(&o.queue, "queue", "", "only this queue (default: every queue)")
	addAPIFlags(cmd, &o.api)
	return cmd
}
