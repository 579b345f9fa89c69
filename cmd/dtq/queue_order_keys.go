package main

import (
	"fmt"
	"io"
	"net/url"
	"strconv"

	"github.com/dtq-dev/dtq/api/wire"
	"github.com/spf13/cobra"
)

// queueOrderKeysOptions are the flags of `dtq queue order-keys`.
type queueOrderKeysOptions struct {
	api    *apiOptions
	limit  int
	cursor string
}

// newQueueOrderKeysCmd builds `dtq queue order-keys QUEUE [KEY]`: GET
// /api/v1/queues/{name}/order-keys (the keys in use, a page at a time) or,
// with KEY, …/order-keys/{key} (that key's line).
func newQueueOrderKeysCmd(out io.Writer, api *apiOptions) *cobra.Command {
	o := queueOrderKeysOptions{api: api}
	cmd := &cobra.Command{
		Use:   "order-keys QUEUE [KEY]",
		Short: "List a queue's order keys with a task in flight, or show one key's line",
		Long: "Without KEY: the queue's order keys that have a task in flight, each with that task and how many\n" +
			"of its tasks wait, a page at a time. With KEY: the key's task in flight and the first 100 waiting,\n" +
			"in the order they will start.",
		Example: "  dtq queue order-keys default\n  dtq queue order-keys default account-42",
		Args:    cobra.RangeArgs(1, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			name, err := pathID("queue name", args[0])
			if err != nil {
				return err
			}
			path := "/api/v1/queues/" + name + "/order-keys"
			if len(args) == 2 {
				key, err := pathID("order key", args[1])
				if err != nil {
					return err
				}
				return o.line(cmd, out, path+"/"+key)
			}
			return o.list(cmd, out, path)
		},
	}
	f := cmd.Flags()
	f.IntVar(&o.limit, "limit", 100, "keys per page, 1-1000 (without KEY)")
	f.StringVar(&o.cursor, "cursor", "", "continue after a previous page (its \"next page\" cursor)")
	return cmd
}

// list prints one page of the keys in use.
func (o *queueOrderKeysOptions) list(cmd *cobra.Command, out io.Writer, path string) error {
	q := url.Values{}
	if o.cursor != "" {
		q.Set("cursor", o.cursor)
	}
	if cmd.Flags().Changed("limit") {
		q.Set("limit", strconv.Itoa(o.limit))
	}
	var page wire.OrderKeyList
	return clientRun(cmd, o.api, out, func(c *apiClient) (*answer, error) {
		return c.doJSON(cmd.Context(), call{method: "GET", path: path, query: q}, &page)
	}, func() error {
		if len(page.Keys) == 0 {
			fmt.Fprintln(out, "no order keys with a task in flight")
		} else {
			tb := newTable(out, "KEY", "IN FLIGHT", "WAITING")
			for _, k := range page.Keys {
				tb.row(oneLine(k.Key, 0), oneLine(k.InFlight, 0), num(k.Waiting))
			}
			if err := tb.flush(); err != nil {
				return err
			}
		}
		if page.NextCursor != "" {
			fmt.Fprintf(out, "next page: --cursor %s\n", oneLine(page.NextCursor, 0))
		}
		return nil
	})
}

// line prints one key's line.
func (o *queueOrderKeysOptions) line(cmd *cobra.Command, out io.Writer, path string) error {
	if cmd.Flags().Changed("limit") || o.cursor != "" {
		return fmt.Errorf("--limit and --cursor page through the keys: give no KEY")
	}
	var l wire.OrderKeyLine
	return clientRun(cmd, o.api, out, func(c *apiClient) (*answer, error) {
		return c.doJSON(cmd.Context(), call{method: "GET", path: path}, &l)
	}, func() error {
		if err := fields(out, "queue", l.Queue, "key", l.Key, "in flight", dash(l.InFlight), "waiting", num(l.Waiting)); err != nil {
			return err
		}
		if len(l.Next) > 0 {
			fmt.Fprintln(out, "next:")
		}
		for i, id := range l.Next {
			if _, err := fmt.Fprintf(out, "  %d. %s\n", i+1, oneLine(id, 0)); err != nil {
				return err
			}
		}
		if more := l.Waiting - int64(len(l.Next)); more > 0 {
			_, err := fmt.Fprintf(out, "  … and %d more\n", more)
			return err
		}
		return nil
	})
}
