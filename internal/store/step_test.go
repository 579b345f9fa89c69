package store

import (
	"context"
	"testing"
	"time"

	"github.com/dtq-dev/dtq/internal/redistest"
)

// A step is recorded once: the first record stands against a second of
// the same run, and a run that is not the task's records nothing.
func TestRecordStepOnceAndFenced(t *testing.T) {
	t.Parallel()
	redistest.ForEachBackend(t, func(t *testing.T, b *redistest.Backend) {
		ctx := context.Background()
		q := New(b.Client, b.Namespace).Queue("q")
		if _, err := q.Enqueue(ctx, EnqueueConfig{}, []EnqueueItem{{Type: "t", Payload: []byte("1"), MaxAttempts: 3, Timeout: time.Minute}}); err != nil {
			t.Fatal(err)
		}
		res, err := q.Read(ctx, ReadRequest{Consumer: "w", Credit: 1, EnsureGroups: true})
		if err != nil || len(res.Entries) != 1 {
			t.Fatalf("read: %+v %v", res, err)
		}
		e := res.Entries[0]
		started, err := q.Start(ctx, StartConfig{Worker: "w", MaxCrashes: 3, Retention: time.Hour}, res.Entries)
		if err != nil || started[0].Code != Began {
			t.Fatalf("start: %+v %v", started, err)
		}
		s := started[0]
		ulid := e.TaskID[len(e.TaskID)-26:]
		f := Fence{Run: s.Run, Band: e.Band, EntryID: e.EntryID, Worker: "w", Started: s.Started}
		if code, _, err := q.RecordStep(ctx, Durability{}, ulid, f, "charge", []byte(`"first"`)); err != nil || code != StepRecorded {
			t.Fatalf("first record: %v %v", code, err)
		}
		code, had, err := q.RecordStep(ctx, Durability{}, ulid, f, "charge", []byte(`"second"`))
		if err != nil || code != StepHad || string(had.Result) != `"first"` || had.Run != s.Run {
			t.Fatalf("second record: %v %+v %v, want StepHad with the first", code, had, err)
		}
		stale := f
		stale.Run = s.Run + 1
		if code, _, err := q.RecordStep(ctx, Durability{}, ulid, stale, "other", []byte(`1`)); err != nil || code != StepStale {
			t.Fatalf("a record of another run: %v %v, want StepStale", code, err)
		}
		recs, err := q.Steps(ctx, ulid)
		if err != nil || len(recs) != 1 || string(recs["charge"].Result) != `"first"` {
			t.Fatalf("records %+v %v, want charge only", recs, err)
		}
	})
}
