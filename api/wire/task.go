package wire

import "encoding/json"

// Submission is the body of POST /api/v1/tasks, one task of a
// BatchRequest, and the task of a workflow's Node (without a queue of its
// own there). Only TaskType is required; a field left out (or null) takes
// the server's default.
type Submission struct {
	TaskType *string `json:"task_type"`
	// Payload is any JSON value, handed to the handler as is (null when
	// left out).
	Payload json.RawMessage `json:"payload,omitempty"`
	Queue   *string         `json:"queue,omitempty"`
	// Priority is an integer, 0 to 9 (9 runs first).
	Priority json.RawMessage `json:"priority,omitempty"`
	// DelaySeconds, MaxAttempts and TimeoutSeconds are numbers (MaxAttempts
	// an integer).
	DelaySeconds   json.RawMessage `json:"delay_seconds,omitempty"`
	MaxAttempts    json.RawMessage `json:"max_attempts,omitempty"`
	TimeoutSeconds json.RawMessage `json:"timeout_seconds,omitempty"`
	Unique         *Unique         `json:"unique,omitempty"`
	Debounce       *Debounce       `json:"debounce,omitempty"`
	Group          *string         `json:"group,omitempty"`
	LimitKey       *string         `json:"limit_key,omitempty"`
	OrderKey       *string         `json:"order_key,omitempty"`
}

// Unique is a Submission's "unique" object: the task is not created while
// another of its queue and type with the same key (or payload) holds the
// lock.
type Unique struct {
	Key    string   `json:"key,omitempty"`
	States []string `json:"states,omitempty"`
	// PeriodSeconds is a number of seconds.
	PeriodSeconds json.RawMessage `json:"period_seconds,omitempty"`
}

// Debounce is a Submission's "debounce" object: the submissions of one
// queue, type and key within the period become one task.
type Debounce struct {
	Key string `json:"key"`
	// PeriodSeconds and MaxWaitSeconds are numbers of seconds.
	PeriodSeconds  json.RawMessage `json:"period_seconds,omitempty"`
	MaxWaitSeconds json.RawMessage `json:"max_wait_seconds,omitempty"`
	KeepFirst      bool            `json:"keep_first,omitempty"`
}

// BatchRequest is the body of POST /api/v1/tasks/batch.
type BatchRequest struct {
	Tasks []Submission `json:"tasks"`
}

// BatchResult is the answer of POST /api/v1/tasks/batch: one item per
// task, in order.
type BatchResult struct {
	Results []BatchItem `json:"results"`
}

// BatchItem is the outcome of one task of a batch: the status its own
// submission would have had, and its Task or its Error.
type BatchItem struct {
	Status int          `json:"status"`
	Task   *Task        `json:"task,omitempty"`
	Error  *ErrorDetail `json:"error,omitempty"`
}

