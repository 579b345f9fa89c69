package dtq_test

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/dtq-dev/dtq"
)

// Every time in the JSON of dtq's types is RFC 3339 in UTC with exactly
// three fractional digits, as docs/api.md documents (issue 30: time.Time's
// JSON dropped trailing zeros, "…18.91Z", and wrote a local offset or
// nanoseconds as it found them).
func TestTimesAreFixedWidthMilliseconds(t *testing.T) {
	t.Parallel()
	berlin := time.FixedZone("CET", 3600)
	for _, c := range []struct {
		at   time.Time
		want string
	}{
		{time.Date(2026, 12, 5, 17, 14, 18, 910_000_000, time.UTC), `"2026-12-05T17:14:18.910Z"`},
		{time.Date(2026, 12, 5, 17, 14, 18, 0, time.UTC), `"2026-12-05T17:14:18.000Z"`},
		{time.Date(2026, 12, 5, 18, 14, 18, 7_654_321, berlin), `"2026-12-05T17:14:18.007Z"`},
	} {
		for _, v := range []any{
			&dtq.Task{}, dtq.Execution{}, dtq.TaskProgress{}, dtq.Event{}, dtq.Lease{}, dtq.LimitInfo{},
			dtq.ScopeLimitInfo{}, dtq.ScheduleInfo{}, dtq.Workflow{}, dtq.DeadLetter{}, dtq.WorkerInfo{}, dtq.AuditEntry{},
		} {
			rv := reflect.New(reflect.TypeOf(v)).Elem()
			n := setTimes(rv, c.at, 0)
			raw, err := json.Marshal(rv.Interface())
			if err != nil {
				t.Fatalf("%T: %v", v, err)
			}
			var doc any
			if err := json.Unmarshal(raw, &doc); err != nil {
				t.Fatal(err)
			}
			found := 0
			eachString(doc, func(s string) {
				if _, err := time.Parse(time.RFC3339Nano, s); err == nil {
					found++
					if `"`+s+`"` != c.want {
						t.Errorf("%T: a time of %v is %q, want %s", v, c.at, s, c.want)
					}
				}
			})
			if found != n || n == 0 {
				t.Errorf("%T: set %d times, found %d in %s", v, n, found, raw)
			}
		}
	}
}

// setTimes sets every time.Time reachable from v (through pointers and
// slices it fills, a few levels deep) to at, and returns how many.
func setTimes(v reflect.Value, at time.Time, depth int) int {
	if depth > 3 {
		return 0
	}
	switch {
	case v.Type() == reflect.TypeOf(time.Time{}):
		v.Set(reflect.ValueOf(at))
		return 1
	case v.Kind() == reflect.Pointer && (v.Type().Elem().Kind() == reflect.Struct):
		p := reflect.New(v.Type().Elem())
		n := setTimes(p.Elem(), at, depth+1)
		if n > 0 {
			v.Set(p)
		}
		return n
	case v.Kind() == reflect.Slice && v.Type().Elem().Kind() == reflect.Struct:
		e := reflect.New(v.Type().Elem()).Elem()
		n := setTimes(e, at, depth+1)
		if n > 0 {
			v.Set(reflect.Append(v, e))
		}
		return n
	case v.Kind() == reflect.Struct:
		n := 0
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				n += setTimes(v.Field(i), at, depth)
			}
		}
		return n
	}
	return 0
}

// eachString calls fn with every string in a decoded JSON document.
func eachString(doc any, fn func(string)) {
	switch d := doc.(type) {
	case string:
		fn(d)
	case []any:
		for _, e := range d {
			eachString(e, fn)
		}
	case map[string]any:
		for _, e := range d {
			eachString(e, fn)
		}
	}
}
