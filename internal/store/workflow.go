package store

import (
	"context"
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/dtq-dev/dtq/internal/script"
	"github.com/redis/rueidis"
)

var (
	//go:embed workflow.lua
	workflowSource string
	//go:embed workflow_cancel.lua
	workflowCancelSource string

	workflowScript       = script.New("workflow", libFor(workflowSource), workflowSource)
	workflowCancelScript = script.New("workflow_cancel", libFor(workflowCancelSource), workflowCancelSource)
)

// Node kinds of a workflow plan. NodeParallel's stored letter is G (the
// kind's earlier name, "group"): the letter is the stored encoding only,
// never shown to users.
const (
	NodeTask     = 'T'
	NodeChain    = 'C'
	NodeParallel = 'G'
)

// Roles of a node in its parent (besides a chain step's position).
const (
	RoleChild      = "c" // a parallel step's child
	RoleOnSuccess  = "S" // a parallel step's on_success callback
	RoleOnComplete = "E" // a parallel step's on_complete callback
)

// PlanNode is one node of a workflow's plan; node 0 is the root, and a
// node's parent comes before it.
type PlanNode struct {
	Kind   byte   // NodeTask, NodeChain or NodeParallel
	Parent int    // -1 for the root
	Role   string // its position in a parent chain (from "0"), or a Role*
	// Kids are a chain's steps or a parallel step's children, in order.
	Kids []int
	// OnSuccess and OnComplete are a parallel step's callbacks (-1: none).
	OnSuccess, OnComplete int
	// A task's spec.
	Type        string
	Payload     []byte
	Priority    int
	MaxAttempts int
	Timeout     time.Duration
}

// ErrWorkflowExists is SubmitWorkflow's answer for an id in use.
var ErrWorkflowExists = errors.New("store: workflow id in use")

// WorkflowSubmission is the input of SubmitWorkflow besides the plan.
type WorkflowSubmission struct {
	ULID       string // the workflow's
	MaxDepth   int64  // 0 = unbounded
	Retention  time.Duration
	Durability Durability
	// Trace is the W3C traceparent of the submission's span ("" for none):
	// every step's task carries it.
	Trace string
	// IdemHash is the SHA-256 (hex) of the submission's idempotency key
	// ("" for none), remembered for IdemWindow with the request's
	// fingerprint (a hash of the plan).
	IdemHash   string
	IdemWindow time.Duration
}

// SubmitWorkflow runs workflow.lua: it writes the workflow's plan and
// starts it, in one atomic step. It returns the creation time (Unix ms,
// Redis clock) and Created; or Full when the queue cannot take every task
// of it under MaxDepth; or, for a submission whose idempotency key has a
// record, Replay (the same request) or Conflict (another one) with the
// ULID of the key's workflow — nothing written.
func (q *Queue) SubmitWorkflow(ctx context.Context, sub WorkflowSubmission, plan []PlanNode) (created int64, code EnqueueCode,
	ulid string, err error) {
	tasks := 0
	window := "0"
	if sub.IdemHash != "" {
		window = ms(sub.IdemWindow)
	}
	args := make([]string, 0, 7+8*len(plan))
	args = append(args, q.name, strconv.FormatInt(sub.MaxDepth, 10), "", itoa(len(plan)), ms(sub.Retention), window, "")
	for i, n := range plan {
		f := strconv.Itoa(i)
		parent := "-"
		if n.Parent >= 0 {
			parent = itoa(n.Parent)
		}
		args = append(args, WFNodeKind+f, string(n.Kind)+"|"+parent+"|"+n.Role)
		switch n.Kind {
		case NodeTask:
			tasks++
			args = append(args, WFNodeSpec+f, n.Type+"\n"+itoa(n.Priority)+"\n"+itoa(n.MaxAttempts)+"\n"+ms(n.Timeout),
				WFNodePayload+f, rueidis.BinaryString(n.Payload))
		default:
			kids := make([]string, len(n.Kids))
			for j, k := range n.Kids {
				kids[j] = itoa(k)
			}
			args = append(args, WFNodeKids+f, strings.Join(kids, ","))
			if n.Kind == NodeChain {
				for j := 0; j+1 < len(n.Kids); j++ {
					args = append(args, WFNodeNext+itoa(n.Kids[j]), itoa(n.Kids[j+1]))
				}
			}
			if n.OnSuccess >= 0 {
				args = append(args, WFNodeOnOK+f, itoa(n.OnSuccess))
			}
			if n.OnComplete >= 0 {
				args = append(args, WFNodeOnEnd+f, itoa(n.OnComplete))
			}
		}
	}
	args[2] = itoa(tasks)
	fp := sha256.New()
	for _, a := range args[7:] {
		fp.Write([]byte(a))
		fp.Write([]byte{0})
	}
	args[6] = hex.EncodeToString(fp.Sum(nil))[:32]
	if sub.Trace != "" { // not part of the request's fingerprint
		args = append(args, WFTrace, sub.Trace)
	}
	ks := []string{q.k.Workflow(sub.ULID)}
	ks = q.k.bands(ks)
	idem := q.k.Idempotency(invalidULID)
	if sub.IdemHash != "" {
		idem = q.k.Idempotency(sub.IdemHash)
	}
	ks = append(ks, q.k.Schedule(), q.k.GroupWait(), idem, q.k.Info(), q.k.Workflows())
	res, replErr := workflowScript.ExecDurable(ctx, q.s.r, sub.Durability, ks, args)
	v, err := res.ToArray()
	if err != nil {
		return 0, 0, "", err
	}
	head := int64(-9)
	if len(v) > 0 {
		head, _ = v[0].AsInt64()
	}
	switch {
	case len(v) == 2 && head == 1:
		n, _ := v[1].AsInt64()
		return n, Created, sub.ULID, replErr
	case len(v) == 2 && (head == 2 || head == -1):
		u, _ := v[1].ToString()
		return 0, EnqueueCode(head), u, nil
	case len(v) == 1 && head == 0:
		return 0, 0, "", ErrWorkflowExists
	case len(v) == 1 && head == -2:
		return 0, Full, "", nil
	}
	return 0, 0, "", unexpected("workflow", v)
}

