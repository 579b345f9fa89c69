package dtq

import (
	"cmp"
	"encoding/json"
	"slices"
	"strings"
	"time"

	"github.com/dtq-dev/dtq/internal/store"
	"github.com/dtq-dev/dtq/internal/wiretime"
)

// Status is where a task is in its life.
type Status string

// Task statuses.
const (
	// StatusQueued: ready, waiting in its queue's priority band for a worker.
	StatusQueued Status = "QUEUED"
	// StatusScheduled: waiting for its due time (a delay, RunAt, or the
	// backoff before a retry).
	StatusScheduled Status = "SCHEDULED"
	// StatusRunning: a worker is running it.
	StatusRunning Status = "RUNNING"
	// StatusSucceeded: done; Result holds what the handler returned.
	StatusSucceeded Status = "SUCCEEDED"
	// StatusDead: failed for good; it is in its queue's dead-letter stream,
	// where it can be requeued or discarded.
	StatusDead Status = "DEAD"
	// StatusCancelled: cancelled before or while it ran.
	StatusCancelled Status = "CANCELLED"
)

// Finished reports whether s is a terminal status (SUCCEEDED, DEAD or
// CANCELLED). A DEAD task can still be requeued.
func (s Status) Finished() bool {
	return s == StatusSucceeded || s == StatusDead || s == StatusCancelled
}

func (s Status) valid() bool {
	switch s {
	case StatusQueued, StatusScheduled, StatusRunning, StatusSucceeded, StatusDead, StatusCancelled:
		return true
	}
	return false
}

// Task is a unit of work: a type naming its handler, a JSON payload, and
// the record of its life.
type Task struct {
	ID       string          `json:"id"`
	Queue    string          `json:"queue"`
	Type     string          `json:"task_type"`
	Payload  json.RawMessage `json:"payload"`
	Priority int             `json:"priority"` // 0-9, 9 runs first
	Status   Status          `json:"status"`

	// Attempt counts executions that count against MaxAttempts (crashes of
	// the worker running it do not; they are counted in Crashes).
	Attempt     int           `json:"attempt"`
	MaxAttempts int           `json:"max_attempts"`
	Crashes     int           `json:"crashes"`
	Timeout     time.Duration `json:"-"`

	CreatedAt   time.Time  `json:"created_at"`
	ScheduledAt *time.Time `json:"scheduled_at,omitempty"` // due time while SCHEDULED
	StartedAt   *time.Time `json:"started_at,omitempty"`   // of the latest execution
	FinishedAt  *time.Time `json:"finished_at,omitempty"`

	Result    json.RawMessage `json:"result,omitempty"`
	LastError string          `json:"last_error,omitempty"`
	Worker    string          `json:"worker,omitempty"` // of the latest execution
	// CancelRequested is set while a RUNNING task is being cancelled.
	CancelRequested bool `json:"cancel_requested,omitempty"`

	// History lists every execution, oldest first.
	History []Execution `json:"history"`

	// Schedule names the schedule whose tick ScheduleTick created the task
	// ("" for a submitted task).
	Schedule     string     `json:"schedule,omitempty"`
	ScheduleTick *time.Time `json:"schedule_tick,omitempty"`

	// Group is the group the task was submitted with (EnqueueOpts.Group);
	// GroupWaiting says that, QUEUED, it waits for its group's turn to
	// enter the queue's bands.
	Group        string `json:"group,omitempty"`
	GroupWaiting bool   `json:"group_waiting,omitempty"`

	// LimitKey is the limit key the task was submitted with
	// (EnqueueOpts.LimitKey). HeldBy names the limit that holds it back
	// now — "task_type:<type>" or "limit_key:<key>" — while a full
	// concurrency limit keeps it QUEUED or a rate makes it SCHEDULED for
	// its reserved start; "" otherwise.
	LimitKey string `json:"limit_key,omitempty"`
	HeldBy   string `json:"held_by,omitempty"`

	// OrderKey is the order key the task was submitted with
	// (EnqueueOpts.OrderKey); OrderWaiting says that, QUEUED, it waits for
	// the tasks of its key submitted before it.
	OrderKey     string `json:"order_key,omitempty"`
	OrderWaiting bool   `json:"order_waiting,omitempty"`

	// Workflow is the id of the workflow the task is a node of ("" for
	// none), WorkflowNode the number of that node (WorkflowNode.Node in
	// GetWorkflow). Previous is what the node before it produced: the
	// previous chain node's result, or — for a parallel node's child, the
	// parallel node's input; for its callback — the JSON array of the
	// children's outcomes ({"step", "id", "status", "result", "error"},
	// "step" being the child's node number: the storage layer writes that
	// key). Nil for a first node.
	Workflow     string          `json:"workflow,omitempty"`
	WorkflowNode int             `json:"workflow_node,omitempty"`
	Previous     json.RawMessage `json:"previous,omitempty"`

	// TraceParent is the W3C traceparent of the task's submission (its
	// "dtq.enqueue" span): a worker in another language continues the trace
	// from it. "" when the submission had no trace.
	TraceParent string `json:"traceparent,omitempty"`
	// TraceID is the trace id of TraceParent (32 lowercase hex digits): what
	// a tracing UI finds the task's trace by, and what the worker's log
	// lines about the task carry as trace_id. "" when TraceParent is.
	TraceID string `json:"trace_id,omitempty"`

	// Progress is what the running execution last reported (Progress, or
	// a lease's progress); nil when it reported none, and once it ended.
	Progress *TaskProgress `json:"progress,omitempty"`

	// Steps are the durable steps the task recorded (Step), in the order
	// they were recorded; Client.Get reads them (other answers leave them
	// out).
	Steps []TaskStep `json:"steps,omitempty"`

	// Suspended says what the task waits for while it is SCHEDULED after
	// an execution suspended (Sleep, WaitFor): nil otherwise.
	Suspended *Suspension `json:"suspended,omitempty"`

	// Duplicate is set on the task an Enqueue returned without creating
	// it: an idempotent replay's original, or the task holding a unique
	// task's lock (EnqueueResult.Duplicate).
	Duplicate bool `json:"duplicate,omitempty"`
	// Debounced is set on the task a debounced Enqueue joined instead of
	// creating one (EnqueueResult.Debounced).
	Debounced bool `json:"debounced,omitempty"`

	run     int    // execution number (the fence of this worker's run)
	band    int    // priority band of the stream entry being run
	entry   string // stream entry id being run
	idem    string // idempotency record hash, if any
	started string // Unix ms of this run's start, as Redis recorded it
	parent  string // "<task id> <step>" of the task awaiting it (Child)
	// claimed: when this worker's read that claimed the entry went out (a
	// worker checks a claim this old is still its own before running it)
	claimed time.Time
	// born: the fields of the band entry the task was born as, when it
	// runs from that entry (its record gets them when it finishes)
	born *store.Spec
	// scopes: the scoped limits this run started under (a lease or a
	// token of each); leased: those whose lease it holds
	scopes, leased []string
}

