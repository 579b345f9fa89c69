package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"time"

	"github.com/dtq-dev/dtq/api/wire"
	"github.com/spf13/cobra"
)

// newScheduleCmd builds `dtq schedule` and its subcommands list, add, rm,
// pause and resume, which share the API flags and --queue of the group.
func newScheduleCmd(out io.Writer) *cobra.Command {
	var api apiOptions
	var queue string
	cmd := &cobra.Command{
		Use:   "schedule",
		Short: "List, add, remove, pause and resume schedules (periodic tasks)",
		Args:  cobra.NoArgs,
		RunE:  func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	addAPIFlags(cmd, &api)
	cmd.PersistentFlags().StringVar(&queue, "queue", "", `the schedules' queue (list: every queue's; others: "default")`)
	cmd.AddCommand(newScheduleListCmd(out, &api, &queue), newScheduleAddCmd(out, &api, &queue), newScheduleRmCmd(out, &api, &queue),
		newScheduleActionCmd(out, &api, &queue, "pause", "Stop a schedule from firing"),
		newScheduleActionCmd(out, &api, &queue, "resume", "Let a paused schedule fire again (ticks missed meanwhile do not fire)"))
	return cmd
}

// schedulePath is /api/v1/schedules/{queue}/{name}.
func schedulePath(queue, name string) (string, error) {
	if queue == "" {
		queue = "default"
	}
	q, err := pathID("queue name", queue)
	if err != nil {
		return "", err
	}
	n, err := pathID("schedule name", name)
	if err != nil {
		return "", err
	}
	return "/api/v1/schedules/" + q + "/" + n, nil
}

func newScheduleListCmd(out io.Writer, api *apiOptions, queue *string) *cobra.Command {
	return &cobra.Command{
		Use:     "list",
		Short:   "List schedules with their next run and last task",
		Example: "  dtq schedule list\n  dtq schedule list --queue reports",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var res wire.ScheduleList
			q := url.Values{}
			if *queue != "" {
				q.Set("queue", *queue)
			}
			return clientRun(cmd, api, out, func(c *apiClient) (*answer, error) {
				return c.doJSON(cmd.Context(), call{method: "GET", path: "/api/v1/schedules", query: q}, &res)
			}, func() error {
				if len(res.Schedules) == 0 {
					_, err := fmt.Fprintln(out, "no schedules")
					return err
				}
				tb := newTable(out, "QUEUE", "NAME", "CRON", "TIME ZONE", "TASK TYPE", "STATE", "NEXT RUN", "LAST TASK")
				for _, s := range res.Schedules {
					tb.row(s.Queue, s.Name, s.Cron, s.TimeZone, s.TaskType, state(s.Paused), dash(fmtTimePtr(s.NextRun)), dash(s.LastTaskID))
				}
				return tb.flush()
			})
		},
	}
}

// scheduleAddOptions are the flags of `dtq schedule add`.
type scheduleAddOptions struct {
	cron, tz, taskType, payload, missed string
	priority, maxAttempts, catchUpMax   int
	taskTimeout                         time.Duration
	paused                              bool
}

