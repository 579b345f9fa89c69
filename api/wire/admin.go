package wire

import (
	"encoding/json"
	"time"
)

// DeadLetter is a task in its queue's dead-letter stream.
type DeadLetter struct {
	Task   *Task  `json:"task"`
	Reason string `json:"reason"`
	DeadAt Time   `json:"dead_at"`
}

// DeadLetterPage is the answer of GET /api/v1/dlq: newest first, and the
// cursor of the next page ("" after the last).
type DeadLetterPage struct {
	DeadLetters []DeadLetter `json:"dead_letters"`
	NextCursor  string       `json:"next_cursor"`
}

// DiscardedTask is the answer of DELETE /api/v1/dlq/{id}.
type DiscardedTask struct {
	Discarded string `json:"discarded"` // the task's id
}

// DiscardedCount is the answer of DELETE /api/v1/dlq.
type DiscardedCount struct {
	Discarded int `json:"discarded"`
}

// RequeuedCount is the answer of POST /api/v1/dlq/requeue.
type RequeuedCount struct {
	Requeued int `json:"requeued"`
}

// RedriveRequest is the body of POST /api/v1/dlq/redrive: which dead
// letters to requeue, how many and how fast.
type RedriveRequest struct {
	Queue         *string    `json:"queue,omitempty"`
	TaskType      *string    `json:"task_type,omitempty"`
	ErrorContains *string    `json:"error_contains,omitempty"`
	DeadAfter     *time.Time `json:"dead_after,omitempty"`
	DeadBefore    *time.Time `json:"dead_before,omitempty"`
	DryRun        bool       `json:"dry_run"`
	// Limit is an integer, RatePerSecond a number.
	Limit         json.RawMessage `json:"limit,omitempty"`
	RatePerSecond json.RawMessage `json:"rate_per_second,omitempty"`
}

// RedriveResult is the answer of POST /api/v1/dlq/redrive.
type RedriveResult struct {
	Matched  int  `json:"matched"`  // dead letters that matched, up to the limit
	Requeued int  `json:"requeued"` // of those, requeued (0 on a dry run)
	DryRun   bool `json:"dry_run"`
	More     bool `json:"more"` // more match beyond the limit: call again
}

// QueueStats is a queue's counts now (GET /api/v1/queues/{name}) and its
// totals since it was created.
type QueueStats struct {
	Name      string `json:"name"`
	Paused    bool   `json:"paused"`
	Queued    int64  `json:"queued"`
	Scheduled int64  `json:"scheduled"`
	Running   int64  `json:"running"`
	Dead      int64  `json:"dead"`
	// QueuedByPriority[p] counts the queued tasks of priority p.
	QueuedByPriority []int64 `json:"queued_by_priority"`
	GroupWaiting     int64   `json:"group_waiting"`
	LimitWaiting     int64   `json:"limit_waiting"`
	OrderWaiting     int64   `json:"order_waiting"`
	// Suspended counts the SCHEDULED tasks whose execution suspended (a
	// durable sleep, a wait for a signal): part of Scheduled.
	Suspended      int64 `json:"suspended"`
	SubmittedTotal int64 `json:"submitted_total"`
	SucceededTotal int64 `json:"succeeded_total"`
	RetriedTotal   int64 `json:"retried_total"`
	DeadTotal      int64 `json:"dead_total"`
	CancelledTotal int64 `json:"cancelled_total"`
}

// QueueList is the answer of GET /api/v1/queues.
type QueueList struct {
	Queues []QueueStats `json:"queues"`
}

// DeletedQueue is the answer of DELETE /api/v1/queues/{name}: what the
// queue held.
type DeletedQueue struct {
	Queue     string `json:"queue"`
	Queued    int64  `json:"queued"`
	Scheduled int64  `json:"scheduled"`
	Running   int64  `json:"running"`
	Dead      int64  `json:"dead"`
}

// GroupWeight is a queue's group and its weight in fair scheduling.
type GroupWeight struct {
	Group  string `json:"group"`
	Weight int    `json:"weight"`
	// Waiting counts its QUEUED tasks waiting for their turn: set in the
	// list of GET /api/v1/queues/{name}/groups, not in the answer of a PUT
	// or DELETE.
	Waiting *int64 `json:"waiting,omitempty"`
}

// GroupList is the answer of GET /api/v1/queues/{name}/groups.
type GroupList struct {
	Groups []GroupWeight `json:"groups"`
}

// GroupRequest is the body of PUT /api/v1/queues/{name}/groups/{group}.
type GroupRequest struct {
	Weight *int `json:"weight"`
}

// WorkerInfo is a live worker, from its heartbeat.
type WorkerInfo struct {
	ID          string   `json:"id"`
	Host        string   `json:"host"`
	PID         int      `json:"pid"`
	Queues      []string `json:"queues"`
	Concurrency int      `json:"concurrency"`
	Busy        int      `json:"busy"`
	// Kind is "go" (a Go worker) or "http" (a lease holder, "http:<name>");
	// Library what it said it runs on.
	Kind    string `json:"kind"`
	Library string `json:"library,omitempty"`
	// State is what a Go worker says it does: "running", "quiet" or
	// "stopping"; Requested what an admin asked of it: "quiet" or "stop".
	State         string `json:"state,omitempty"`
	Requested     string `json:"requested,omitempty"`
	StartedAt     Time   `json:"started_at"`
	LastHeartbeat Time   `json:"last_heartbeat"`
}

// WorkerControl is the answer of POST /api/v1/workers/{id}/quiet and
// …/stop: what the worker is asked now.
type WorkerControl struct {
	Worker    string `json:"worker"`
	Requested string `json:"requested"`
}

// WorkerList is the answer of GET /api/v1/workers.
type WorkerList struct {
	Workers []WorkerInfo `json:"workers"`
}

// AuditEntry is one admin action.
type AuditEntry struct {
	ID     string `json:"id"`
	Action string `json:"action"`
	Queue  string `json:"queue,omitempty"`
	TaskID string `json:"task_id,omitempty"`
	Detail string `json:"detail,omitempty"`
	Time   Time   `json:"time"`
}

// AuditList is the answer of GET /api/v1/audit, newest first.
type AuditList struct {
	Entries []AuditEntry `json:"entries"`
}
