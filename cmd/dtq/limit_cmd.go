package main

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/dtq-dev/dtq/api/wire"
	"github.com/spf13/cobra"
)

// scopeFlags are --type and --limit-key: which of a queue's limits a
// command is about (neither: the queue's own).
type scopeFlags struct{ taskType, limitKey string }

func (f *scopeFlags) add(cmd *cobra.Command) {
	cmd.Flags().StringVar(&f.taskType, "type", "", "the limits of this task type in the queue, not the queue's own")
	cmd.Flags().StringVar(&f.limitKey, "limit-key", "", "the limits of this limit key in the queue (* for each key), not the queue's own")
	cmd.MarkFlagsMutuallyExclusive("type", "limit-key")
}

// path returns the API path of the limits of queue (escaped name) f names.
func (f *scopeFlags) path(cmd *cobra.Command, name string) (string, error) {
	p := "/api/v1/limits/" + name
	switch {
	case cmd.Flags().Changed("type"):
		t, err := pathID("task type", f.taskType)
		return p + "/types/" + t, err
	case cmd.Flags().Changed("limit-key"):
		k, err := pathID("limit key", f.limitKey)
		return p + "/keys/" + k, err
	}
	return p, nil
}

// newLimitCmd builds `dtq limit` and its subcommands list, set and rm, which
// share the API flags of the group.
func newLimitCmd(out io.Writer) *cobra.Command {
	var api apiOptions
	cmd := &cobra.Command{
		Use:   "limit",
		Short: "List, set and remove queues' limits: concurrency and rate, across every worker, per queue, task type or limit key",
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
		Short:   "List the queues that have limits",
		Example: "  dtq limit list",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var res wire.LimitList
			return clientRun(cmd, api, out, func(c *apiClient) (*answer, error) {
				return c.doJSON(cmd.Context(), call{method: "GET", path: "/api/v1/limits"}, &res)
			}, func() error {
				if len(res.Limits) == 0 {
					_, err := fmt.Fprintln(out, "no limits")
					return err
				}
				tb := newTable(out, "QUEUE", "OF", "MAX RUNNING", "IN USE", "WAITING", "RATE")
				rateOf := func(n int64, per float64, burst int64) string {
					if n == 0 {
						return "-"
					}
					return fmt.Sprintf("%d/%v burst %d", n, time.Duration(per*float64(time.Second)), burst)
				}
				for _, l := range res.Limits {
					if l.MaxRunning > 0 || l.Rate > 0 {
						tb.row(l.Queue, "queue", num(l.MaxRunning), num(l.InUse), "-", rateOf(l.Rate, l.PerSeconds, l.Burst))
					}
					for _, sc := range l.Scopes {
						of := "type " + oneLine(sc.TaskType, 60)
						if sc.TaskType == "" {
							of = "limit key " + sc.LimitKey
						}
						tb.row(l.Queue, of, num(sc.MaxRunning), num(sc.InUse), num(sc.Waiting), rateOf(sc.Rate, sc.PerSeconds, sc.Burst))
					}
				}
				return tb.flush()
			})
		},
	}
}