// TaskProgress is how far a running execution says it got.
type TaskProgress struct {
	Fraction float64   `json:"fraction"` // 0 to 1
	Note     string    `json:"note,omitempty"`
	At       time.Time `json:"at"` // when it was reported (Redis clock)
}

// TaskStep is a durable step's record.
type TaskStep struct {
	Name   string          `json:"name"`
	Run    int             `json:"run"` // the execution that recorded it
	At     time.Time       `json:"at"`  // when (Redis clock)
	Result json.RawMessage `json:"result"`
	// By says what recorded a wait's step (WaitFor) when no run did:
	// "signal" (Result is its payload, Run 0) or "timeout" (no signal came
	// in time; Result null).
	By string `json:"by,omitempty"`
}

// Execution is one run of a task in its history.
type Execution struct {
	Run        int       `json:"run"`
	StartedAt  time.Time `json:"started_at"`
	FinishedAt time.Time `json:"finished_at"`
	Worker     string    `json:"worker"`
	// Outcome is how the run ended: OutcomeSucceeded, OutcomeRetried
	// (failed, retried later), OutcomeDead (failed for good),
	// OutcomeCancelled, or OutcomeLost (its worker was lost: another
	// worker took the task over).
	Outcome Outcome `json:"outcome"`
	Error   string  `json:"error,omitempty"`
}

// MarshalJSON encodes the task with Timeout as timeout_seconds and its
// times in TimeFormat.
func (t *Task) MarshalJSON() ([]byte, error) {
	type plain Task
	return json.Marshal(struct {
		*plain
		TimeoutSeconds float64        `json:"timeout_seconds"`
		CreatedAt      wiretime.Time  `json:"created_at"`
		ScheduledAt    *wiretime.Time `json:"scheduled_at,omitempty"`
		StartedAt      *wiretime.Time `json:"started_at,omitempty"`
		FinishedAt     *wiretime.Time `json:"finished_at,omitempty"`
		ScheduleTick   *wiretime.Time `json:"schedule_tick,omitempty"`
	}{(*plain)(t), t.Timeout.Seconds(), wiretime.Time(t.CreatedAt), wiretime.Ptr(t.ScheduledAt), wiretime.Ptr(t.StartedAt),
		wiretime.Ptr(t.FinishedAt), wiretime.Ptr(t.ScheduleTick)})
}

