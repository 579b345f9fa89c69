package wire

import "encoding/json"

// The bodies and answers of the task leases (POST /api/v1/leases and
// /api/v1/leases/{lease}/…), by which a worker in any language runs tasks.

// LeaseRequest is the body of POST /api/v1/leases.
type LeaseRequest struct {
	Worker    *string  `json:"worker"`
	Queues    []string `json:"queues,omitempty"`
	TaskTypes []string `json:"task_types,omitempty"`
	// Max is an integer; WaitSeconds and LeaseSeconds are numbers.
	Max          json.RawMessage `json:"max,omitempty"`
	WaitSeconds  json.RawMessage `json:"wait_seconds,omitempty"`
	LeaseSeconds json.RawMessage `json:"lease_seconds,omitempty"`
	// What the holder says of itself, for GET /api/v1/workers: Library
	// what it runs on, Concurrency and Busy integers.
	Library     string          `json:"library,omitempty"`
	Concurrency json.RawMessage `json:"concurrency,omitempty"`
	Busy        json.RawMessage `json:"busy,omitempty"`
}

// LeaseList is the answer of POST /api/v1/leases (none after the wait).
type LeaseList struct {
	Leases []*Lease `json:"leases"`
}

// Lease is a leased task.
type Lease struct {
	// Token is the {lease} of the lease's paths.
	Token    string `json:"lease"`
	Task     *Task  `json:"task"`
	Deadline Time   `json:"deadline"` // lost unless extended by then
}

// LeaseExtended is the answer of POST /api/v1/leases/{lease}/extend.
type LeaseExtended struct {
	Token           string `json:"lease"`
	Deadline        Time   `json:"deadline"`
	CancelRequested bool   `json:"cancel_requested"`
}

// LeaseCompletion is the body of POST /api/v1/leases/{lease}/complete.
type LeaseCompletion struct {
	Result json.RawMessage `json:"result,omitempty"`
}

// LeaseFailure is the body of POST /api/v1/leases/{lease}/fail.
type LeaseFailure struct {
	Error *string `json:"error"`
	// Class is retryable (the default) or permanent.
	Class *string `json:"class,omitempty"`
	// RetryAfterSeconds is a number of seconds.
	RetryAfterSeconds json.RawMessage `json:"retry_after_seconds,omitempty"`
}

// LeaseOutcomes is the body of POST /api/v1/leases/outcomes: the outcomes
// of many leases, recorded together.
type LeaseOutcomes struct {
	Outcomes []LeaseOutcome `json:"outcomes"`
}

// LeaseOutcome is one lease's outcome: a completion with Result, or — with
// Error — a failure, with the fields of LeaseFailure.
type LeaseOutcome struct {
	Lease             string          `json:"lease"`
	Result            json.RawMessage `json:"result,omitempty"`
	Error             *string         `json:"error,omitempty"`
	Class             *string         `json:"class,omitempty"`
	RetryAfterSeconds json.RawMessage `json:"retry_after_seconds,omitempty"`
}

// LeaseOutcomesRecorded is the answer of POST /api/v1/leases/outcomes: one
// per outcome, in order.
type LeaseOutcomesRecorded struct {
	Outcomes []LeaseOutcomeRecorded `json:"outcomes"`
}

// LeaseOutcomeRecorded is what became of one outcome: the task's Status
// after it, or the Error that left it unrecorded (lease_lost: drop the
// task; invalid_field: the outcome was malformed; unavailable: try again).
type LeaseOutcomeRecorded struct {
	Lease  string       `json:"lease"`
	Status string       `json:"status,omitempty"`
	Error  *ErrorDetail `json:"error,omitempty"`
}

// LeaseProgress is the body of POST /api/v1/leases/{lease}/progress.
type LeaseProgress struct {
	// Fraction is a number from 0 to 1.
	Fraction json.RawMessage `json:"fraction"`
	Note     *string         `json:"note,omitempty"`
}

// LeaseSteps is the answer of GET /api/v1/leases/{lease}/steps: the
// leased task's recorded durable steps, each step's result by name.
type LeaseSteps struct {
	Steps map[string]json.RawMessage `json:"steps"`
}

// LeaseStep is the body of PUT /api/v1/leases/{lease}/steps/{name}: the
// step's result.
type LeaseStep struct {
	Result json.RawMessage `json:"result"`
}

// LeaseStepRecorded is its answer: the result that stands, and whether
// this request recorded it (false: the task recorded the step before).
type LeaseStepRecorded struct {
	Name     string          `json:"name"`
	Result   json.RawMessage `json:"result"`
	Recorded bool            `json:"recorded"`
}

// LeaseSleep is the body of POST /api/v1/leases/{lease}/sleep: a durable
// sleep of the leased task (its step name, and how long).
type LeaseSleep struct {
	Step    string  `json:"step"`
	Seconds float64 `json:"seconds"`
}

// LeaseWaitFor is the body of POST /api/v1/leases/{lease}/wait: a durable
// wait for a signal (its name, and the timeout).
type LeaseWaitFor struct {
	Signal         string  `json:"signal"`
	TimeoutSeconds float64 `json:"timeout_seconds"`
}

// LeaseWaited is their answer: over (the holder goes on; for a wait, with
// the signal's payload or timed_out), or suspended (the lease ended: the
// holder stops; the task runs again under a new lease when it is due).
type LeaseWaited struct {
	Over      bool            `json:"over"`
	Suspended *Suspension     `json:"suspended,omitempty"`
	Payload   json.RawMessage `json:"payload,omitempty"`
	TimedOut  bool            `json:"timed_out,omitempty"`
	Child     *LeaseChildEnd  `json:"child,omitempty"`
}

// LeaseChild is the body of POST /api/v1/leases/{lease}/child: the step
// name of an awaited child, and its submission (as POST /api/v1/tasks').
type LeaseChild struct {
	Step string     `json:"step"`
	Task Submission `json:"task"`
}

// LeaseChildEnd is how an awaited child ended.
type LeaseChildEnd struct {
	TaskID string          `json:"task_id"`
	Status string          `json:"status"`
	Result json.RawMessage `json:"result,omitempty"`
	Error  string          `json:"error,omitempty"`
}
