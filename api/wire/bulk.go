package wire

import (
	"encoding/json"
	"time"
)

// BulkRequest is the body of POST /api/v1/tasks/bulk: an action over the
// tasks of IDs or of Filter (exactly one), how many and how fast.
type BulkRequest struct {
	Action string      `json:"action"`
	IDs    []string    `json:"ids,omitempty"`
	Filter *BulkFilter `json:"filter,omitempty"`
	DryRun bool        `json:"dry_run"`
	// Limit is an integer, RatePerSecond a number.
	Limit         json.RawMessage `json:"limit,omitempty"`
	RatePerSecond json.RawMessage `json:"rate_per_second,omitempty"`
}

// BulkFilter selects the tasks of one queue as GET /api/v1/tasks does.
type BulkFilter struct {
	Queue         *string    `json:"queue,omitempty"`
	Status        *string    `json:"status,omitempty"`
	TaskType      *string    `json:"task_type,omitempty"`
	IDPrefix      *string    `json:"id_prefix,omitempty"`
	ErrorContains *string    `json:"error_contains,omitempty"`
	CreatedAfter  *time.Time `json:"created_after,omitempty"`
	CreatedBefore *time.Time `json:"created_before,omitempty"`
}

// BulkResult is the answer of POST /api/v1/tasks/bulk.
type BulkResult struct {
	Action       string     `json:"action"`
	Matched      int        `json:"matched"`
	Done         int        `json:"done"`
	SkippedCount int        `json:"skipped_count"`
	Skipped      []BulkSkip `json:"skipped"`
	DryRun       bool       `json:"dry_run"`
	More         bool       `json:"more"`
}

// BulkSkip is a task a bulk action did not act on, and why.
type BulkSkip struct {
	ID     string `json:"id"`
	Reason string `json:"reason"`
}
