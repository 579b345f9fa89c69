package dtq

import (
	"context"
	"errors"
	"time"

	"github.com/dtq-dev/dtq/internal/store"
)

// ListWorkflowsOpts selects workflows for Admin.ListWorkflows.
type ListWorkflowsOpts struct {
	Queue  string         // required
	Status WorkflowStatus // "" for any
	// CreatedAfter and CreatedBefore keep the workflows created in that
	// range, CreatedAfter included (zero: open).
	CreatedAfter, CreatedBefore time.Time
	// Limit is the page size, 1-500. Defaults to 50.
	Limit int
	// Cursor continues after a previous page ("" for the first page).
	Cursor string
}

// WorkflowPage is one page of Admin.ListWorkflows.
type WorkflowPage struct {
	// Workflows are as GetWorkflow returns them without their nodes (Root
	// and Result are nil): status, times, progress and the root's error.
	Workflows []*Workflow `json:"workflows"`
	// Next is the cursor of the next page; "" when there are no more.
	Next string `json:"next_cursor"`
}

// ListWorkflows returns a page of the workflows of a queue, newest first,
// optionally of one status and created in a time range. A workflow is
// listed from its submission until it expires (GetWorkflow). A filter
// that skips most workflows may return a short page with a cursor to
// continue. Each listed workflow's node states are read to count its
// progress (not its payloads or results).
func (a *Admin) ListWorkflows(ctx context.Context, o ListWorkflowsOpts) (*WorkflowPage, error) {
	if err := checkQueue("queue", o.Queue); err != nil {
		return nil, err
	}
	switch o.Status {
	case "", WorkflowRunning, WorkflowSucceeded, WorkflowFailed, WorkflowCancelled:
	default:
		return nil, invalid("status", "must be one of RUNNING, SUCCEEDED, FAILED, CANCELLED (got %q)", o.Status)
	}
	switch {
	case o.Limit < 0 || o.Limit > 500:
		return nil, invalid("limit", "must be 1-500 (got %d)", o.Limit)
	case o.Limit == 0:
		o.Limit = 50
	}
	if !o.CreatedAfter.IsZero() && !o.CreatedBefore.IsZero() && !o.CreatedAfter.Before(o.CreatedBefore) {
		return nil, invalid("created_before", "must be after created_after")
	}
	wq := store.WorkflowQuery{Status: string(o.Status), Limit: o.Limit, Cursor: o.Cursor}
	if !o.CreatedAfter.IsZero() {
		wq.After = max(1, o.CreatedAfter.UnixMilli())
	}
	if !o.CreatedBefore.IsZero() {
		wq.Before = max(1, o.CreatedBefore.UnixMilli())
	}
	rs, next, err := a.store.Queue(o.Queue).ListWorkflows(ctx, wq)
	if errors.Is(err, store.ErrBadCursor) {
		return nil, invalid("cursor", "is not a cursor from a previous page")
	}
	if err != nil {
		return nil, err
	}
	page := &WorkflowPage{Workflows: make([]*Workflow, len(rs)), Next: next}
	for i, r := range rs {
		w := workflowOf(r)
		w.Root, w.Result = nil, nil
		page.Workflows[i] = w
	}
	return page, nil
}
