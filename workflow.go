package dtq

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/dtq-dev/dtq/internal/store"
)

// Node is one node of a workflow as you submit it: exactly one of Task,
// Chain and Parallel. Build them with Call, Chain and Parallel. Its state,
// once submitted, is a WorkflowNode (GetWorkflow).
//
//   - A task node runs one task.
//   - A chain runs its nodes one after another; each gets the previous
//     one's result as Task.Previous. A node that does not succeed ends the
//     chain: the nodes after it do not run.
//   - A parallel node runs its children at once. When every child has
//     ended, its OnComplete callback runs (always) and its OnSuccess
//     callback (only if every child succeeded), each with the children's
//     outcomes as Task.Previous; without callbacks the parallel node passes
//     those outcomes on.
//
// Nodes nest: a chain's node may be a parallel node, a parallel node's
// child a chain. To submit tasks as one unit, all or none, with a callback
// once they have all ended, submit a parallel node as the root:
//
//	all := dtq.Parallel(tasks...)
//	all.OnComplete = &report
//	wf, err := client.EnqueueWorkflow(ctx, all, nil)
type Node struct {
	Task     *NodeTask
	Chain    []Node
	Parallel []Node
	// OnSuccess and OnComplete are a parallel node's callbacks (nil:
	// none).
	OnSuccess, OnComplete *Node
}

// NodeTask is the task of a task node. Opts may set Priority, MaxAttempts
// and Timeout (a workflow's tasks run in its queue; they take no delay,
// run-at, idempotency key, unique lock, debounce, fairness group
// (EnqueueOpts.Group) or limit key of their own).
type NodeTask struct {
	Type    string
	Payload any
	Opts    *EnqueueOpts
}

// Call returns a task node: a task of taskType with payload (encoded as
// JSON; a json.RawMessage or []byte of JSON is taken as is).
func Call(taskType string, payload any, opts *EnqueueOpts) Node {
	return Node{Task: &NodeTask{Type: taskType, Payload: payload, Opts: opts}}
}

// Chain returns a chain of nodes, run one after another.
func Chain(nodes ...Node) Node { return Node{Chain: append([]Node{}, nodes...)} }

// Parallel returns a parallel node: its children, run at once. Set its
// OnSuccess or OnComplete for a callback once they have all ended.
func Parallel(children ...Node) Node { return Node{Parallel: append([]Node{}, children...)} }

// Limits of a workflow.
const (
	MaxWorkflowNodes = 10000            // tasks, chains and parallel nodes
	MaxWorkflowDepth = 32               // nesting of chains and parallel nodes
	MaxWorkflowBytes = 32 * 1024 * 1024 // payloads together
)

// WorkflowOpts are the options of EnqueueWorkflow.
type WorkflowOpts struct {
	// Queue is where every task of the workflow runs; defaults to
	// DefaultQueue.
	Queue string
	// IdempotencyKey makes the submission idempotent within
	// Config.IdempotencyWindow from the first one: a submission with the
	// same key and the same workflow creates nothing and returns the
	// first's workflow (Duplicate set); with another workflow it is an
	// *IdempotencyConflictError. Keys of workflows and of tasks are apart.
	IdempotencyKey string
}

// WorkflowStatus is where a workflow is in its life.
type WorkflowStatus string

// Workflow statuses.
const (
	WorkflowRunning   WorkflowStatus = "RUNNING"
	WorkflowSucceeded WorkflowStatus = "SUCCEEDED"
	WorkflowFailed    WorkflowStatus = "FAILED"
	WorkflowCancelled WorkflowStatus = "CANCELLED"
)

// Node statuses (WorkflowNode.Status).
const (
	NodePending   = "PENDING" // its turn has not come
	NodeActive    = "ACTIVE"  // running: a task node's task exists (see its own status)
	NodeSucceeded = "SUCCEEDED"
	NodeFailed    = "FAILED" // a task node's task went DEAD; a node of a chain or a child of a parallel node failed
	NodeCancelled = "CANCELLED"
	NodeSkipped   = "SKIPPED" // never ran: a node before it failed, or on_success after a failed child
)

