package store

import (
	"context"
	"reflect"
	"testing"

	"github.com/dtq-dev/dtq/internal/redistest"
	"github.com/dtq-dev/dtq/internal/script"
)

// parseRecord reads what lib.lua's pack_record writes, strings with the
// separator in them included, on both backends.
func TestPackedRecordRoundTrip(t *testing.T) {
	t.Parallel()
	pack := script.New("pack", libSource, `return pack_record(ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5], ARGV[6], ARGV[7],
  ARGV[8], ARGV[9], ARGV[10], ARGV[11], ARGV[12], ARGV[13], ARGV[14], ARGV[15], ARGV[16])`)
	redistest.ForEachBackend(t, func(t *testing.T, b *redistest.Backend) {
		for _, c := range []struct {
			args []string
			want Record
		}{
			{[]string{"SUCCEEDED", "5", "10", "60000", "1000", "1001", "1002", "1", "1", "0", "w|1", "send|mail", `{"a":"|"}`, "", "", `{"p":"||"}`},
				Record{Status: StatusSucceeded, Priority: 5, MaxAttempts: 10, Timeout: 60000 * 1e6, Created: 1000, Started: 1001,
					Run: 1, Attempt: 1, Worker: "w|1", Type: "send|mail", Result: []byte(`{"a":"|"}`), Payload: []byte(`{"p":"||"}`),
					History: []Execution{{Run: 1, Started: 1001, Finished: 1002, Worker: "w|1", Outcome: "ok"}}}},
			{[]string{"CANCELLED", "0", "3", "1", "7", "8", "9", "2", "1", "0", "w", "t", "", "cancelled", "ab12", "null"},
				Record{Status: StatusCancelled, MaxAttempts: 3, Timeout: 1e6, Created: 7, Started: 8, Run: 2, Attempt: 1,
					Worker: "w", Type: "t", Error: "cancelled", Idem: "ab12", Payload: []byte("null"),
					History: []Execution{{Run: 2, Started: 8, Finished: 9, Worker: "w", Outcome: "cancel", Error: "cancelled"}}}},
		} {
			v, err := pack.Exec(context.Background(), b.Client, nil, c.args).ToString()
			if err != nil {
				t.Fatal(err)
			}
			got := parseRecord("q-x", "q", v)
			c.want.ID, c.want.Queue = "q-x", "q"
			if got == nil || !reflect.DeepEqual(*got, c.want) {
				t.Errorf("parseRecord(%q) = %+v, want %+v", v, got, c.want)
			}
		}
	})
}
