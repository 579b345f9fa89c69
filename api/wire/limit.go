package wire

import "encoding/json"

// LimitRequest is the body of PUT /api/v1/limits/{queue} (and of a task
// type's or limit key's limits): the limits, replacing those it had (a
// limit left out is removed). At least MaxRunning or Rate; PerSeconds and
// Burst go with Rate.
type LimitRequest struct {
	MaxRunning *int64 `json:"max_running,omitempty"`
	Rate       *int64 `json:"rate,omitempty"`
	// PerSeconds is a number of seconds (1 when left out).
	PerSeconds json.RawMessage `json:"per_seconds,omitempty"`
	Burst      *int64          `json:"burst,omitempty"`
	// OnFull is what a start does when the concurrency limit is full (a
	// task type's or limit key's limits): "queue" (the default),
	// "cancel_running", "cancel_newest" or "replace_waiting".
	OnFull *string `json:"on_full,omitempty"`
}

// Limit is a queue's limits and their use.
type Limit struct {
	Queue       string  `json:"queue"`
	MaxRunning  int64   `json:"max_running"`
	InUse       int64   `json:"in_use"`
	Rate        int64   `json:"rate,omitempty"`
	PerSeconds  float64 `json:"per_seconds,omitempty"`
	Burst       int64   `json:"burst,omitempty"`
	PausedUntil *Time   `json:"paused_until,omitempty"`
	// Scopes are the limits of its task types and limit keys.
	Scopes []ScopeLimit `json:"scopes,omitempty"`
}

// ScopeLimit is a task type's or limit key's limits in a queue: TaskType
// or LimitKey names it.
type ScopeLimit struct {
	TaskType    string  `json:"task_type,omitempty"`
	LimitKey    string  `json:"limit_key,omitempty"`
	MaxRunning  int64   `json:"max_running"`
	InUse       int64   `json:"in_use"`
	Waiting     int64   `json:"waiting"`
	Rate        int64   `json:"rate,omitempty"`
	PerSeconds  float64 `json:"per_seconds,omitempty"`
	Burst       int64   `json:"burst,omitempty"`
	PausedUntil *Time   `json:"paused_until,omitempty"`
	OnFull      string  `json:"on_full"`
}

// LimitList is the answer of GET /api/v1/limits.
type LimitList struct {
	Limits []Limit `json:"limits"`
}
