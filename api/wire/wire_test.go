package wire_test

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/dtq-dev/dtq/api/wire"
)

// A Time is written in UTC with exactly three fractional digits and read
// from any RFC 3339 time; null leaves it as it is.
func TestTimeJSON(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 12, 5, 18, 14, 18, 910_456_789, time.FixedZone("CET", 3600))
	b, err := json.Marshal(wire.Time(at))
	if err != nil || string(b) != `"2026-12-05T17:14:18.910Z"` {
		t.Fatalf("Marshal: %s, %v", b, err)
	}
	for _, in := range []string{`"2026-12-05T17:14:18.910Z"`, `"2026-12-05T18:14:18.91+01:00"`} {
		var got wire.Time
		if err := json.Unmarshal([]byte(in), &got); err != nil || !time.Time(got).Equal(at.Truncate(time.Millisecond)) {
			t.Errorf("Unmarshal(%s): %v, %v", in, time.Time(got), err)
		}
	}
	kept := wire.Time(at)
	if err := json.Unmarshal([]byte(`null`), &kept); err != nil || !time.Time(kept).Equal(at) {
		t.Errorf("Unmarshal(null): %v, %v", time.Time(kept), err)
	}
	var p *wire.Time
	if err := json.Unmarshal([]byte(`null`), &p); err != nil || p != nil {
		t.Errorf("Unmarshal(null) into a *Time: %v, %v", p, err)
	}
	for _, in := range []string{`"yesterday"`, `17`, `"2026-12-05"`} {
		var got wire.Time
		if err := json.Unmarshal([]byte(in), &got); err == nil {
			t.Errorf("Unmarshal(%s) = %v, want an error", in, time.Time(got))
		}
	}
}

// A client reads an answer of the API into its wire type, and an error
// answer into Error.
func Example() {
	answer := `{"id":"default-01JB8X6Q2R3M7ZC9Y5F4K0N1TW","queue":"default","task_type":"email.send","payload":{"to":"a@example.com"},` +
		`"priority":5,"status":"QUEUED","attempt":0,"max_attempts":25,"crashes":0,"history":[],"timeout_seconds":1800,` +
		`"created_at":"2026-12-05T17:14:18.910Z"}`
	var task wire.Task
	if err := json.Unmarshal([]byte(answer), &task); err != nil {
		panic(err)
	}
	fmt.Println(task.ID, task.TaskType, task.Status, time.Time(task.CreatedAt).Format(time.Kitchen))

	var e wire.Error
	if err := json.Unmarshal([]byte(`{"error":{"code":"not_found","message":"no such task"}}`), &e); err != nil {
		panic(err)
	}
	fmt.Println(e.Error.Code == wire.CodeNotFound, e.Error.Message)

	body, _ := json.Marshal(wire.GroupRequest{Weight: new(3)})
	fmt.Println(string(body))
	// Output:
	// default-01JB8X6Q2R3M7ZC9Y5F4K0N1TW email.send QUEUED 5:14PM
	// true no such task
	// {"weight":3}
}