// NodeState is the state of one node of a workflow.
type NodeState struct {
	PlanNode
	// State is WFActive, WFSucceeded, WFFailed, WFCancelled, WFSkipped, or
	// 0 while pending.
	State  byte
	TaskID string // a task node's task, once started
	Result []byte // nil: none
	Why    string
}

// WorkflowRecord is what a workflow's hash holds.
type WorkflowRecord struct {
	ID, Queue         string
	Status            string
	Created, Finished int64 // Unix ms
	CancelRequested   bool
	Nodes             []NodeState

	nodeCount int    // ListWorkflows: how many nodes its plan has
	rootWhy   string // and its root node's why
}

// Workflow reads workflow ulid; nil when there is none (unknown, expired).
func (q *Queue) Workflow(ctx context.Context, ulid string) (*WorkflowRecord, error) {
	c := q.s.r
	h, err := c.Do(ctx, c.B().Hgetall().Key(q.k.Workflow(ulid)).Build()).AsStrMap()
	if err != nil {
		return nil, err
	}
	if len(h) == 0 || h[WFStatus] == "" {
		return nil, nil
	}
	return workflowOf(q.name, ulid, h), nil
}

// workflowOf parses the hash h of workflow ulid of queue.
func workflowOf(queue, ulid string, h map[string]string) *WorkflowRecord {
	n := atoi(h[WFNodes])
	w := &WorkflowRecord{ID: queue + "-" + ulid, Queue: queue, Status: h[WFStatus], Created: atoi64(h[WFCreated]),
		Finished: atoi64(h[WFFinished]), CancelRequested: h[WFCancel] == "1", Nodes: make([]NodeState, 0, n)}
	for i := range n {
		f := strconv.Itoa(i)
		kind, parent, role, ok := splitKind(h[WFNodeKind+f])
		if !ok {
			break
		}
		ns := NodeState{PlanNode: PlanNode{Kind: kind, Parent: parent, Role: role, OnSuccess: -1, OnComplete: -1}}
		if kind == NodeTask {
			p := strings.Split(h[WFNodeSpec+f], "\n")
			if len(p) == 4 {
				ns.Type, ns.Priority, ns.MaxAttempts = p[0], atoi(p[1]), atoi(p[2])
				ns.Timeout = time.Duration(atoi64(p[3])) * time.Millisecond
			}
			ns.Payload = []byte(h[WFNodePayload+f])
		} else {
			for _, k := range strings.Split(h[WFNodeKids+f], ",") {
				if k != "" {
					ns.Kids = append(ns.Kids, atoi(k))
				}
			}
			if v, ok := h[WFNodeOnOK+f]; ok {
				ns.OnSuccess = atoi(v)
			}
			if v, ok := h[WFNodeOnEnd+f]; ok {
				ns.OnComplete = atoi(v)
			}
		}
		if st := h[WFNodeState+f]; len(st) >= 2 {
			ns.State, ns.TaskID = st[0], st[2:]
		}
		if v, ok := h[WFNodeResult+f]; ok {
			ns.Result = []byte(v)
		}
		ns.Why = h[WFNodeWhy+f]
		w.Nodes = append(w.Nodes, ns)
	}
	return w
}

// splitKind reads a WFNodeKind value.
func splitKind(v string) (kind byte, parent int, role string, ok bool) {
	p := strings.SplitN(v, "|", 3)
	if len(p) != 3 || len(p[0]) != 1 {
		return 0, 0, "", false
	}
	parent = -1
	if p[1] != "-" {
		parent = atoi(p[1])
	}
	return p[0][0], parent, p[2], true
}

// CancelWorkflow runs workflow_cancel.lua: no step of workflow ulid starts
// any more. It returns the workflow's status ("" for none) and, when it is
// RUNNING, the tasks of its active steps, for the caller to cancel.
func (q *Queue) CancelWorkflow(ctx context.Context, ulid string) (status string, active []string, err error) {
	v, err := workflowCancelScript.Exec(ctx, q.s.r, []string{q.k.Workflow(ulid)}, nil).AsStrSlice()
	if err != nil {
		return "", nil, err
	}
	if len(v) == 0 {
		return "", nil, unexpected("workflow_cancel", v)
	}
	return v[0], v[1:], nil
}