func msTime(ms int64) time.Time {
	if ms == 0 {
		return time.Time{}
	}
	return time.UnixMilli(ms).UTC()
}

func msTimePtr(ms int64) *time.Time {
	if ms == 0 {
		return nil // (before t exists: t escapes, and would be allocated for nothing)
	}
	t := msTime(ms)
	return &t
}

// heldBy names scope for Task.HeldBy.
func heldBy(scope string) string {
	if t, ok := strings.CutPrefix(scope, store.ScopeType); ok {
		return "task_type:" + t
	}
	if k, ok := strings.CutPrefix(scope, store.ScopeKey); ok {
		return "limit_key:" + k
	}
	return ""
}

// historyOutcome names a run's outcome as the store records it in the
// task's history in the words of the public API. A code it does not know
// (none is written today) passes through as it is.
func historyOutcome(o store.Outcome) Outcome {
	switch o {
	case store.OutcomeOK:
		return OutcomeSucceeded
	case store.OutcomeRetry:
		return OutcomeRetried
	case store.OutcomeDead:
		return OutcomeDead
	case store.OutcomeCancel:
		return OutcomeCancelled
	case store.OutcomeCrashed:
		return OutcomeLost
	case store.OutcomeSuspend:
		return OutcomeSuspended
	}
	return Outcome(o)
}

// taskOf builds the public Task from the store's record: the one place a
// Task is made from what Redis holds.
func taskOf(r *store.Record) *Task {
	t := &Task{
		ID:              r.ID,
		Queue:           r.Queue,
		Type:            r.Type,
		Payload:         json.RawMessage(r.Payload),
		Priority:        r.Priority,
		Status:          Status(r.Status),
		Attempt:         r.Attempt,
		MaxAttempts:     r.MaxAttempts,
		Crashes:         r.Crashes,
		Timeout:         r.Timeout,
		CreatedAt:       msTime(r.Created),
		ScheduledAt:     msTimePtr(r.Due),
		StartedAt:       msTimePtr(r.Started),
		FinishedAt:      msTimePtr(r.Finished),
		LastError:       r.Error,
		Worker:          r.Worker,
		CancelRequested: r.Cancel,
		History:         make([]Execution, len(r.History)),
		run:             r.Run,
		idem:            r.Idem,
		Schedule:        r.Schedule,
		Group:           r.Group,
		GroupWaiting:    r.GroupWaiting,
		LimitKey:        r.LimitKey,
		HeldBy:          heldBy(r.Throttled),
		OrderKey:        r.OrderKey,
		OrderWaiting:    r.OrderWaiting,
		Suspended:       suspensionOf(r.Wait, r.Due),
	}
	if r.Schedule != "" {
		t.ScheduleTick = msTimePtr(r.Tick)
	}
	if r.Result != nil {
		t.Result = json.RawMessage(r.Result)
	}
	t.TraceParent, t.TraceID, t.parent = r.Trace, traceIDOf(r.Trace), r.Parent
	if p := r.Progress; p != nil {
		t.Progress = &TaskProgress{Fraction: p.Fraction, Note: p.Note, At: msTime(p.At)}
	}
	for name, sr := range r.Steps {
		t.Steps = append(t.Steps, TaskStep{Name: name, Run: sr.Run, At: msTime(sr.At), Result: json.RawMessage(sr.Result), By: sr.By})
	}
	slices.SortFunc(t.Steps, func(a, b TaskStep) int {
		return cmp.Or(a.At.Compare(b.At), cmp.Compare(a.Name, b.Name))
	})
	if r.Workflow != "" {
		t.Workflow, t.WorkflowNode = r.Queue+"-"+r.Workflow, r.Step
		if r.Prev != nil {
			t.Previous = json.RawMessage(r.Prev)
		}
	}
	for i, x := range r.History {
		t.History[i] = Execution{Run: x.Run, StartedAt: msTime(x.Started), FinishedAt: msTime(x.Finished),
			Worker: x.Worker, Outcome: historyOutcome(x.Outcome), Error: x.Error}
	}
	// A finished task's finish time is its latest execution's end (tasks
	// cancelled before running record it apart).
	if t.FinishedAt == nil && t.Status.Finished() && len(t.History) > 0 {
		end := t.History[len(t.History)-1].FinishedAt
		t.FinishedAt = &end
	}
	return t
}
