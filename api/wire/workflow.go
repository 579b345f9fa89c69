package wire

import "encoding/json"

// WorkflowBody is the body of POST /api/v1/workflows.
type WorkflowBody struct {
	Queue *string `json:"queue,omitempty"`
	Root  *Node   `json:"root"`
}

// Node is one node of a workflow as submitted (its state is a
// WorkflowNode): exactly one of Task (a submission without a queue of its
// own), Chain and Parallel; a parallel node may have OnSuccess and
// OnComplete callbacks.
type Node struct {
	Task       *Submission `json:"task,omitempty"`
	Chain      []Node      `json:"chain,omitempty"`
	Parallel   []Node      `json:"parallel,omitempty"`
	OnSuccess  *Node       `json:"on_success,omitempty"`
	OnComplete *Node       `json:"on_complete,omitempty"`
}

// Workflow is a workflow's graph and the state of each node. Its fields
// are in the order the API writes them: the times last.
type Workflow struct {
	ID     string `json:"id"`
	Queue  string `json:"queue"`
	Status string `json:"status"`
	// CancelRequested: no node starts any more.
	CancelRequested bool `json:"cancel_requested,omitempty"`
	// Result and Error are the root node's.
	Result   json.RawMessage  `json:"result,omitempty"`
	Error    string           `json:"error,omitempty"`
	Progress WorkflowProgress `json:"progress"`
	Root     *WorkflowNode    `json:"root"`
	// Duplicate is set on the workflow an idempotent replay answered.
	Duplicate  bool  `json:"duplicate,omitempty"`
	CreatedAt  Time  `json:"created_at"`
	FinishedAt *Time `json:"finished_at,omitempty"`
}

// WorkflowProgress counts a workflow's task nodes by status.
type WorkflowProgress struct {
	Total     int `json:"total"`
	Pending   int `json:"pending"`
	Active    int `json:"active"`
	Succeeded int `json:"succeeded"`
	Failed    int `json:"failed"`
	Cancelled int `json:"cancelled"`
	Skipped   int `json:"skipped"`
}

// WorkflowNode is the state of one node of a workflow (a Node as
// submitted).
type WorkflowNode struct {
	Node   int    `json:"node"` // its number: a task's workflow_node
	Kind   string `json:"kind"` // task, chain or parallel
	Status string `json:"status"`
	// TaskID and TaskType: a task node's task (its id once started).
	TaskID   string          `json:"task_id,omitempty"`
	TaskType string          `json:"task_type,omitempty"`
	Result   json.RawMessage `json:"result,omitempty"`
	// Error says why it failed, was cancelled or skipped.
	Error      string          `json:"error,omitempty"`
	Nodes      []*WorkflowNode `json:"nodes,omitempty"`    // a chain's
	Children   []*WorkflowNode `json:"children,omitempty"` // a parallel node's
	OnSuccess  *WorkflowNode   `json:"on_success,omitempty"`
	OnComplete *WorkflowNode   `json:"on_complete,omitempty"`
}

// WorkflowSummary is a workflow as GET /api/v1/workflows lists it: a
// Workflow without its nodes and result.
type WorkflowSummary struct {
	ID              string           `json:"id"`
	Queue           string           `json:"queue"`
	Status          string           `json:"status"`
	CancelRequested bool             `json:"cancel_requested,omitempty"`
	Error           string           `json:"error,omitempty"` // the root node's
	Progress        WorkflowProgress `json:"progress"`
	CreatedAt       Time             `json:"created_at"`
	FinishedAt      *Time            `json:"finished_at,omitempty"`
}

// WorkflowPage is the answer of GET /api/v1/workflows: a page of
// workflows, newest first, and the cursor of the next page ("" when there
// are no more).
type WorkflowPage struct {
	Workflows  []WorkflowSummary `json:"workflows"`
	NextCursor string            `json:"next_cursor"`
}
