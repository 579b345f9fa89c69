package main

import (
	"fmt"
	"io"
	"net/url"
	"strconv"

	"github.com/dtq-dev/dtq/api/wire"
	"github.com/spf13/cobra"
)

// historyOptions are the flags of `dtq history`.
type historyOptions struct {
	api                   apiOptions
	queue, taskType, step string
	since, until, last    string
	all                   bool
}

// newHistoryCmd builds `dtq history`: GET /api/v1/history.
func newHistoryCmd(out io.Writer) *cobra.Command {
	var o historyOptions
	cmd := &cobra.Command{
		Use:   "history",
		Short: "Show the stored history: counts and latencies per minute or hour",
		Long: "Show what the workers and clients of the namespace counted, per minute (kept a day) or hour\n" +
			"(kept 30 days): submissions, outcomes, and the p50/p95/p99 of run time and pickup, of one queue\n" +
			"or all, one task type or all. Buckets where nothing was counted are left out unless --all.",
		Example: "  dtq history --queue emails --last 30m\n  dtq history --queue emails --type send --last 24h --step hour",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			q := url.Values{}
			for name, v := range map[string]string{"queue": o.queue, "type": o.taskType, "step": o.step, "since": o.since, "until": o.until, "last": o.last} {
				if v != "" {
					q.Set(name, v)
				}
			}
			var h wire.History
			return clientRun(cmd, &o.api, out, func(c *apiClient) (*answer, error) {
				return c.doJSON(cmd.Context(), call{method: "GET", path: "/api/v1/history", query: q}, &h)
			}, func() error { return printHistory(out, &h, o.all) })
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.queue, "queue", "", "the queue (default: every queue, added up)")
	f.StringVar(&o.taskType, "type", "", "the task type (default: every type, added up)")
	f.StringVar(&o.step, "step", "", "minute or hour (default: minute for up to 6 hours, else hour)")
	f.StringVar(&o.since, "since", "", "the start, RFC 3339 (default: an hour before --until)")
	f.StringVar(&o.until, "until", "", "the end, RFC 3339 (default: now)")
	f.StringVar(&o.last, "last", "", "the stretch back from --until, e.g. 30m or 24h (not with --since)")
	f.BoolVar(&o.all, "all", false, "list the buckets where nothing was counted too")
	addAPIFlags(cmd, &o.api)
	return cmd
}

// printHistory prints h's buckets as a table.
func printHistory(out io.Writer, h *wire.History, all bool) error {
	tb := newTable(out, "AT", "SUBMITTED", "SUCCEEDED", "RETRIED", "DEAD", "CANCELLED", "LOST", "RUN P50/P95/P99 MS", "PICKUP P50/P95/P99 MS")
	rows := 0
	for _, b := range h.Buckets {
		if !all && b.Submitted+b.Succeeded+b.Retried+b.Dead+b.Cancelled+b.Lost+b.Suspended+b.Run.Count+b.Pickup.Count == 0 {
			continue
		}
		rows++
		tb.row(fmtTime(b.At), num(b.Submitted), num(b.Succeeded), num(b.Retried), num(b.Dead), num(b.Cancelled), num(b.Lost),
			percentiles(b.Run), percentiles(b.Pickup))
	}
	if rows == 0 {
		_, err := fmt.Fprintf(out, "nothing counted in these %d %s buckets\n", len(h.Buckets), h.Step)
		return err
	}
	return tb.flush()
}

// percentiles formats p as "p50/p95/p99" in ms, or "-" with none counted.
func percentiles(p wire.Percentiles) string {
	if p.Count == 0 {
		return "-"
	}
	f := func(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
	return f(p.P50Ms) + "/" + f(p.P95Ms) + "/" + f(p.P99Ms)
}
