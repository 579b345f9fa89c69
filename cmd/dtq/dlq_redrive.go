package main

import (
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"
)

// dlqRedriveOptions are the flags of `dtq dlq redrive`.
type dlqRedriveOptions struct {
	api                          *apiOptions
	queue, taskType, errContains string
	after, before                string
	since                        time.Duration
	dryRun                       bool
	limit                        int
	rate                         float64
}

// newDLQRedriveCmd builds `dtq dlq redrive`: POST /api/v1/dlq/redrive,
// again while more match (unless --dry-run).
func newDLQRedriveCmd(out io.Writer, api *apiOptions) *cobra.Command {
	o := dlqRedriveOptions{api: api}
	cmd := &cobra.Command{
		Use:   "redrive",
		Short: "Requeue the dead letters that match filters, paced (--dry-run counts them first)",
		Example: `  dtq dlq redrive --queue media --type upload --error timeout --since 2h --dry-run
  dtq dlq redrive --queue media --type upload --error timeout --since 2h --rate 20`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			limit := o.limit
			if !o.dryRun {
				// one call takes limit/rate: at most 15 s of it (the server
				// allows 20), and again while more match
				limit = max(1, min(limit, int(o.rate*15)))
			}
			body := map[string]any{"queue": o.queue, "dry_run": o.dryRun, "limit": limit, "rate_per_second": o.rate}
			if o.taskType != "" {
				body["task_type"] = o.taskType
			}
			if o.errContains != "" {
				body["error_contains"] = o.errContains
			}
			after := o.after
			if o.since > 0 {
				if after != "" {
					return fmt.Errorf("--since and --after are exclusive")
				}
				after = time.Now().Add(-o.since).UTC().Format(time.RFC3339Nano)
			}
			for name, v := range map[string]string{"dead_after": after, "dead_before": o.before} {
				if v == "" {
					continue
				}
				if _, err := time.Parse(time.RFC3339Nano, v); err != nil {
					return fmt.Errorf("--%s must be an RFC 3339 time, e.g. 2026-12-01T08:00:00Z (got %q)", map[string]string{"dead_after": "after", "dead_before": "before"}[name], v)
				}
				body[name] = v
			}
			var res struct {
				Matched  int  `json:"matched"`
				Requeued int  `json:"requeued"`
				More     bool `json:"more"`
			}
			matched, requeued := 0, 0
			return clientRun(cmd, o.api, out, func(c *apiClient) (*answer, error) {
				for {
					ans, err := c.doJSON(cmd.Context(), call{method: "POST", path: "/api/v1/dlq/redrive", body: body}, &res)
					if err != nil {
						return ans, err
					}
					matched, requeued = matched+res.Matched, requeued+res.Requeued
					if o.dryRun || !res.More || res.Requeued == 0 {
						return ans, nil
					}
				}
			}, func() error {
				more := ""
				if res.More {
					more = fmt.Sprintf(" (more than %d: the limit)", limit)
				}
				if o.dryRun {
					_, err := fmt.Fprintf(out, "dry run: %d dead letters of %s match%s; nothing requeued\n", matched, oneLine(o.queue, 0), more)
					return err
				}
				_, err := fmt.Fprintf(out, "requeued %d of %d matching dead letters of %s\n", requeued, matched, oneLine(o.queue, 0))
				return err
			})
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.queue, "queue", "default", "the queue")
	f.StringVar(&o.taskType, "type", "", "only tasks of this type")
	f.StringVar(&o.errContains, "error", "", "only dead letters whose reason contains this (any letter case)")
	f.DurationVar(&o.since, "since", 0, "only those that died within this long")
	f.StringVar(&o.after, "after", "", "only those that died after this time (RFC 3339)")
	f.StringVar(&o.before, "before", "", "only those that died before this time (RFC 3339)")
	f.BoolVar(&o.dryRun, "dry-run", false, "count the matching dead letters; requeue nothing")
	f.IntVar(&o.limit, "limit", 1000, "requeue (or count) at most this many per call, 1-10000")
	f.Float64Var(&o.rate, "rate", 100, "requeue at most this many per second")
	return cmd
}