// newLimitSetCmd builds `dtq limit set QUEUE [--max-running N] [--rate N
// --per D --burst B]`: PUT /api/v1/limits/{queue}, which replaces the
// queue's limits.
func newLimitSetCmd(out io.Writer, api *apiOptions) *cobra.Command {
	var maxRunning, rate, burst int64
	var per time.Duration
	var onFull string
	var sf scopeFlags
	cmd := &cobra.Command{
		Use:   "set QUEUE",
		Short: "Set a queue's limits, or a task type's or limit key's in it, across every worker (replacing those it had)",
		Example: "  dtq limit set reports --max-running 5\n  dtq limit set partner-api --rate 50 --per 1s --burst 5\n" +
			"  dtq limit set partner-api --max-running 10 --rate 50\n" +
			"  dtq limit set default --type report.build --max-running 3\n  dtq limit set default --limit-key '*' --max-running 2",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			name, err := pathID("queue name", args[0])
			if err != nil {
				return err
			}
			var body wire.LimitRequest
			if cmd.Flags().Changed("max-running") {
				body.MaxRunning = &maxRunning
			}
			if cmd.Flags().Changed("rate") {
				body.Rate = &rate
				body.PerSeconds = number(per.Seconds())
				if cmd.Flags().Changed("burst") {
					body.Burst = &burst
				}
			} else if cmd.Flags().Changed("per") || cmd.Flags().Changed("burst") {
				return fmt.Errorf("--per and --burst go with --rate")
			}
			if body.MaxRunning == nil && body.Rate == nil {
				return fmt.Errorf("give --max-running, --rate or both (dtq limit rm removes the limits)")
			}
			if cmd.Flags().Changed("on-full") {
				body.OnFull = &onFull
			}
			path, err := sf.path(cmd, name)
			if err != nil {
				return err
			}
			var l wire.Limit
			return clientRun(cmd, api, out, func(c *apiClient) (*answer, error) {
				return c.doJSON(cmd.Context(), call{method: "PUT", path: path, body: body}, &l)
			}, func() error { return printLimit(out, &l) })
		},
	}
	f := cmd.Flags()
	f.Int64Var(&maxRunning, "max-running", 0, "at most this many of the queue's tasks running at once, across every worker")
	f.Int64Var(&rate, "rate", 0, "at most this many of the queue's tasks starting per --per")
	f.DurationVar(&per, "per", time.Second, "the rate's period")
	f.Int64Var(&burst, "burst", 1, "the most starts at once after an idle spell (1 to --rate)")
	f.StringVar(&onFull, "on-full", "queue", "what a start does when the concurrency limit of a --type or --limit-key is full: "+
		"queue (wait), cancel_running (cancel the oldest running), cancel_newest (cancel this one), replace_waiting (cancel those waiting)")
	sf.add(cmd)
	return cmd
}

// printLimit writes a queue's limits on one line, then one line per task
// type or limit key it limits.
func printLimit(out io.Writer, l *wire.Limit) error {
	own := describeLimit(l.MaxRunning, l.InUse, l.Rate, l.PerSeconds, l.Burst)
	if len(l.Scopes) > 0 && l.MaxRunning == 0 && l.Rate == 0 {
		own = "no limits of its own"
	}
	if _, err := fmt.Fprintf(out, "queue %s: %s\n", oneLine(l.Queue, 0), own); err != nil {
		return err
	}
	for _, sc := range l.Scopes {
		of := "type " + oneLine(sc.TaskType, 0)
		if sc.TaskType == "" {
			of = "limit key " + sc.LimitKey
		}
		lim := describeLimit(sc.MaxRunning, sc.InUse, sc.Rate, sc.PerSeconds, sc.Burst)
		if sc.OnFull != "" && sc.OnFull != "queue" {
			lim += ", when full: " + sc.OnFull
		}
		if _, err := fmt.Fprintf(out, "  %s: %s, %d waiting\n", of, lim, sc.Waiting); err != nil {
			return err
		}
	}
	return nil
}

// describeLimit says what a queue's, task type's or limit key's limits
// limit.
func describeLimit(maxRunning, inUse, rate int64, perSeconds float64, burst int64) string {
	var parts []string
	if maxRunning > 0 {
		parts = append(parts, fmt.Sprintf("at most %d running at once (%d in use)", maxRunning, inUse))
	}
	if rate > 0 {
		parts = append(parts, fmt.Sprintf("at most %d starts per %v, bursts of %d", rate, time.Duration(perSeconds*float64(time.Second)), burst))
	}
	if len(parts) == 0 {
		return "no limits"
	}
	return strings.Join(parts, "; ")
}

// newLimitRmCmd builds `dtq limit rm QUEUE`: DELETE /api/v1/limits/{queue}.
func newLimitRmCmd(out io.Writer, api *apiOptions) *cobra.Command {
	var sf scopeFlags
	cmd := &cobra.Command{
		Use:     "rm QUEUE",
		Short:   "Remove a queue's limits, or a task type's or limit key's in it",
		Example: "  dtq limit rm reports\n  dtq limit rm default --type report.build",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			name, err := pathID("queue name", args[0])
			if err != nil {
				return err
			}
			path, err := sf.path(cmd, name)
			if err != nil {
				return err
			}
			var l wire.Limit
			return clientRun(cmd, api, out, func(c *apiClient) (*answer, error) {
				return c.doJSON(cmd.Context(), call{method: "DELETE", path: path}, &l)
			}, func() error {
				return printLimit(out, &l)
			})
		},
	}
	sf.add(cmd)
	return cmd
}
