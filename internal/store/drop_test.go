package store

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/dtq-dev/dtq/internal/redistest"
)

// The sweep after a drop keeps what a submission made since the drop: a
// scheduled task's hash and idempotency record, a born task's idempotency
// record; it deletes the same kinds of record made before.
func TestDropSweepKeepsWhatCameAfter(t *testing.T) {
	t.Parallel()
	redistest.ForEachBackend(t, func(t *testing.T, b *redistest.Backend) {
		ctx := context.Background()
		q := New(b.Client, b.Namespace).Queue("q")
		submit := func(idem string) []EnqueueResult {
			t.Helper()
			res, err := q.Enqueue(ctx, EnqueueConfig{IdemWindow: time.Hour}, []EnqueueItem{
				{Type: "t", Payload: []byte("1"), MaxAttempts: 1, Timeout: time.Minute, IdemHash: strings.Repeat(idem, 64), Fingerprint: "f"},
				{Type: "t", Payload: []byte("1"), MaxAttempts: 1, Timeout: time.Minute, Delay: time.Hour, IdemHash: strings.Repeat(idem+"1", 32), Fingerprint: "f"},
			})
			if err != nil {
				t.Fatal(err)
			}
			return res
		}
		submit("a")
		dropped := redisMillis(t, b)
		for redisMillis(t, b) == dropped { // the next submission is a later millisecond
			time.Sleep(time.Millisecond)
		}
		if _, _, err := q.Drop(ctx, true); err != nil { // deletes the first two
			t.Fatal(err)
		}
		submit("b")
		if err := q.sweepDropped(ctx, dropped); err != nil {
			t.Fatal(err)
		}
		ks, err := b.Client.Do(ctx, b.Client.B().Keys().Pattern(q.k.prefix+"*").Build()).AsStrSlice()
		if err != nil {
			t.Fatal(err)
		}
		var records []string
		for _, k := range ks {
			if strings.Contains(k, ":task:") || strings.Contains(k, ":idem:") {
				records = append(records, k)
			}
		}
		want := map[string]bool{q.k.Idempotency(strings.Repeat("b", 64)): true, q.k.Idempotency(strings.Repeat("b1", 32)): true}
		if len(records) != 3 || !want[records[0]] && !want[records[1]] {
			t.Fatalf("records after the sweep: %v (want the second submission's two idempotency records and its scheduled task)", records)
		}
		for k := range want {
			if n, _ := b.Client.Do(ctx, b.Client.B().Exists().Key(k).Build()).AsInt64(); n != 1 {
				t.Fatalf("%s was swept", k)
			}
		}
	})
}

func redisMillis(t *testing.T, b *redistest.Backend) int64 {
	t.Helper()
	tm, err := b.Client.Do(context.Background(), b.Client.B().Time().Build()).AsIntSlice()
	if err != nil {
		t.Fatal(err)
	}
	return tm[0]*1000 + tm[1]/1000
}