func newScheduleAddCmd(out io.Writer, api *apiOptions, queue *string) *cobra.Command {
	var o scheduleAddOptions
	cmd := &cobra.Command{
		Use:   "add NAME",
		Short: "Create a schedule, or replace the one of that name",
		Long: `Create the schedule NAME of --queue, or replace its definition (it keeps its
last fired tick: a tick fires once, whatever the changes). Each tick of --cron,
read in --tz on the Redis clock, creates one task of --type.

--cron takes 5 fields (minute hour day-of-month month day-of-week), 6 with a
leading seconds field, or @yearly, @monthly, @weekly, @daily, @hourly,
@every <duration>.`,
		Example: `  dtq schedule add nightly-report --cron "30 2 * * *" --tz Europe/Berlin --type report --payload '{"kind":"daily"}'
  dtq schedule add heartbeat --cron "@every 30s" --type ping --missed catch_up --catch-up-max 10`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			path, err := schedulePath(*queue, args[0])
			if err != nil {
				return err
			}
			body := wire.ScheduleBody{Cron: &o.cron, TaskType: &o.taskType, TimeZone: o.tz, Missed: o.missed, Paused: o.paused}
			changed := cmd.Flags().Changed
			if changed("payload") {
				if !json.Valid([]byte(o.payload)) {
					return fmt.Errorf("--payload is not valid JSON: %.80q", o.payload)
				}
				body.Payload = json.RawMessage(o.payload)
			}
			if changed("priority") {
				body.Priority = number(o.priority)
			}
			if changed("max-attempts") {
				body.MaxAttempts = number(o.maxAttempts)
			}
			if changed("task-timeout") {
				if o.taskTimeout <= 0 {
					return fmt.Errorf("--task-timeout must be positive (got %v)", o.taskTimeout)
				}
				body.TimeoutSeconds = number(o.taskTimeout.Seconds())
			}
			if changed("catch-up-max") {
				body.CatchUpMax = number(o.catchUpMax)
			}
			var s wire.Schedule
			return clientRun(cmd, api, out, func(c *apiClient) (*answer, error) {
				return c.doJSON(cmd.Context(), call{method: "PUT", path: path, body: body}, &s)
			}, func() error {
				return printScheduleLine(out, &s)
			})
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.cron, "cron", "", "cron expression (required)")
	f.StringVar(&o.tz, "tz", "", "IANA time zone of the expression (default UTC)")
	f.StringVar(&o.taskType, "type", "", "task type of each tick's task (required)")
	f.StringVar(&o.payload, "payload", "", "payload of each tick's task, as JSON (default null)")
	f.IntVar(&o.priority, "priority", 5, "priority 0-9")
	f.IntVar(&o.maxAttempts, "max-attempts", 0, "executions before the task goes DEAD (default: the server's)")
	f.DurationVar(&o.taskTimeout, "task-timeout", 0, "limit on one execution of each tick's task (default: the server's)")
	f.StringVar(&o.missed, "missed", "", "after an outage: skip (fire the latest missed tick; default) or catch_up")
	f.IntVar(&o.catchUpMax, "catch-up-max", 0, "catch_up fires at most this many missed ticks (0: 1000)")
	f.BoolVar(&o.paused, "paused", false, "create it paused")
	for _, f := range []string{"cron", "type"} {
		if err := cmd.MarkFlagRequired(f); err != nil {
			panic(err) // a flag defined above
		}
	}
	return cmd
}

// printScheduleLine writes one line about a schedule just written.
func printScheduleLine(out io.Writer, s *wire.Schedule) error {
	next := "paused"
	if s.NextRun != nil {
		next = "next run " + fmtTime(*s.NextRun)
	}
	_, err := fmt.Fprintf(out, "schedule %s/%s (%s, %s): %s\n", oneLine(s.Queue, 0), oneLine(s.Name, 0),
		oneLine(s.Cron, 0), s.TimeZone, next)
	return err
}

func newScheduleRmCmd(out io.Writer, api *apiOptions, queue *string) *cobra.Command {
	return &cobra.Command{
		Use:     "rm NAME",
		Short:   "Delete a schedule (the tasks it created stay)",
		Example: "  dtq schedule rm nightly-report --queue reports",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			path, err := schedulePath(*queue, args[0])
			if err != nil {
				return err
			}
			var res wire.ScheduleDeleted
			return clientRun(cmd, api, out, func(c *apiClient) (*answer, error) {
				return c.doJSON(cmd.Context(), call{method: "DELETE", path: path}, &res)
			}, func() error {
				_, err := fmt.Fprintf(out, "schedule %s deleted\n", oneLine(res.Deleted, 0))
				return err
			})
		},
	}
}

func newScheduleActionCmd(out io.Writer, api *apiOptions, queue *string, action, short string) *cobra.Command {
	return &cobra.Command{
		Use:     action + " NAME",
		Short:   short,
		Example: "  dtq schedule " + action + " nightly-report",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			path, err := schedulePath(*queue, args[0])
			if err != nil {
				return err
			}
			var s wire.Schedule
			return clientRun(cmd, api, out, func(c *apiClient) (*answer, error) {
				return c.doJSON(cmd.Context(), call{method: "POST", path: path + "/" + action}, &s)
			}, func() error {
				return printScheduleLine(out, &s)
			})
		},
	}
}
