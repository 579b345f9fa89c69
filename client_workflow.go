package dtq

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"time"
	"unicode/utf8"

	"github.com/dtq-dev/dtq/internal/store"
	"github.com/dtq-dev/dtq/internal/taskid"
)

// EnqueueWorkflow submits the workflow root in one atomic step: its plan
// and the tasks that can start now are all written, or nothing is (an
// error). Every task runs in opts.Queue. The script that records a task's
// end starts what follows it in the same atomic step, so a callback is
// enqueued exactly once whatever crashes. It returns the workflow as
// submitted; a full queue (Config.MaxDepth counts every task of the
// workflow) is a *QueueFullError.
func (c *Client) EnqueueWorkflow(ctx context.Context, root Node, opts *WorkflowOpts) (*Workflow, error) {
	var o WorkflowOpts
	if opts != nil {
		o = *opts
	}
	queue := DefaultQueue
	if o.Queue != "" {
		queue = o.Queue
	}
	if err := checkQueue("queue", queue); err != nil {
		return nil, err
	}
	if len(o.IdempotencyKey) > MaxIdempotencyKey || !utf8.ValidString(o.IdempotencyKey) {
		return nil, invalid("idempotency_key", "must be valid UTF-8 of at most %d bytes", MaxIdempotencyKey)
	}
	p := &planner{c: c, queue: queue}
	if _, err := p.add(&root, "root", -1, "", 0); err != nil {
		return nil, err
	}
	q := c.queue(queue)
	if err := c.register(ctx, q); err != nil {
		return nil, err
	}
	id := taskid.New(queue, time.Now())
	_, ulid, _ := taskid.Parse(id)
	ctx, span := c.startEnqueueSpan(ctx, "workflow", queue)
	defer span.End()
	sub := store.WorkflowSubmission{ULID: ulid, MaxDepth: c.maxDepth(queue), Retention: c.keepOthers(), Durability: c.durability(),
		IdemWindow: c.cfg.IdempotencyWindow, Trace: traceparentOf(ctx)}
	if o.IdempotencyKey != "" {
		sum := sha256.Sum256([]byte("workflow\x00" + o.IdempotencyKey))
		sub.IdemHash = hex.EncodeToString(sum[:])
	}
	_, code, first, err := q.store.SubmitWorkflow(ctx, sub, p.nodes)
	var nre *store.NotReplicatedError
	switch {
	case errors.As(err, &nre):
		// Written on the master, not known to be on enough replicas.
		return nil, fmt.Errorf("%w: workflow %s: %d of %d replicas within %v", ErrNotReplicated, id, nre.Got, nre.Want, nre.Timeout)
	case err != nil:
		c.redisError("workflow", err)
		return nil, err
	case code == store.Full:
		return nil, &QueueFullError{Queue: queue, MaxDepth: c.maxDepth(queue), RetryAfter: time.Second}
	case code == store.Conflict:
		return nil, &IdempotencyConflictError{Key: o.IdempotencyKey, TaskID: queue + "-" + first}
	case code == store.Replay:
		w, err := c.GetWorkflow(ctx, queue+"-"+first)
		if errors.Is(err, ErrWorkflowNotFound) {
			return &Workflow{ID: queue + "-" + first, Queue: queue, Duplicate: true}, nil
		}
		if err != nil {
			return nil, err
		}
		w.Duplicate = true
		return w, nil
	}
	c.audit(ctx, auditWorkflow, queue, id, fmt.Sprintf("%d nodes", len(p.nodes)))
	w, err := c.GetWorkflow(ctx, id)
	if errors.Is(err, ErrWorkflowNotFound) {
		// It ran and expired already (a retention shorter than this call):
		// it was submitted all the same.
		return &Workflow{ID: id, Queue: queue}, nil
	}
	return w, err
}

// GetWorkflow returns workflow id: its structure, each node's state and
// its progress. A finished workflow is kept for the retention of finished
// tasks (a succeeded one is deleted at once when succeeded tasks are not
// kept); then it is ErrWorkflowNotFound.
func (c *Client) GetWorkflow(ctx context.Context, id string) (*Workflow, error) {
	queue, ulid, err := taskid.Parse(id)
	if err != nil {
		return nil, ErrWorkflowNotFound
	}
	r, err := c.queue(queue).store.Workflow(ctx, ulid)
	if err != nil {
		return nil, err
	}
	if r == nil {
		return nil, ErrWorkflowNotFound
	}
	return workflowOf(r), nil
}

// CancelWorkflow cancels workflow id: no node of it starts any more (each
// ends CANCELLED when its turn comes), and the tasks of its active nodes
// are cancelled (Cancel: a RUNNING one ends CANCELLED when its handler
// returns). A finished workflow is left as it is and returned.
func (c *Client) CancelWorkflow(ctx context.Context, id string) (*Workflow, error) {
	queue, ulid, err := taskid.Parse(id)
	if err != nil {
		return nil, ErrWorkflowNotFound
	}
	status, active, err := c.queue(queue).store.CancelWorkflow(ctx, ulid)
	if err != nil {
		return nil, err
	}
	if status == "" {
		return nil, ErrWorkflowNotFound
	}
	for _, t := range active {
		if _, err := c.Cancel(ctx, t); err != nil && !errors.Is(err, ErrNotFound) && !errors.Is(err, ErrNotCancellable) {
			return nil, err
		}
	}
	if status == string(WorkflowRunning) {
		c.audit(ctx, auditCancelWorkflow, queue, id, fmt.Sprintf("%d active nodes", len(active)))
	}
	w, err := c.GetWorkflow(ctx, id)
	if errors.Is(err, ErrWorkflowNotFound) {
		return nil, err
	}
	return w, err
}
