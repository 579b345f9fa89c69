package main

import (
	"encoding/json"
	"fmt"
	"io"

	"github.com/dtq-dev/dtq/api/wire"
	"github.com/spf13/cobra"
)

type signalOptions struct {
	api     apiOptions
	payload string
}

// newSignalCmd builds `dtq signal ID NAME`: POST
// /api/v1/tasks/{id}/signals/{name}.
func newSignalCmd(out io.Writer) *cobra.Command {
	var o signalOptions
	cmd := &cobra.Command{
		Use:   "signal ID NAME",
		Short: "Send a signal to a task, for its durable wait of that name",
		Long: `Send signal NAME to task ID, with --payload (JSON; default null), for the
task's wait of that name (dtq.WaitFor): a task waiting for it runs again at
once; one not waiting yet keeps it for its wait. A signal is recorded once:
a second one of that name, or one after the wait timed out, is refused.`,
		Example: `  dtq signal default-01JB8X6Q2R3M7ZC9Y5F4K0N1TW approved --payload '{"by":"ann"}'`,
		Args:    cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			id, err := pathID("task id", args[0])
			if err != nil {
				return err
			}
			body := map[string]json.RawMessage{}
			if o.payload != "" {
				if !json.Valid([]byte(o.payload)) {
					return fmt.Errorf("--payload is not valid JSON: %.80q", o.payload)
				}
				body["payload"] = json.RawMessage(o.payload)
			}
			name, err := pathID("signal name", args[1])
			if err != nil {
				return err
			}
			var res wire.SignalDelivered
			path := "/api/v1/tasks/" + id + "/signals/" + name
			return clientRun(cmd, &o.api, out, func(c *apiClient) (*answer, error) {
				return c.doJSON(cmd.Context(), call{method: "POST", path: path, body: body}, &res)
			}, func() error {
				_, err := fmt.Fprintf(out, "signal %s delivered to %s\n", oneLine(res.Name, 0), oneLine(res.TaskID, 0))
				return err
			})
		},
	}
	cmd.Flags().StringVar(&o.payload, "payload", "", "the signal's payload, JSON (default null)")
	addAPIFlags(cmd, &o.api)
	return cmd
}
