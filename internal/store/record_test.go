package store

import (
	"context"
	"testing"
	"time"

	"github.com/dtq-dev/dtq/internal/redistest"
)

// A task born as its entry that finishes in its first execution gets a
// packed record — made partly here, partly by finish.lua — which reads back
// whole, strings with the separator in them included, on both backends.
func TestPackedRecordRoundTrip(t *testing.T) {
	t.Parallel()
	redistest.ForEachBackend(t, func(t *testing.T, b *redistest.Backend) {
		ctx := context.Background()
		q := New(b.Client, b.Namespace).Queue("q")
		worker := "w|1"
		const traceparent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
		for _, c := range []struct {
			outcome      Outcome
			text, status string
			trace        string
		}{{OutcomeOK, `{"a":"|"}`, StatusSucceeded, ""}, {OutcomeCancel, "cancelled", StatusCancelled, ""},
			{OutcomeOK, `{"a":"|"}`, StatusSucceeded, traceparent}, {OutcomeCancel, "cancelled", StatusCancelled, traceparent}} {
			res, err := q.Enqueue(ctx, EnqueueConfig{}, []EnqueueItem{{Type: "send|mail", Payload: []byte(`{"p":"||"}`),
				Priority: 3, MaxAttempts: 7, Timeout: time.Minute, Trace: c.trace}})
			if err != nil {
				t.Fatal(err)
			}
			r, err := q.Read(ctx, ReadRequest{Consumer: worker, Credit: 1, EnsureGroups: true})
			if err != nil || len(r.Entries) != 1 || !r.Entries[0].Born {
				t.Fatalf("read: %+v %v", r, err)
			}
			e := r.Entries[0]
			st, err := q.Start(ctx, StartConfig{Worker: worker, MaxCrashes: 3, Retention: time.Hour}, r.Entries)
			if err != nil || st[0].Code != Began {
				t.Fatalf("start: %+v %v", st, err)
			}
			out, err := q.Finish(ctx, FinishConfig{Retention: time.Hour, KeepSucceeded: true, IdemWindow: time.Hour}, worker, []FinishItem{{
				TaskID: e.TaskID, Band: e.Band, EntryID: e.EntryID, Run: st[0].Run, Attempt: st[0].Attempt, Started: st[0].Started,
				Outcome: c.outcome, Text: c.text, Born: e.Spec}})
			if err != nil || out[0] != c.status {
				t.Fatalf("finish: %v %v", out, err)
			}
			got, err := q.s.Get(ctx, res[0].ID)
			if err != nil || got == nil {
				t.Fatalf("get: %+v %v", got, err)
			}
			wantResult, wantErr, wantOutcome := c.text, "", OutcomeOK
			if c.outcome == OutcomeCancel {
				wantResult, wantErr, wantOutcome = "", "cancelled", OutcomeCancel
			}
			if got.Status != c.status || got.Type != "send|mail" || string(got.Payload) != `{"p":"||"}` || got.Priority != 3 ||
				got.MaxAttempts != 7 || got.Timeout != time.Minute || got.Worker != worker || string(got.Result) != wantResult ||
				got.Error != wantErr || got.Run != 1 || got.Attempt != 1 || got.Created != res[0].Created ||
				len(got.History) != 1 || got.History[0].Outcome != wantOutcome || got.History[0].Finished < got.Started ||
				got.Trace != c.trace {
				t.Errorf("record %+v", got)
			}
			// the scripts read a traced task's record (R5) as finished too
			if status, _, err := q.Cancel(ctx, res[0].ID, time.Hour); err != nil || status != c.status {
				t.Errorf("cancel of the finished task (trace %q): %q %v, want %s", c.trace, status, err, c.status)
			}
		}
	})
}

// A finish whose band trim removes nothing (the acknowledged entries wait
// behind an older running task) records its outcome: the count of entries
// left behind is not decremented by "-0", which Redis refuses as no
// integer (a whole finish batch failed so, forever).
func TestFinishWhenTrimRemovesNothing(t *testing.T) {
	t.Parallel()
	redistest.ForEachBackend(t, func(t *testing.T, b *redistest.Backend) {
		ctx := context.Background()
		q := New(b.Client, b.Namespace).Queue("q")
		items := []EnqueueItem{{Type: "t", Payload: []byte("1"), Priority: 5, MaxAttempts: 1, Timeout: time.Minute},
			{Type: "t", Payload: []byte("2"), Priority: 5, MaxAttempts: 1, Timeout: time.Minute}}
		if _, err := q.Enqueue(ctx, EnqueueConfig{}, items); err != nil {
			t.Fatal(err)
		}
		r, err := q.Read(ctx, ReadRequest{Consumer: "w", Credit: 2, EnsureGroups: true})
		if err != nil || len(r.Entries) != 2 {
			t.Fatalf("read: %+v %v", r, err)
		}
		st, err := q.Start(ctx, StartConfig{Worker: "w", MaxCrashes: 3, Retention: time.Hour}, r.Entries)
		if err != nil {
			t.Fatal(err)
		}
		// 127 acknowledged entries already wait: this finish makes 128 and
		// trims, behind the older task still running.
		if err := b.Client.Do(ctx, b.Client.B().Hset().Key(q.k.Info()).FieldValue().FieldValue(InfoBehind+"5", "127").Build()).Error(); err != nil {
			t.Fatal(err)
		}
		e := r.Entries[1]
		out, err := q.Finish(ctx, FinishConfig{Retention: time.Hour, KeepSucceeded: true, IdemWindow: time.Hour}, "w", []FinishItem{{
			TaskID: e.TaskID, Band: e.Band, EntryID: e.EntryID, Run: st[1].Run, Attempt: st[1].Attempt, Started: st[1].Started,
			Outcome: OutcomeOK, Text: "1", Born: e.Spec}})
		if err != nil || out[0] != StatusSucceeded {
			t.Fatalf("finish: %v %v", out, err)
		}
	})
}
