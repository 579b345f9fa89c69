package wire

import "encoding/json"

// WorkflowBody is the body of POST /api/v1/workflows.
type WorkflowBody struct {
	Queue *string `json:"queue,omitempty"`
	Root  *Step   `json:"root"`
}

// Step is one step of a workflow: exactly one of Task (a submission
// without a queue of its own), Chain and Parallel; a parallel step may
// have OnSuccess and OnComplete callbacks.
type Step struct {
	Task       *Submission `json:"task,omitempty"`
	Chain      []Step      `json:"chain,omitempty"`
	Parallel   []Step      `json:"parallel,omitempty"`
	OnSuccess  *Step       `json:"on_success,omitempty"`
	OnComplete *Step       `json:"on_complete,omitempty"`
}

// Workflow is a workflow's graph and the state of each step. Its fields
// are in the order the API writes them: the times last.
type Workflow struct {
	ID     string `json:"id"`
	Queue  string `json:"queue"`
	Status string `json:"status"`
	// CancelRequested: no step starts any more.
	CancelRequested bool `json:"cancel_requested,omitempty"`
	// Result and Error are the root step's.
	Result   json.RawMessage  `json:"result,omitempty"`
	Error    string           `json:"error,omitempty"`
	Progress WorkflowProgress `json:"progress"`
	Root     *WorkflowNode    `json:"root"`
	// Duplicate is set on the workflow an idempotent replay answered.
	Duplicate  bool  `json:"duplicate,omitempty"`
	CreatedAt  Time  `json:"created_at"`
	FinishedAt *Time `json:"finished_at,omitempty"`
}

// WorkflowProgress counts a workflow's task steps by status.
type WorkflowProgress struct {
	Total     int `json:"total"`
	Pending   int `json:"pending"`
	Active    int `json:"active"`
	Succeeded int `json:"succeeded"`
	Failed    int `json:"failed"`
	Cancelled int `json:"cancelled"`
	Skipped   int `json:"skipped"`
}

// WorkflowNode is one step of a workflow and its state.
type WorkflowNode struct {
	Step   int    `json:"step"` // its number: a task's workflow_step
	Kind   string `json:"kind"` // task, chain or parallel
	Status string `json:"status"`
	// TaskID and TaskType: a task step's task (its id once started).
	TaskID   string          `json:"task_id,omitempty"`
	TaskType string          `json:"task_type,omitempty"`
	Result   json.RawMessage `json:"result,omitempty"`
	// Error says why it failed, was cancelled or skipped.
	Error      string          `json:"error,omitempty"`
	Steps      []*WorkflowNode `json:"steps,omitempty"`    // a chain's
	Children   []*WorkflowNode `json:"children,omitempty"` // a parallel step's
	OnSuccess  *WorkflowNode   `json:"on_success,omitempty"`
	OnComplete *WorkflowNode   `json:"on_complete,omitempty"`
}
