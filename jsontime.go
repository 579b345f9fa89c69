package dtq

import (
	"encoding/json"
	"time"
)

// TimeFormat is the layout of every time in the JSON of dtq's types and
// of its HTTP API: RFC 3339 in UTC with exactly three fractional digits,
// "2026-12-05T17:14:18.910Z" (time.Time's own JSON drops trailing zeros,
// "…18.91Z", and the fraction of a whole second). Times are the Redis
// clock's milliseconds; a finer time is truncated to the millisecond.
const TimeFormat = "2006-01-02T15:04:05.000Z07:00"

// jsonTime is a time.Time whose JSON is TimeFormat in UTC.
type jsonTime time.Time

// MarshalJSON writes t as a JSON string in TimeFormat.
func (t jsonTime) MarshalJSON() ([]byte, error) {
	tt := time.Time(t).UTC()
	if y := tt.Year(); y < 0 || y > 9999 {
		return json.Marshal(time.Time(t)) // time.Time's error for a year RFC 3339 cannot write
	}
	b := make([]byte, 0, len(TimeFormat)+2)
	b = append(b, '"')
	b = tt.AppendFormat(b, TimeFormat)
	return append(b, '"'), nil
}

// jsonTimePtr is t as a *jsonTime (nil for nil).
func jsonTimePtr(t *time.Time) *jsonTime {
	if t == nil {
		return nil
	}
	j := jsonTime(*t)
	return &j
}

// MarshalJSON encodes e with its times in TimeFormat.
func (e Execution) MarshalJSON() ([]byte, error) {
	type plain Execution
	return json.Marshal(struct {
		plain
		StartedAt  jsonTime `json:"started_at"`
		FinishedAt jsonTime `json:"finished_at"`
	}{plain(e), jsonTime(e.StartedAt), jsonTime(e.FinishedAt)})
}

// MarshalJSON encodes p with its time in TimeFormat.
func (p TaskProgress) MarshalJSON() ([]byte, error) {
	type plain TaskProgress
	return json.Marshal(struct {
		plain
		At jsonTime `json:"at"`
	}{plain(p), jsonTime(p.At)})
}

// MarshalJSON encodes e with its time in TimeFormat.
func (e Event) MarshalJSON() ([]byte, error) {
	type plain Event
	return json.Marshal(struct {
		plain
		Time jsonTime `json:"time"`
	}{plain(e), jsonTime(e.Time)})
}

// MarshalJSON encodes l with its deadline in TimeFormat.
func (l Lease) MarshalJSON() ([]byte, error) {
	type plain Lease
	return json.Marshal(struct {
		plain
		Deadline jsonTime `json:"deadline"`
	}{plain(l), jsonTime(l.Deadline)})
}

// MarshalJSON encodes l with its time in TimeFormat.
func (l LimitInfo) MarshalJSON() ([]byte, error) {
	type plain LimitInfo
	return json.Marshal(struct {
		plain
		PausedUntil *jsonTime `json:"paused_until,omitempty"`
	}{plain(l), jsonTimePtr(l.PausedUntil)})
}

// MarshalJSON encodes s with its time in TimeFormat.
func (s ScopeLimitInfo) MarshalJSON() ([]byte, error) {
	type plain ScopeLimitInfo
	return json.Marshal(struct {
		plain
		PausedUntil *jsonTime `json:"paused_until,omitempty"`
	}{plain(s), jsonTimePtr(s.PausedUntil)})
}

// MarshalJSON encodes s with its times in TimeFormat.
func (s ScheduleInfo) MarshalJSON() ([]byte, error) {
	type plain ScheduleInfo
	return json.Marshal(struct {
		plain
		CreatedAt jsonTime  `json:"created_at"`
		UpdatedAt jsonTime  `json:"updated_at"`
		NextRun   *jsonTime `json:"next_run,omitempty"`
		LastTick  *jsonTime `json:"last_tick,omitempty"`
	}{plain(s), jsonTime(s.CreatedAt), jsonTime(s.UpdatedAt), jsonTimePtr(s.NextRun), jsonTimePtr(s.LastTick)})
}

// MarshalJSON encodes w with its times in TimeFormat.
func (w Workflow) MarshalJSON() ([]byte, error) {
	type plain Workflow
	return json.Marshal(struct {
		plain
		CreatedAt  jsonTime  `json:"created_at"`
		FinishedAt *jsonTime `json:"finished_at,omitempty"`
	}{plain(w), jsonTime(w.CreatedAt), jsonTimePtr(w.FinishedAt)})
}

// MarshalJSON encodes d with its time in TimeFormat.
func (d DeadLetter) MarshalJSON() ([]byte, error) {
	type plain DeadLetter
	return json.Marshal(struct {
		plain
		DeadAt jsonTime `json:"dead_at"`
	}{plain(d), jsonTime(d.DeadAt)})
}

// MarshalJSON encodes w with its times in TimeFormat.
func (w WorkerInfo) MarshalJSON() ([]byte, error) {
	type plain WorkerInfo
	return json.Marshal(struct {
		plain
		StartedAt     jsonTime `json:"started_at"`
		LastHeartbeat jsonTime `json:"last_heartbeat"`
	}{plain(w), jsonTime(w.StartedAt), jsonTime(w.LastHeartbeat)})
}

// MarshalJSON encodes e with its time in TimeFormat.
func (e AuditEntry) MarshalJSON() ([]byte, error) {
	type plain AuditEntry
	return json.Marshal(struct {
		plain
		Time jsonTime `json:"time"`
	}{plain(e), jsonTime(e.Time)})
}