// Task is a unit of work and the record of its life, as the API answers
// it. Its fields are in the order the API writes them: timeout_seconds and
// the times last.
type Task struct {
	ID       string          `json:"id"`
	Queue    string          `json:"queue"`
	TaskType string          `json:"task_type"`
	Payload  json.RawMessage `json:"payload"`
	Priority int             `json:"priority"`
	// Status is QUEUED, SCHEDULED, RUNNING, SUCCEEDED, DEAD or CANCELLED.
	Status string `json:"status"`
	// Attempt counts the executions that count against MaxAttempts;
	// Crashes those lost with their worker.
	Attempt         int             `json:"attempt"`
	MaxAttempts     int             `json:"max_attempts"`
	Crashes         int             `json:"crashes"`
	Result          json.RawMessage `json:"result,omitempty"`
	LastError       string          `json:"last_error,omitempty"`
	Worker          string          `json:"worker,omitempty"`
	CancelRequested bool            `json:"cancel_requested,omitempty"`
	History         []Execution     `json:"history"`
	// Schedule names the schedule that created the task, ScheduleTick the
	// tick.
	Schedule     string `json:"schedule,omitempty"`
	Group        string `json:"group,omitempty"`
	GroupWaiting bool   `json:"group_waiting,omitempty"`
	LimitKey     string `json:"limit_key,omitempty"`
	// HeldBy names the limit that holds the task back now.
	HeldBy       string          `json:"held_by,omitempty"`
	OrderKey     string          `json:"order_key,omitempty"`
	OrderWaiting bool            `json:"order_waiting,omitempty"`
	Workflow     string          `json:"workflow,omitempty"`
	WorkflowNode int             `json:"workflow_node,omitempty"`
	Previous     json.RawMessage `json:"previous,omitempty"`
	TraceParent  string          `json:"traceparent,omitempty"`
	TraceID      string          `json:"trace_id,omitempty"`
	Progress     *TaskProgress   `json:"progress,omitempty"`
	// Steps are the task's recorded durable steps (GET /api/v1/tasks/{id}
	// only), in the order they were recorded.
	Steps []TaskStep `json:"steps,omitempty"`
	// Suspended says what a SCHEDULED task waits for after its execution
	// suspended (a durable sleep, a wait for a signal).
	Suspended *Suspension `json:"suspended,omitempty"`
	// Duplicate is set on a task a submission returned without creating it
	// (an idempotent replay's original, a unique task's lock holder).
	Duplicate bool `json:"duplicate,omitempty"`
	// Debounced is set on the task a debounced submission joined instead
	// of creating one.
	Debounced      bool    `json:"debounced,omitempty"`
	TimeoutSeconds float64 `json:"timeout_seconds"`
	CreatedAt      Time    `json:"created_at"`
	ScheduledAt    *Time   `json:"scheduled_at,omitempty"`
	StartedAt      *Time   `json:"started_at,omitempty"`
	FinishedAt     *Time   `json:"finished_at,omitempty"`
	ScheduleTick   *Time   `json:"schedule_tick,omitempty"`
}

// Execution is one run of a task in its history.
type Execution struct {
	Run    int    `json:"run"`
	Worker string `json:"worker"`
	// Outcome is succeeded, retried, dead, cancelled or lost (dtq.Outcome).
	Outcome    string `json:"outcome"`
	Error      string `json:"error,omitempty"`
	StartedAt  Time   `json:"started_at"`
	FinishedAt Time   `json:"finished_at"`
}

// TaskProgress is how far a running execution says it got.
type TaskProgress struct {
	Fraction float64 `json:"fraction"` // 0 to 1
	Note     string  `json:"note,omitempty"`
	At       Time    `json:"at"`
}

// TaskStep is a durable step's record.
type TaskStep struct {
	Name   string          `json:"name"`
	Run    int             `json:"run"`
	Result json.RawMessage `json:"result"`
	// By is "signal" or "timeout" for a wait's record no run made.
	By string `json:"by,omitempty"`
	At Time   `json:"at"`
}

// Suspension is what a suspended task waits for: "sleep" (the sleep's
// step name) or "signal" (the signal's name), until when.
type Suspension struct {
	For   string `json:"for"`
	Name  string `json:"name"`
	Until Time   `json:"until"`
}

// TaskPage is the answer of GET /api/v1/tasks: a page of tasks and the
// cursor of the next ("" after the last).
type TaskPage struct {
	Tasks      []*Task `json:"tasks"`
	NextCursor string  `json:"next_cursor"`
}

// Event is a task's transition to a status: one WebSocket text frame of
// GET /ws/events.
type Event struct {
	Queue    string        `json:"queue"`
	TaskID   string        `json:"task_id"`
	Status   string        `json:"status"`
	TaskType string        `json:"task_type"`
	Attempt  int           `json:"attempt"`
	Priority int           `json:"priority"`
	Error    string        `json:"error,omitempty"`
	Progress *TaskProgress `json:"progress,omitempty"`
	// Suspended is set on the SCHEDULED event of a suspension.
	Suspended *Suspension `json:"suspended,omitempty"`
	Time      Time        `json:"time"`
}

// Signal is the body of POST /api/v1/tasks/{id}/signals/{name}: the
// signal's payload (absent: null).
type Signal struct {
	Payload json.RawMessage `json:"payload,omitempty"`
}

// SignalDelivered is its answer.
type SignalDelivered struct {
	TaskID    string `json:"task_id"`
	Name      string `json:"name"`
	Delivered bool   `json:"delivered"`
}
