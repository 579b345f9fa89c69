package api_test

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"

	"github.com/dtq-dev/dtq"
	"github.com/dtq-dev/dtq/api"
)

// TestWireMatchesEngineJSON checks that the API answers an engine value
// with the very bytes the engine's own JSON of it has: each wire type has
// the engine type's properties in the engine's order, and its conversion
// fills every one (and keeps a nil list null, an empty one []). It tries a
// value with every field set and the zero value.
func TestWireMatchesEngineJSON(t *testing.T) {
	t.Parallel()
	for _, zero := range []any{dtq.Task{}, dtq.TaskPage{}, dtq.Event{}, dtq.DeadLetter{}, dtq.QueueStats{},
		dtq.DeletedQueue{}, dtq.GroupInfo{}, dtq.WorkerInfo{}, dtq.AuditEntry{}, dtq.RedriveResult{}, dtq.BulkResult{}, dtq.Lease{},
		dtq.Workflow{}} {
		typ := reflect.TypeOf(zero)
		for _, v := range []any{filled(typ, 0).Addr().Interface(), reflect.New(typ).Interface()} {
			w := api.WireOf(v)
			if w == nil {
				t.Fatalf("%s: no conversion", typ)
			}
			want, err := json.Marshal(v)
			if err != nil {
				t.Fatal(err)
			}
			got, err := json.Marshal(w)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("%s: the API writes\n%s\nthe engine\n%s", typ, got, want)
			}
		}
	}
}
