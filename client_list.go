package dtq

import (
	"context"
	"errors"

	"github.com/dtq-dev/dtq/internal/store"
)

// ListOpts selects tasks for Client.List.
type ListOpts struct {
	Queue  string // required
	Status Status // "" for any
	Type   string // "" for any
	// Limit is the page size, 1-500. Defaults to 50.
	Limit int
	// Cursor continues after a previous page ("" for the first page).
	Cursor string
}

// TaskPage is one page of List.
type TaskPage struct {
	Tasks []*Task `json:"tasks"`
	// Next is the cursor of the next page; "" when there are no more.
	Next string `json:"next_cursor"`
}

// List returns a page of tasks of a queue, optionally of one status and
// type. Tasks come in this order: those in the queue's priority bands —
// RUNNING and QUEUED, priority 9 first and oldest first within a priority,
// the order they run in —, then SCHEDULED ones (earliest due first), DEAD
// ones in the dead-letter stream (newest first), then finished ones (most
// recently finished first; listed until they expire). A filter that skips
// most tasks may return a short page with a cursor to continue.
func (c *Client) List(ctx context.Context, o ListOpts) (*TaskPage, error) {
	if err := checkQueue("queue", o.Queue); err != nil {
		return nil, err
	}
	if o.Status != "" && !o.Status.valid() {
		return nil, invalid("status", "must be one of QUEUED, SCHEDULED, RUNNING, SUCCEEDED, DEAD, CANCELLED (got %q)", o.Status)
	}
	switch {
	case o.Limit < 0 || o.Limit > 500:
		return nil, invalid("limit", "must be 1-500 (got %d)", o.Limit)
	case o.Limit == 0:
		o.Limit = 50
	}
	rs, next, err := c.store.Queue(o.Queue).List(ctx, store.ListQuery{Status: string(o.Status), Type: o.Type, Limit: o.Limit, Cursor: o.Cursor})
	if errors.Is(err, store.ErrBadCursor) {
		return nil, invalid("cursor", "is not a cursor from a previous page")
	}
	if err != nil {
		return nil, err
	}
	page := &TaskPage{Tasks: make([]*Task, len(rs)), Next: next}
	for i, r := range rs {
		page.Tasks[i] = taskOf(r)
	}
	return page, nil
}
