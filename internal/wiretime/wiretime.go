// Package wiretime is the one JSON form of a time in dtq's answers — the
// engine's types and the HTTP API's own: RFC 3339 in UTC with exactly three
// fractional digits (dtq.TimeFormat).
package wiretime

import (
	"encoding/json"
	"time"
)

// Layout is the time layout of every time dtq writes in JSON.
const Layout = "2006-01-02T15:04:05.000Z07:00"

// Time is a time.Time whose JSON is Layout in UTC.
type Time time.Time

// MarshalJSON writes t as a JSON string in Layout.
func (t Time) MarshalJSON() ([]byte, error) {
	tt := time.Time(t).UTC()
	if y := tt.Year(); y < 0 || y > 9999 {
		return json.Marshal(time.Time(t)) // time.Time's error for a year RFC 3339 cannot write
	}
	b := make([]byte, 0, len(Layout)+2)
	b = append(b, '"')
	b = tt.AppendFormat(b, Layout)
	return append(b, '"'), nil
}

// UnmarshalJSON reads an RFC 3339 time, as time.Time does (any number of
// fractional digits, any offset); null leaves t as it is.
func (t *Time) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		return nil
	}
	var tt time.Time
	if err := tt.UnmarshalJSON(b); err != nil {
		return err
	}
	*t = Time(tt)
	return nil
}

// Ptr is t as a *Time (nil for nil).
func Ptr(t *time.Time) *Time {
	if t == nil {
		return nil
	}
	w := Time(*t)
	return &w
}
