package wire

import "encoding/json"

// ScheduleBody is the body of PUT /api/v1/schedules/{queue}/{name}: the
// schedule, its name and queue given by the path. Cron and TaskType are
// required.
type ScheduleBody struct {
	Cron     *string         `json:"cron"`
	TimeZone string          `json:"time_zone,omitempty"`
	TaskType *string         `json:"task_type"`
	Payload  json.RawMessage `json:"payload,omitempty"`
	// Priority, MaxAttempts and CatchUpMax are integers, TimeoutSeconds a
	// number.
	Priority       json.RawMessage `json:"priority,omitempty"`
	MaxAttempts    json.RawMessage `json:"max_attempts,omitempty"`
	TimeoutSeconds json.RawMessage `json:"timeout_seconds,omitempty"`
	// Missed is skip or catch_up.
	Missed     string          `json:"missed,omitempty"`
	CatchUpMax json.RawMessage `json:"catch_up_max,omitempty"`
	Paused     bool            `json:"paused,omitempty"`
}

// Schedule is a schedule as the API answers it.
type Schedule struct {
	Name           string          `json:"name"`
	Queue          string          `json:"queue"`
	Cron           string          `json:"cron"`
	TimeZone       string          `json:"time_zone"`
	TaskType       string          `json:"task_type"`
	Payload        json.RawMessage `json:"payload"`
	Priority       int             `json:"priority"`
	MaxAttempts    int             `json:"max_attempts"`
	TimeoutSeconds float64         `json:"timeout_seconds"`
	Missed         string          `json:"missed"`
	CatchUpMax     int             `json:"catch_up_max"`
	Paused         bool            `json:"paused"`
	CreatedAt      Time            `json:"created_at"`
	UpdatedAt      Time            `json:"updated_at"`
	// NextRun is unset while paused; LastTick and LastTaskID before the
	// first tick fired.
	NextRun    *Time  `json:"next_run,omitempty"`
	LastTick   *Time  `json:"last_tick,omitempty"`
	LastTaskID string `json:"last_task_id,omitempty"`
}

// ScheduleList is the answer of GET /api/v1/schedules.
type ScheduleList struct {
	Schedules []Schedule `json:"schedules"`
}

// ScheduleDeleted is the answer of DELETE
// /api/v1/schedules/{queue}/{name}.
type ScheduleDeleted struct {
	Deleted string `json:"deleted"` // the schedule's name
}
