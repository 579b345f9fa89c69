package main

import (
	"fmt"
	"io"

	"github.com/dtq-dev/dtq/api/wire"
	"github.com/spf13/cobra"
)

// newGroupCmd builds `dtq group` and its subcommands list, set and rm:
// the weights of a queue's groups in its fair scheduling.
func newGroupCmd(out io.Writer) *cobra.Command {
	var api apiOptions
	cmd := &cobra.Command{
		Use:   "group",
		Short: "List and set the weights of a queue's groups (fair scheduling across tenants)",
		Args:  cobra.NoArgs,
		RunE:  func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	addAPIFlags(cmd, &api)
	cmd.AddCommand(newGroupListCmd(out, &api), newGroupSetCmd(out, &api), newGroupRmCmd(out, &api))
	return cmd
}

// groupPath returns the API path of a queue's groups, or of one of them.
func groupPath(queue string, group ...string) (string, error) {
	q, err := pathID("queue name", queue)
	if err != nil {
		return "", err
	}
	p := "/api/v1/queues/" + q + "/groups"
	if len(group) > 0 {
		g, err := pathID("group name", group[0])
		if err != nil {
			return "", err
		}
		p += "/" + g
	}
	return p, nil
}

// newGroupListCmd builds `dtq group list QUEUE`.
func newGroupListCmd(out io.Writer, api *apiOptions) *cobra.Command {
	return &cobra.Command{
		Use:     "list QUEUE",
		Short:   "List the queue's groups that have a weight",
		Example: "  dtq group list default",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			path, err := groupPath(args[0])
			if err != nil {
				return err
			}
			var res wire.GroupList
			return clientRun(cmd, api, out, func(c *apiClient) (*answer, error) {
				return c.doJSON(cmd.Context(), call{method: "GET", path: path}, &res)
			}, func() error {
				if len(res.Groups) == 0 {
					_, err := fmt.Fprintln(out, "no weighted groups (every group weighs 1)")
					return err
				}
				tb := newTable(out, "GROUP", "WEIGHT", "WAITING")
				for _, g := range res.Groups {
					waiting := "-"
					if g.Waiting != nil {
						waiting = num(*g.Waiting)
					}
					tb.row(g.Group, fmt.Sprint(g.Weight), waiting)
				}
				return tb.flush()
			})
		},
	}
}

// newGroupSetCmd builds `dtq group set QUEUE GROUP --weight N`.
func newGroupSetCmd(out io.Writer, api *apiOptions) *cobra.Command {
	var weight int
	cmd := &cobra.Command{
		Use:     "set QUEUE GROUP",
		Short:   "Weight a group: while several have work, each is served in proportion to its weight",
		Example: "  dtq group set default customer-42 --weight 3",
		Args:    cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			if !cmd.Flags().Changed("weight") {
				return fmt.Errorf("give --weight (dtq group rm sets the default, 1)")
			}
			path, err := groupPath(args[0], args[1])
			if err != nil {
				return err
			}
			var g wire.GroupWeight
			return clientRun(cmd, api, out, func(c *apiClient) (*answer, error) {
				return c.doJSON(cmd.Context(), call{method: "PUT", path: path, body: wire.GroupRequest{Weight: &weight}}, &g)
			}, func() error {
				_, err := fmt.Fprintf(out, "group %s of queue %s: weight %d\n", oneLine(g.Group, 0), oneLine(args[0], 0), g.Weight)
				return err
			})
		},
	}
	cmd.Flags().IntVar(&weight, "weight", 1, "1 (the default) to 100")
	return cmd
}

// newGroupRmCmd builds `dtq group rm QUEUE GROUP`: weight 1.
func newGroupRmCmd(out io.Writer, api *apiOptions) *cobra.Command {
	return &cobra.Command{
		Use:     "rm QUEUE GROUP",
		Short:   "Give a group the default weight, 1",
		Example: "  dtq group rm default customer-42",
		Args:    cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			path, err := groupPath(args[0], args[1])
			if err != nil {
				return err
			}
			var g wire.GroupWeight
			return clientRun(cmd, api, out, func(c *apiClient) (*answer, error) {
				return c.doJSON(cmd.Context(), call{method: "DELETE", path: path}, &g)
			}, func() error {
				_, err := fmt.Fprintf(out, "group %s of queue %s: weight %d\n", oneLine(g.Group, 0), oneLine(args[0], 0), g.Weight)
				return err
			})
		},
	}
}
