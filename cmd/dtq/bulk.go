package main

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"strings"
	"time"

	"github.com/dtq-dev/dtq/api/wire"
	"github.com/spf13/cobra"
)

// bulkOptions are the flags of `dtq bulk ACTION`.
type bulkOptions struct {
	api                               apiOptions
	queue, status, taskType, idPrefix string
	errContains, after, before        string
	dryRun, yes                       bool
	limit                             int
	rate                              float64
}

// bulkVerbs are the past tenses of the actions, for the summary line.
var bulkVerbs = map[string]string{"cancel": "cancelled", "requeue": "requeued", "delete": "deleted"}

// newBulkCmd builds `dtq bulk cancel|requeue|delete`: POST
// /api/v1/tasks/bulk, again while more match (unless --dry-run).
func newBulkCmd(out io.Writer) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "bulk",
		Short: "Cancel, requeue (dead letters) or delete (finished tasks) many tasks: ids, or a queue's tasks that match filters (--dry-run counts first)",
	}
	for _, c := range []struct{ action, short string }{
		{"cancel", "Cancel tasks (RUNNING, QUEUED, SCHEDULED) by id, or those of a queue that match filters"},
		{"requeue", "Requeue dead letters by id, or those of a queue that match filters"},
		{"delete", "Delete the records of finished tasks (SUCCEEDED, CANCELLED) by id, or those of a queue that match filters"},
	} {
		cmd.AddCommand(newBulkActionCmd(out, c.action, c.short))
	}
	return cmd
}

func newBulkActionCmd(out io.Writer, action, short string) *cobra.Command {
	var o bulkOptions
	cmd := &cobra.Command{
		Use:   action + " [ID...]",
		Short: short,
		Example: fmt.Sprintf(`  dtq bulk %[1]s default-01JB8X6Q2R3M7ZC9Y5F4K0N1TW default-01JB8X6Q2R3M7ZC9Y5F4K0N1TX
  dtq bulk %[1]s --queue media --type upload --error timeout --created-after 2026-12-01T09:00:00Z --dry-run
  dtq bulk %[1]s --queue media --type upload --error timeout --created-after 2026-12-01T09:00:00Z --yes`, action),
		RunE: func(cmd *cobra.Command, args []string) error {
			body, err := o.request(cmd, action, args)
			if err != nil {
				return err
			}
			total := wire.BulkResult{Action: action, DryRun: o.dryRun, Skipped: []wire.BulkSkip{}}
			return clientRun(cmd, &o.api, out, func(c *apiClient) (*answer, error) {
				for {
					var res wire.BulkResult
					if _, err := c.doJSON(cmd.Context(), call{method: "POST", path: "/api/v1/tasks/bulk", body: body}, &res); err != nil {
						return nil, err
					}
					total.Matched += res.Matched
					total.Done += res.Done
					total.SkippedCount += res.SkippedCount
					total.Skipped = append(total.Skipped, res.Skipped...)
					total.More = res.More
					if o.dryRun || !res.More || res.Done == 0 {
						break
					}
				}
				raw, err := json.Marshal(total)
				return &answer{status: http.StatusOK, raw: raw}, err
			}, func() error {
				var b strings.Builder
				more := ""
				if total.More {
					more = " (and more beyond the limit)"
				}
				if o.dryRun {
					fmt.Fprintf(&b, "dry run: %d tasks selected%s, %d would be %s, %d skipped; nothing changed\n",
						total.Matched, more, total.Matched-total.SkippedCount, bulkVerbs[action], total.SkippedCount)
				} else {
					fmt.Fprintf(&b, "%s %d of %d tasks selected%s, %d skipped\n", bulkVerbs[action], total.Done, total.Matched, more, total.SkippedCount)
				}
				for _, s := range total.Skipped {
					fmt.Fprintf(&b, "  skipped %s: %s\n", oneLine(s.ID, 0), s.Reason)
				}
				_, err := io.WriteString(out, b.String())
				return err
			})
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.queue, "queue", "", "act on the tasks of this queue that match the filters (instead of ids)")
	f.StringVar(&o.status, "status", "", "only tasks of this status (one the action takes; default: all of them)")
	f.StringVar(&o.taskType, "type", "", "only tasks of this type")
	f.StringVar(&o.idPrefix, "id-prefix", "", "only tasks whose id starts with this")
	f.StringVar(&o.errContains, "error", "", "only tasks whose last error contains this (any letter case)")
	f.StringVar(&o.after, "created-after", "", "only tasks created after this time (RFC 3339)")
	f.StringVar(&o.before, "created-before", "", "only tasks created before this time (RFC 3339)")
	f.BoolVar(&o.dryRun, "dry-run", false, "count what would be done; change nothing")
	f.BoolVar(&o.yes, "yes", false, "confirm an action over a filter (count first with --dry-run)")
	f.IntVar(&o.limit, "limit", 1000, "select at most this many tasks per call, 1-10000")
	f.Float64Var(&o.rate, "rate", 100, "act on at most this many tasks per second")
	addAPIFlags(cmd, &o.api)
	return cmd
}

// request builds the body of the first call from the flags and ids.
func (o *bulkOptions) request(cmd *cobra.Command, action string, ids []string) (*wire.BulkRequest, error) {
	if math.IsInf(o.rate, 0) || math.IsNaN(o.rate) {
		return nil, fmt.Errorf("--rate must be a finite number (got %v)", o.rate)
	}
	body := &wire.BulkRequest{Action: action, DryRun: o.dryRun, RatePerSecond: number(o.rate)}
	filtered := false
	for _, name := range []string{"status", "type", "id-prefix", "error", "created-after", "created-before", "limit"} {
		filtered = filtered || cmd.Flags().Changed(name)
	}
	if len(ids) > 0 {
		if o.queue != "" || filtered {
			return nil, fmt.Errorf("give ids or --queue with filters, not both")
		}
		for _, id := range ids {
			if _, err := pathID("task id", id); err != nil {
				return nil, err
			}
		}
		body.IDs = ids
		return body, nil
	}
	if o.queue == "" {
		return nil, fmt.Errorf("bulk %s needs task ids or --queue NAME (with filters): it has no default queue", action)
	}
	if !o.dryRun && !o.yes {
		return nil, fmt.Errorf("bulk %s acts on every task of %q that matches: count them first with --dry-run, then add --yes to confirm", action, o.queue)
	}
	limit := o.limit
	if !o.dryRun {
		// one call takes limit/rate: at most 15 s of it (the server
		// allows 20), and again while more match
		limit = max(1, min(limit, int(o.rate*15)))
	}
	body.Limit = number(limit)
	flt := &wire.BulkFilter{Queue: &o.queue}
	for _, s := range []struct {
		v  string
		to **string
	}{{strings.ToUpper(o.status), &flt.Status}, {o.taskType, &flt.TaskType}, {o.idPrefix, &flt.IDPrefix}, {o.errContains, &flt.ErrorContains}} {
		if s.v != "" {
			v := s.v
			*s.to = &v
		}
	}
	for _, t := range []struct {
		flag, v string
		to      **time.Time
	}{{"created-after", o.after, &flt.CreatedAfter}, {"created-before", o.before, &flt.CreatedBefore}} {
		if t.v == "" {
			continue
		}
		at, err := time.Parse(time.RFC3339Nano, t.v)
		if err != nil {
			return nil, fmt.Errorf("--%s must be an RFC 3339 time, e.g. 2026-12-01T08:00:00Z (got %q)", t.flag, t.v)
		}
		*t.to = &at
	}
	body.Filter = flt
	return body, nil
}