// Workflow is a workflow's structure and the state of each node.
type Workflow struct {
	ID     string         `json:"id"`
	Queue  string         `json:"queue"`
	Status WorkflowStatus `json:"status"`
	// CancelRequested: CancelWorkflow was called; no node starts any more.
	CancelRequested bool       `json:"cancel_requested,omitempty"`
	CreatedAt       time.Time  `json:"created_at"`
	FinishedAt      *time.Time `json:"finished_at,omitempty"`
	// Result and Error are the root node's.
	Result   json.RawMessage  `json:"result,omitempty"`
	Error    string           `json:"error,omitempty"`
	Progress WorkflowProgress `json:"progress"`
	Root     *WorkflowNode    `json:"root"`
	// Duplicate is set on the workflow an idempotent replay returned
	// (WorkflowOpts.IdempotencyKey); its Status is empty when it has
	// expired while its key is still remembered.
	Duplicate bool `json:"duplicate,omitempty"`
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

// WorkflowNode is the state of one node of a workflow, as GetWorkflow
// returns it (the Node submitted is its definition).
type WorkflowNode struct {
	Node   int    `json:"node"` // its number: Task.WorkflowNode of its task
	Kind   string `json:"kind"` // "task", "chain" or "parallel"
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

// planner flattens a Node tree into a store plan, validating it.
type planner struct {
	c     *Client
	queue string
	nodes []store.PlanNode
	bytes int
}

// add appends s (at field path, for errors) as a node under parent with
// role, and its descendants; it returns its node number.
func (p *planner) add(s *Node, path string, parent int, role string, depth int) (int, error) {
	if depth > MaxWorkflowDepth {
		return 0, invalid(path, "nests deeper than %d", MaxWorkflowDepth)
	}
	if len(p.nodes) >= MaxWorkflowNodes {
		return 0, invalid(path, "is past the limit of %d nodes in a workflow", MaxWorkflowNodes)
	}
	set := 0
	for _, b := range []bool{s.Task != nil, s.Chain != nil, s.Parallel != nil} {
		if b {
			set++
		}
	}
	if set != 1 {
		return 0, invalid(path, "must have exactly one of task, chain and parallel")
	}
	if s.Parallel == nil && (s.OnSuccess != nil || s.OnComplete != nil) {
		return 0, invalid(path, "has a callback (on_success, on_complete), which only a parallel node takes")
	}
	i := len(p.nodes)
	n := store.PlanNode{Parent: parent, Role: role, OnSuccess: -1, OnComplete: -1}
	p.nodes = append(p.nodes, n)
	switch {
	case s.Task != nil:
		if err := p.task(&n, s.Task, path+".task"); err != nil {
			return 0, err
		}
	case s.Chain != nil:
		n.Kind = store.NodeChain
		if len(s.Chain) == 0 {
			return 0, invalid(path+".chain", "must have at least one node")
		}
		for j := range s.Chain {
			k, err := p.add(&s.Chain[j], fmt.Sprintf("%s.chain[%d]", path, j), i, fmt.Sprint(j), depth+1)
			if err != nil {
				return 0, err
			}
			n.Kids = append(n.Kids, k)
		}
	default:
		n.Kind = store.NodeParallel
		if len(s.Parallel) == 0 {
			return 0, invalid(path+".parallel", "must have at least one child")
		}
		for j := range s.Parallel {
			k, err := p.add(&s.Parallel[j], fmt.Sprintf("%s.parallel[%d]", path, j), i, store.RoleChild, depth+1)
			if err != nil {
				return 0, err
			}
			n.Kids = append(n.Kids, k)
		}
		if s.OnSuccess != nil {
			k, err := p.add(s.OnSuccess, path+".on_success", i, store.RoleOnSuccess, depth+1)
			if err != nil {
				return 0, err
			}
			n.OnSuccess = k
		}
		if s.OnComplete != nil {
			k, err := p.add(s.OnComplete, path+".on_complete", i, store.RoleOnComplete, depth+1)
			if err != nil {
				return 0, err
			}
			n.OnComplete = k
		}
	}
	p.nodes[i] = n
	return i, nil
}

// task validates a task node as Enqueue would, into n.
func (p *planner) task(n *store.PlanNode, t *NodeTask, path string) error {
	var o EnqueueOpts
	if t.Opts != nil {
		o = *t.Opts
	}
	switch {
	case o.Queue != "" && o.Queue != p.queue:
		return invalid(path+".queue", "must be left out: a workflow's tasks run in its queue (%s)", p.queue)
	case o.Delay != 0 || !o.RunAt.IsZero():
		return invalid(path+".delay", "and run_at are not taken by a workflow's task: it starts when its turn comes")
	case o.IdempotencyKey != "" || o.Unique != nil:
		return invalid(path+".idempotency_key", "and unique are not taken by a workflow's task")
	case o.Debounce != nil:
		return invalid(path+".debounce", "is not taken by a workflow's task")
	case o.Group != "" || o.LimitKey != "":
		return invalid(path+".group", "and limit_key are not taken by a workflow's task (its task type's limits apply)")
	case o.OrderKey != "":
		return invalid(path+".order_key", "is not taken by a workflow's task (the workflow orders its steps)")
	}
	o.Queue = p.queue
	_, item, err := p.c.prepare(t.Type, t.Payload, &o)
	if err != nil {
		var v *ValidationError
		if errors.As(err, &v) {
			return &ValidationError{Field: path + "." + v.Field, Problem: v.Problem}
		}
		return err
	}
	p.bytes += len(item.Payload)
	if p.bytes > MaxWorkflowBytes {
		return invalid(path+".payload", "brings the workflow's payloads past %d bytes", MaxWorkflowBytes)
	}
	n.Kind, n.Type, n.Payload, n.Priority = store.NodeTask, item.Type, item.Payload, item.Priority
	n.MaxAttempts, n.Timeout = item.MaxAttempts, item.Timeout
	return nil
}

// workflowOf builds the public Workflow of a store record.
func workflowOf(r *store.WorkflowRecord) *Workflow {
	w := &Workflow{ID: r.ID, Queue: r.Queue, Status: WorkflowStatus(r.Status), CancelRequested: r.CancelRequested,
		CreatedAt: msTime(r.Created), FinishedAt: msTimePtr(r.Finished)}
	if len(r.Nodes) == 0 {
		return w
	}
	var build func(i int, inherited byte) *WorkflowNode
	build = func(i int, inherited byte) *WorkflowNode {
		n := &r.Nodes[i]
		st := n.State
		if st == 0 {
			st = inherited
		}
		wn := &WorkflowNode{Node: i, Status: nodeStatus(st), TaskID: n.TaskID, Error: n.Why}
		if n.Result != nil {
			wn.Result = json.RawMessage(n.Result)
		}
		down := inherited
		if st == store.WFSkipped || st == store.WFCancelled {
			down = st
		}
		if w.Status != WorkflowRunning && down == 0 {
			down = store.WFCancelled // a finished workflow's nodes that never started
		}
		kid := func(k int) *WorkflowNode {
			if k < 0 || k >= len(r.Nodes) || k <= i {
				return nil
			}
			return build(k, down)
		}
		switch n.Kind {
		case store.NodeTask:
			wn.Kind, wn.TaskType = "task", n.Type
			p := &w.Progress
			p.Total++
			switch wn.Status {
			case NodePending:
				p.Pending++
			case NodeActive:
				p.Active++
			case NodeSucceeded:
				p.Succeeded++
			case NodeFailed:
				p.Failed++
			case NodeCancelled:
				p.Cancelled++
			default:
				p.Skipped++
			}
		case store.NodeChain:
			wn.Kind = "chain"
			for _, k := range n.Kids {
				if c := kid(k); c != nil {
					wn.Nodes = append(wn.Nodes, c)
				}
			}
		default:
			wn.Kind = "parallel"
			for _, k := range n.Kids {
				if c := kid(k); c != nil {
					wn.Children = append(wn.Children, c)
				}
			}
			wn.OnSuccess, wn.OnComplete = kid(n.OnSuccess), kid(n.OnComplete)
		}
		return wn
	}
	w.Root = build(0, 0)
	w.Result, w.Error = w.Root.Result, w.Root.Error
	return w
}

// nodeStatus names a node state.
func nodeStatus(st byte) string {
	switch st {
	case store.WFActive:
		return NodeActive
	case store.WFSucceeded:
		return NodeSucceeded
	case store.WFFailed:
		return NodeFailed
	case store.WFCancelled:
		return NodeCancelled
	case store.WFSkipped:
		return NodeSkipped
	}
	return NodePending
}
