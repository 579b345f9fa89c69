package dtq

import (
	"context"
	"errors"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/dtq-dev/dtq/internal/store"
)

// ListOpts selects tasks for Client.List.
type ListOpts struct {
	Queue  string // required
	Status Status // "" for any
	Type   string // "" for any
	// Suspended keeps only the suspended tasks (SCHEDULED after their
	// execution suspended: Sleep, WaitFor), earliest due first. With a
	// Status other than SCHEDULED nothing matches.
	Suspended bool
	// IDPrefix keeps the tasks whose id starts with it (a search by id:
	// "default-01M8" or a whole id), at most 128 bytes.
	IDPrefix string
	// ErrorContains keeps the tasks whose last error contains it, in any
	// letter case (at most 256 bytes).
	ErrorContains string
	// CreatedAfter and CreatedBefore keep the tasks created in that range
	// (zero: open).
	CreatedAfter, CreatedBefore time.Time
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
// recently finished first; listed until they expire); Suspended lists only
// suspended tasks, earliest due first. A filter that skips
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
	if len(o.IDPrefix) > 128 || !utf8.ValidString(o.IDPrefix) {
		return nil, invalid("id_prefix", "must be valid UTF-8 of at most 128 bytes")
	}
	if len(o.ErrorContains) > 256 || !utf8.ValidString(o.ErrorContains) {
		return nil, invalid("error_contains", "must be valid UTF-8 of at most 256 bytes")
	}
	if !o.CreatedAfter.IsZero() && !o.CreatedBefore.IsZero() && !o.CreatedAfter.Before(o.CreatedBefore) {
		return nil, invalid("created_before", "must be after created_after")
	}
	lq := store.ListQuery{Status: string(o.Status), Type: o.Type, Suspended: o.Suspended, IDPrefix: o.IDPrefix, ErrorContains: strings.ToLower(o.ErrorContains),
		Limit: o.Limit, Cursor: o.Cursor}
	if !o.CreatedAfter.IsZero() {
		lq.After = o.CreatedAfter.UnixMilli()
	}
	if !o.CreatedBefore.IsZero() {
		lq.Before = o.CreatedBefore.UnixMilli()
	}
	rs, next, err := c.store.Queue(o.Queue).List(ctx, lq)
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
