package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/dtq-dev/dtq/api/wire"
	"github.com/spf13/cobra"
)

type submitOptions struct {
	api            apiOptions
	payload        string
	payloadFile    string
	queue          string
	priority       int
	delay          time.Duration
	maxAttempts    int
	taskTimeout    time.Duration
	idempotencyKey string
	unique         bool
	uniqueKey      string
	uniquePeriod   time.Duration
	uniqueStates   []string
	group          string
	limitKey       string
	orderKey       string
	// debounce: --debounce-key, --debounce-period, --debounce-max-wait,
	// --debounce-keep-first
	debounceKey       string
	debouncePeriod    time.Duration
	debounceMaxWait   time.Duration
	debounceKeepFirst bool
}

// newSubmitCmd builds `dtq submit TYPE`: POST /api/v1/tasks.
func newSubmitCmd(out io.Writer) *cobra.Command {
	var o submitOptions
	cmd := &cobra.Command{
		Use:   "submit TYPE [-]",
		Short: "Submit a task",
		Long: `Submit a task of type TYPE. The payload is JSON from --payload, from
--payload-file (a path, or - for standard input), or from standard input
when the only other argument is -. Durations are Go durations (1m30s, 250ms).

A unique task (--unique, --unique-key, --unique-period or --unique-states)
is not created while another task of its queue and type with the same key
(or, without --unique-key, the same payload) holds the lock: the answer is
that task. A task holds the lock while its status is one of --unique-states,
by default QUEUED, SCHEDULED and RUNNING: the lock ends as the task
succeeds, goes dead or is cancelled, with or without --unique-period.
--unique-period makes one lock per period (the submission time floored to a
multiple of the period): a task submitted in the next period is never a
duplicate of one in this period. For at most one task per period whatever
became of the first, add the end states, as in the last example. A finished
task holds its lock only while it is kept (the server's --retention,
24h by default; 0 deletes a succeeded task, and its lock, at once).

A debounced submission (--debounce-key and --debounce-period) joins the
pending task of its queue, type and key, if there is one: the submissions
that come while it is pending become that one task, which runs once the key
has been quiet for --debounce-period, or --debounce-max-wait after the first
submission, whichever is earlier, with the last payload (the first with
--debounce-keep-first). The answer is that task: "joined" when it existed.`,
		Example: `  dtq submit email.send --payload '{"to":"a@example.com"}' --priority 7
  dtq submit report.build --payload-file job.json --delay 10m --max-attempts 5
  dtq submit report.build --payload '{"id":7}' --group customer-42
  echo '{"n":1}' | dtq submit echo -
  dtq submit reindex --payload '{"doc":7}' --unique
  dtq submit reindex --payload '{"doc":7,"rev":12}' --debounce-key doc-7 --debounce-period 2s --debounce-max-wait 10s
  dtq submit digest.send --unique-key user-7 --unique-period 24h \
    --unique-states QUEUED,SCHEDULED,RUNNING,SUCCEEDED,DEAD,CANCELLED`,
		Args: cobra.RangeArgs(1, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 2 {
				if args[1] != "-" {
					return fmt.Errorf("unexpected argument %q: the payload goes in --payload, --payload-file, or - for standard input", args[1])
				}
				if cmd.Flags().Changed("payload") || cmd.Flags().Changed("payload-file") {
					return fmt.Errorf("give the payload once: - reads it from standard input, so leave out --payload and --payload-file")
				}
				o.payloadFile = "-"
			}
			body, err := o.body(cmd, args[0])
			if err != nil {
				return err
			}
			var task wire.Task
			var ans *answer
			return clientRun(cmd, &o.api, out, func(c *apiClient) (*answer, error) {
				h := http.Header{}
				if o.idempotencyKey != "" {
					h.Set("Idempotency-Key", o.idempotencyKey)
				}
				var err error
				ans, err = c.doJSON(cmd.Context(), call{method: "POST", path: "/api/v1/tasks", body: body, header: h}, &task)
				return ans, err
			}, func() error {
				verb := "submitted"
				switch {
				case ans.status == http.StatusOK && task.Debounced:
					verb = "joined the pending debounced task"
				case ans.status == http.StatusOK && body.Unique != nil:
					verb = "not submitted: a unique task holds the lock:"
				case ans.status == http.StatusOK:
					verb = "already submitted (same Idempotency-Key)"
				}
				fmt.Fprintf(out, "%s %s\n", verb, oneLine(task.ID, 0))
				return fields(out, "queue", task.Queue, "type", task.TaskType, "status", task.Status,
					"priority", fmt.Sprint(task.Priority), "group", task.Group, "scheduled at", fmtTimePtr(task.ScheduledAt))
			})
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.payload, "payload", "", "payload as JSON (default null)")
	f.StringVar(&o.payloadFile, "payload-file", "", "read the payload JSON from this file (- for standard input)")
	f.StringVar(&o.queue, "queue", "", "queue (default: the server's, \"default\")")
	f.IntVar(&o.priority, "priority", 0, "priority 0-9, 9 runs first (default: the server's, 5)")
	f.DurationVar(&o.delay, "delay", 0, "run no earlier than this long from now")
	f.IntVar(&o.maxAttempts, "max-attempts", 0, "attempts before the task is dead (default: the server's)")
	f.DurationVar(&o.taskTimeout, "task-timeout", 0, "limit on one execution of the task (default: the server's)")
	f.StringVar(&o.idempotencyKey, "idempotency-key", "", "submit at most once per key (Idempotency-Key header)")
	f.BoolVar(&o.unique, "unique", false, "unique by type and payload: nothing is created while such a task is in --unique-states")
	f.StringVar(&o.uniqueKey, "unique-key", "", "unique by type and this key instead of the payload (implies --unique)")
	f.DurationVar(&o.uniquePeriod, "unique-period", 0,
		"one lock per period of this length, from the submission time; the lock still ends when its task leaves --unique-states (implies --unique)")
	f.StringSliceVar(&o.uniqueStates, "unique-states", nil,
		"statuses, comma-separated, in which a unique task holds its lock (default QUEUED,SCHEDULED,RUNNING; add SUCCEEDED,DEAD,CANCELLED to keep it after the task ends) (implies --unique)")
	f.StringVar(&o.group, "group", "", "serve the task fairly among the groups (tenants) with work: its group's name")
	f.StringVar(&o.limitKey, "limit-key", "", "put the task under the limits of this key (dtq limit set QUEUE --limit-key)")
	f.StringVar(&o.orderKey, "order-key", "", "run the task after every earlier task of this key has ended, one at a time")
	f.StringVar(&o.debounceKey, "debounce-key", "", "debounce: join the pending task of this key (and type and queue) instead of creating one (needs --debounce-period)")
	f.DurationVar(&o.debouncePeriod, "debounce-period", 0, "debounce: run the task once its key has been quiet this long")
	f.DurationVar(&o.debounceMaxWait, "debounce-max-wait", 0, "debounce: run the task at most this long after its first submission (default no bound)")
	f.BoolVar(&o.debounceKeepFirst, "debounce-keep-first", false, "debounce: keep the pending task's payload instead of this one (default: the last payload wins)")
	cmd.MarkFlagsMutuallyExclusive("payload", "payload-file")
	addAPIFlags(cmd, &o.api)
	return cmd
}

// body builds the request body from the flags, checking what is cheap to
// check here: the payload is JSON, durations are not negative. Unset
// options are left out, so the server applies its defaults.
func (o *submitOptions) body(cmd *cobra.Command, taskType string) (*wire.Submission, error) {
	if taskType == "" {
		return nil, fmt.Errorf("the task type must not be empty")
	}
	b := &wire.Submission{TaskType: &taskType}
	if o.queue != "" {
		b.Queue = &o.queue
	}
	changed := cmd.Flags().Changed
	var payload []byte
	switch {
	case changed("payload"):
		payload = []byte(o.payload)
	case o.payloadFile == "-":
		p, err := io.ReadAll(cmd.InOrStdin())
		if err != nil {
			return nil, fmt.Errorf("reading the payload from standard input: %w", err)
		}
		payload = p
	case o.payloadFile != "":
		p, err := os.ReadFile(o.payloadFile)
		if err != nil {
			return nil, fmt.Errorf("--payload-file: %w", err)
		}
		payload = p
	}
	if payload != nil {
		if err := checkJSON(payload); err != nil {
			return nil, err
		}
		b.Payload = bytes.TrimSpace(payload)
	}
	if changed("priority") {
		b.Priority = number(o.priority)
	}
	if changed("max-attempts") {
		b.MaxAttempts = number(o.maxAttempts)
	}
	if changed("delay") {
		if o.delay < 0 {
			return nil, fmt.Errorf("--delay must not be negative (got %v)", o.delay)
		}
		b.DelaySeconds = number(o.delay.Seconds())
	}
	if changed("task-timeout") {
		if o.taskTimeout <= 0 {
			return nil, fmt.Errorf("--task-timeout must be positive (got %v)", o.taskTimeout)
		}
		b.TimeoutSeconds = number(o.taskTimeout.Seconds())
	}
	if changed("group") {
		b.Group = &o.group
	}
	if changed("limit-key") {
		b.LimitKey = &o.limitKey
	}
	if changed("order-key") {
		b.OrderKey = &o.orderKey
	}
	if o.unique || o.uniqueKey != "" || changed("unique-period") || changed("unique-states") {
		b.Unique = &wire.Unique{Key: o.uniqueKey}
		for _, st := range o.uniqueStates {
			if st = strings.ToUpper(strings.TrimSpace(st)); st != "" {
				b.Unique.States = append(b.Unique.States, st)
			}
		}
		if changed("unique-period") {
			b.Unique.PeriodSeconds = number(o.uniquePeriod.Seconds())
		}
	}
	if changed("debounce-key") || changed("debounce-period") || changed("debounce-max-wait") || changed("debounce-keep-first") {
		if !changed("debounce-key") || !changed("debounce-period") {
			return nil, fmt.Errorf("a debounced submission needs --debounce-key and --debounce-period")
		}
		b.Debounce = &wire.Debounce{Key: o.debounceKey, PeriodSeconds: number(o.debouncePeriod.Seconds()), KeepFirst: o.debounceKeepFirst}
		if changed("debounce-max-wait") {
			b.Debounce.MaxWaitSeconds = number(o.debounceMaxWait.Seconds())
		}
	}
	return b, nil
}

// checkJSON reports, in one line, why payload is not one JSON value.
func checkJSON(payload []byte) error {
	if len(bytes.TrimSpace(payload)) == 0 {
		return fmt.Errorf("the payload is empty: give a JSON value (null, {}, \"text\" …)")
	}
	if !utf8.Valid(payload) {
		return fmt.Errorf("the payload is not valid UTF-8")
	}
	dec := json.NewDecoder(bytes.NewReader(payload))
	var v json.RawMessage
	if err := dec.Decode(&v); err != nil {
		return fmt.Errorf("the payload is not valid JSON: %v", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return fmt.Errorf("the payload is not valid JSON: unexpected data after the first value")
	}
	return nil
}
