package dtq

import (
	"encoding/json"

	"github.com/dtq-dev/dtq/internal/wiretime"
)

// TimeFormat is the layout of every time in the JSON of dtq's types and
// of its HTTP API: RFC 3339 in UTC with exactly three fractional digits,
// "2026-12-05T17:14:18.910Z" (time.Time's own JSON drops trailing zeros,
// "…18.91Z", and the fraction of a whole second). Times are the Redis
// clock's milliseconds; a finer time is truncated to the millisecond.
const TimeFormat = wiretime.Layout

// MarshalJSON encodes e with its times in TimeFormat.
func (e Execution) MarshalJSON() ([]byte, error) {
	type plain Execution
	return json.Marshal(struct {
		plain
		StartedAt  wiretime.Time `json:"started_at"`
		FinishedAt wiretime.Time `json:"finished_at"`
	}{plain(e), wiretime.Time(e.StartedAt), wiretime.Time(e.FinishedAt)})
}

// MarshalJSON encodes p with its time in TimeFormat.
func (p TaskProgress) MarshalJSON() ([]byte, error) {
	type plain TaskProgress
	return json.Marshal(struct {
		plain
		At wiretime.Time `json:"at"`
	}{plain(p), wiretime.Time(p.At)})
}

// MarshalJSON encodes s with its time in TimeFormat.
func (s TaskStep) MarshalJSON() ([]byte, error) {
	type plain TaskStep
	return json.Marshal(struct {
		plain
		At wiretime.Time `json:"at"`
	}{plain(s), wiretime.Time(s.At)})
}

// MarshalJSON encodes s with its time in TimeFormat.
func (s Suspension) MarshalJSON() ([]byte, error) {
	type plain Suspension
	return json.Marshal(struct {
		plain
		Until wiretime.Time `json:"until"`
	}{plain(s), wiretime.Time(s.Until)})
}

// MarshalJSON encodes e with its time in TimeFormat.
func (e Event) MarshalJSON() ([]byte, error) {
	type plain Event
	return json.Marshal(struct {
		plain
		Time wiretime.Time `json:"time"`
	}{plain(e), wiretime.Time(e.Time)})
}

// MarshalJSON encodes l with its deadline in TimeFormat.
func (l Lease) MarshalJSON() ([]byte, error) {
	type plain Lease
	return json.Marshal(struct {
		plain
		Deadline wiretime.Time `json:"deadline"`
	}{plain(l), wiretime.Time(l.Deadline)})
}

// MarshalJSON encodes l with its time in TimeFormat.
func (l LimitInfo) MarshalJSON() ([]byte, error) {
	type plain LimitInfo
	return json.Marshal(struct {
		plain
		PausedUntil *wiretime.Time `json:"paused_until,omitempty"`
	}{plain(l), wiretime.Ptr(l.PausedUntil)})
}

// MarshalJSON encodes s with its time in TimeFormat.
func (s ScopeLimitInfo) MarshalJSON() ([]byte, error) {
	type plain ScopeLimitInfo
	return json.Marshal(struct {
		plain
		PausedUntil *wiretime.Time `json:"paused_until,omitempty"`
	}{plain(s), wiretime.Ptr(s.PausedUntil)})
}

// MarshalJSON encodes s with its times in TimeFormat.
func (s ScheduleInfo) MarshalJSON() ([]byte, error) {
	type plain ScheduleInfo
	return json.Marshal(struct {
		plain
		CreatedAt wiretime.Time  `json:"created_at"`
		UpdatedAt wiretime.Time  `json:"updated_at"`
		NextRun   *wiretime.Time `json:"next_run,omitempty"`
		LastTick  *wiretime.Time `json:"last_tick,omitempty"`
	}{plain(s), wiretime.Time(s.CreatedAt), wiretime.Time(s.UpdatedAt), wiretime.Ptr(s.NextRun), wiretime.Ptr(s.LastTick)})
}

// MarshalJSON encodes w with its times in TimeFormat.
func (w Workflow) MarshalJSON() ([]byte, error) {
	type plain Workflow
	return json.Marshal(struct {
		plain
		CreatedAt  wiretime.Time  `json:"created_at"`
		FinishedAt *wiretime.Time `json:"finished_at,omitempty"`
	}{plain(w), wiretime.Time(w.CreatedAt), wiretime.Ptr(w.FinishedAt)})
}

// MarshalJSON encodes d with its time in TimeFormat.
func (d DeadLetter) MarshalJSON() ([]byte, error) {
	type plain DeadLetter
	return json.Marshal(struct {
		plain
		DeadAt wiretime.Time `json:"dead_at"`
	}{plain(d), wiretime.Time(d.DeadAt)})
}

// MarshalJSON encodes w with its times in TimeFormat.
func (w WorkerInfo) MarshalJSON() ([]byte, error) {
	type plain WorkerInfo
	return json.Marshal(struct {
		plain
		StartedAt     wiretime.Time `json:"started_at"`
		LastHeartbeat wiretime.Time `json:"last_heartbeat"`
	}{plain(w), wiretime.Time(w.StartedAt), wiretime.Time(w.LastHeartbeat)})
}

// MarshalJSON encodes e with its time in TimeFormat.
func (e AuditEntry) MarshalJSON() ([]byte, error) {
	type plain AuditEntry
	return json.Marshal(struct {
		plain
		Time wiretime.Time `json:"time"`
	}{plain(e), wiretime.Time(e.Time)})
}
