package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"time"

	"github.com/dtq-dev/dtq/api/wire"
	"github.com/spf13/cobra"
)

// dlqRedriveOptions are the flags of `dtq dlq redrive`.
type dlqRedriveOptions struct {
	api                   *apiOptions
	scope                 queueScope
	taskType, errContains string
	after, before         string
	since                 time.Duration
	dryRun                bool
	limit                 int
	rate                  float64
}

// newDLQRedriveCmd builds `dtq dlq redrive`: POST /api/v1/dlq/redrive,
// again while more match (unless --dry-run).
func newDLQRedriveCmd(out io.Writer, api *apiOptions) *cobra.Command {
	o := dlqRedriveOptions{api: api}
	cmd := &cobra.Command{
		Use:   "redrive",
		Short: "Requeue the dead letters of a queue (--queue) or of all (--all-queues) that match filters, paced (--dry-run counts them first)",
		Example: `  dtq dlq redrive --queue media --type upload --error timeout --since 2h --dry-run
  dtq dlq redrive --queue media --type upload --error timeout --since 2h --rate 20
  dtq dlq redrive --all-queues --error "connection refused" --since 1h`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := o.scope.check(cmd); err != nil {
				return err
			}
			if math.IsInf(o.rate, 0) || math.IsNaN(o.rate) {
				return fmt.Errorf("--rate must be a finite number (got %v)", o.rate)
			}
			limit := o.limit
			if !o.dryRun {
				// one call takes limit/rate: at most 15 s of it (the server
				// allows 20), and again while more match
				limit = max(1, min(limit, int(o.rate*15)))
			}
			body := &wire.RedriveRequest{DryRun: o.dryRun, Limit: number(limit), RatePerSecond: number(o.rate)}
			if o.taskType != "" {
				body.TaskType = &o.taskType
			}
			if o.errContains != "" {
				body.ErrorContains = &o.errContains
			}
			after := o.after
			if o.since > 0 {
				if after != "" {
					return fmt.Errorf("--since and --after are exclusive")
				}
				after = time.Now().Add(-o.since).UTC().Format(time.RFC3339Nano)
			}
			for _, t := range []struct {
				flag, v string
				to      **time.Time
			}{{"after", after, &body.DeadAfter}, {"before", o.before, &body.DeadBefore}} {
				if t.v == "" {
					continue
				}
				at, err := time.Parse(time.RFC3339Nano, t.v)
				if err != nil {
					return fmt.Errorf("--%s must be an RFC 3339 time, e.g. 2026-12-01T08:00:00Z (got %q)", t.flag, t.v)
				}
				*t.to = &at
			}
			// the totals of every call, in the shape of one answer (--json)
			total := wire.RedriveResult{DryRun: o.dryRun}
			return clientRun(cmd, o.api, out, func(c *apiClient) (*answer, error) {
				queues, err := o.queues(cmd, c)
				if err != nil {
					return nil, err
				}
				for _, q := range queues {
					body.Queue = &q
					more, err := redriveQueue(cmd, c, body, o.dryRun, &total.Matched, &total.Requeued)
					var ae *apiError
					if o.scope.all && errors.As(err, &ae) && ae.Status == http.StatusNotFound {
						continue // deleted since it was listed
					}
					if err != nil {
						return nil, err
					}
					total.More = total.More || more
				}
				raw, err := json.Marshal(total)
				return &answer{status: http.StatusOK, raw: raw}, err
			}, func() error {
				more := ""
				if total.More {
					more = fmt.Sprintf(" (more than %d: the limit)", limit)
				}
				if o.dryRun {
					_, err := fmt.Fprintf(out, "dry run: %d dead letters of %s match%s; nothing requeued\n", total.Matched, o.scope.String(), more)
					return err
				}
				_, err := fmt.Fprintf(out, "requeued %d of %d matching dead letters of %s\n", total.Requeued, total.Matched, o.scope.String())
				return err
			})
		},
	}
	f := cmd.Flags()
	o.scope.add(cmd, "requeue the matching dead letters")
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

// queues are the queues to redrive: --queue's, or with --all-queues every
// queue the server lists.
func (o *dlqRedriveOptions) queues(cmd *cobra.Command, c *apiClient) ([]string, error) {
	if !o.scope.all {
		return []string{o.scope.queue}, nil
	}
	var list wire.QueueList
	if _, err := c.doJSON(cmd.Context(), call{method: "GET", path: "/api/v1/queues"}, &list); err != nil {
		return nil, err
	}
	names := make([]string, len(list.Queues))
	for i, q := range list.Queues {
		names[i] = q.Name
	}
	return names, nil
}

// redriveQueue redrives the queue of body, calling again while more match
// (unless a dry run), adding to matched and requeued; it reports whether
// more matched than the last call took.
func redriveQueue(cmd *cobra.Command, c *apiClient, body *wire.RedriveRequest, dryRun bool, matched, requeued *int) (bool, error) {
	for {
		var res wire.RedriveResult
		if _, err := c.doJSON(cmd.Context(), call{method: "POST", path: "/api/v1/dlq/redrive", body: body}, &res); err != nil {
			return false, err
		}
		*matched, *requeued = *matched+res.Matched, *requeued+res.Requeued
		if dryRun || !res.More || res.Requeued == 0 {
			return res.More, nil
		}
	}
}
