package main

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/dtq-dev/dtq/api/wire"
	"github.com/spf13/cobra"
)

type getOptions struct {
	api apiOptions
}

// newGetCmd builds `dtq get ID`: GET /api/v1/tasks/{id}.
func newGetCmd(out io.Writer) *cobra.Command {
	var o getOptions
	cmd := &cobra.Command{
		Use:     "get ID",
		Short:   "Show a task",
		Example: "  dtq get default-01JB8X6Q2R3M7ZC9Y5F4K0N1TW\n  dtq get default-01JB8X6Q2R3M7ZC9Y5F4K0N1TW --json | jq .result",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			id, err := pathID("task id", args[0])
			if err != nil {
				return err
			}
			var task wire.Task
			return clientRun(cmd, &o.api, out, func(c *apiClient) (*answer, error) {
				return c.doJSON(cmd.Context(), call{method: "GET", path: "/api/v1/tasks/" + id}, &task)
			}, func() error { return printTask(out, &task) })
		},
	}
	addAPIFlags(cmd, &o.api)
	return cmd
}

// maxValueRunes bounds a payload or result in the human output of a task;
// --json shows them whole.
const maxValueRunes = 200

// groupOf shows a task's group, and whether it waits for its turn.
func groupOf(t *wire.Task) string {
	if t.GroupWaiting {
		return t.Group + " (waiting for its turn)"
	}
	return t.Group
}

func orderKeyOf(t *wire.Task) string {
	if t.OrderWaiting {
		return t.OrderKey + " (waiting for the key's earlier tasks)"
	}
	return t.OrderKey
}

// printTask writes a task's fields, then its durable steps and its
// execution history.
func printTask(out io.Writer, t *wire.Task) error {
	cancel := ""
	if t.CancelRequested && t.Status != "CANCELLED" {
		cancel = "requested"
	}
	err := fields(out,
		"id", t.ID,
		"queue", t.Queue,
		"type", t.TaskType,
		"status", t.Status,
		"suspended", suspensionOf(t),
		"cancel", cancel,
		"priority", strconv.Itoa(t.Priority),
		"group", groupOf(t),
		"limit key", t.LimitKey,
		"order key", orderKeyOf(t),
		"held by", t.HeldBy,
		"attempt", attempts(t),
		"crashes", nonZero(t.Crashes),
		"timeout", fmtSeconds(t.TimeoutSeconds),
		"created", fmtTime(t.CreatedAt),
		"scheduled", fmtTimePtr(t.ScheduledAt),
		"started", fmtTimePtr(t.StartedAt),
		"finished", fmtTimePtr(t.FinishedAt),
		"worker", t.Worker,
		"progress", progressOf(t),
		"workflow", t.Workflow,
		"payload", oneLine(compact(t.Payload), maxValueRunes),
		"result", oneLine(compact(t.Result), maxValueRunes),
		"last error", t.LastError,
	)
	if err != nil {
		return err
	}
	if len(t.Steps) > 0 {
		fmt.Fprintln(out, "\nsteps:")
		tb := newTable(out, "STEP", "RUN", "RECORDED", "RESULT")
		for _, st := range t.Steps {
			tb.row(oneLine(st.Name, 0), recordedBy(st), fmtTime(st.At), oneLine(compact(st.Result), 80))
		}
		if err := tb.flush(); err != nil {
			return err
		}
	}
	if len(t.History) == 0 {
		return nil
	}
	fmt.Fprintln(out, "\nhistory:")
	tb := newTable(out, "RUN", "OUTCOME", "STARTED", "FINISHED", "WORKER", "ERROR")
	for _, h := range t.History {
		tb.row(strconv.Itoa(h.Run), h.Outcome, fmtTime(h.StartedAt), fmtTime(h.FinishedAt), dash(h.Worker), dash(oneLine(h.Error, 80)))
	}
	return tb.flush()
}

// nonZero formats n, or "" for 0 (which fields leaves out).
func nonZero(n int) string {
	if n == 0 {
		return ""
	}
	return strconv.Itoa(n)
}

// suspensionOf shows what a suspended task waits for: "sleep cool-off
// until 2026-12-06T08:00:00Z", "signal approval until …".
func suspensionOf(t *wire.Task) string {
	s := t.Suspended
	if s == nil {
		return ""
	}
	return oneLine(s.For, 0) + " " + oneLine(s.Name, maxValueRunes) + " until " + fmtTime(s.Until)
}

// recordedBy is a step row's RUN cell: the run that recorded it, or for a
// wait's record no run made, what did ("signal", "timeout").
func recordedBy(st wire.TaskStep) string {
	if st.By != "" {
		return st.By
	}
	return strconv.Itoa(st.Run)
}

// progressOf shows a running task's progress report: "25% resized 1 of 4".
func progressOf(t *wire.Task) string {
	if t.Progress == nil {
		return ""
	}
	return oneLine(strings.TrimSpace(fmt.Sprintf("%d%% %s", int(t.Progress.Fraction*100+0.5), t.Progress.Note)), maxValueRunes)
}
