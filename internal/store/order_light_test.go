package store

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/dtq-dev/dtq/internal/redistest"
)

// An ordered task due at once, without a group or a limit key, has no
// hash through its life (Keys.OrderIndex) — and reads as any task does at
// each step: waiting in its key's line (its record its OrderLine value),
// in its band, running, finished (an R7 packed record with its order key),
// cancelled while waiting, retried (its hash made then, its key kept),
// cancelled between its claim and its start (the key passes on at that
// start), and dead (its hash made at its end, the key passed on). Each check fails when a reader does not find it through the
// index, or when a step writes its hash.
func TestOrderKeyLightTasks(t *testing.T) {
	t.Parallel()
	redistest.ForEachBackend(t, func(t *testing.T, b *redistest.Backend) {
		ctx := context.Background()
		q := New(b.Client, b.Namespace).Queue("q")
		ensureGroups(t, q)
		var items []EnqueueItem
		for i := range 6 {
			items = append(items, EnqueueItem{Type: "t", Payload: []byte{'p', byte('0' + i)}, Priority: 4, MaxAttempts: 3,
				Timeout: time.Minute, OrderKey: "k"})
		}
		items[1].Trace = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
		items[1].IdemHash = strings.Repeat("f00d", 16) // (a SHA-256 in hex)
		res, err := q.Enqueue(ctx, EnqueueConfig{IdemWindow: time.Hour}, items)
		if err != nil {
			t.Fatal(err)
		}
		ids := make([]string, len(res))
		for i, r := range res {
			ids[i] = r.ID
		}
		noHash := func(i int) {
			t.Helper()
			n, err := b.Client.Do(ctx, b.Client.B().Exists().Key(q.k.Task(ulidOf(ids[i]))).Build()).AsInt64()
			if err != nil || n != 0 {
				t.Fatalf("task %d has a hash (%d %v)", i, n, err)
			}
		}
		get := func(i int, status string, waiting bool) *Record {
			t.Helper()
			r, err := q.s.Get(ctx, ids[i])
			if err != nil || r == nil {
				t.Fatalf("get %d: %+v %v", i, r, err)
			}
			if r.Status != status || r.OrderWaiting != waiting || r.OrderKey != "k" || string(r.Payload) != string(items[i].Payload) ||
				r.Type != "t" || r.Priority != 4 || r.MaxAttempts != 3 || r.Timeout != time.Minute || r.Created != res[i].Created {
				t.Fatalf("task %d: %+v, want %s (waiting %v) with its submission's fields, created %d", i, r, status, waiting, res[i].Created)
			}
			return r
		}
		for i := range ids {
			noHash(i)
		}
		get(0, StatusQueued, false)
		if r := get(1, StatusQueued, true); r.Trace != items[1].Trace || r.Idem != items[1].IdemHash {
			t.Fatalf("waiter's trace and idempotency hash: %q %q", r.Trace, r.Idem)
		}
		// a signal to a waiter is kept for its wait (dtq.WaitFor)
		if code, status, err := q.Signal(ctx, Durability{}, ids[4], "go", []byte("1")); err != nil || code != SignalRecorded ||
			status != StatusQueued {
			t.Fatalf("signal to a waiter: %q %q %v", code, status, err)
		}
		noHash(4)
		claim := func(i int) (Entry, Started) {
			t.Helper()
			entries, _, err := q.ReadBands(ctx, "w", 10, 0, 0)
			if err != nil || len(entries) != 1 || entries[0].TaskID != ids[i] || !entries[0].Light || entries[0].Spec.OrderKey != "k" {
				t.Fatalf("claim of %d: %+v %v", i, entries, err)
			}
			st, err := q.Start(ctx, StartConfig{Worker: "w", MaxCrashes: 3, Retention: time.Hour, LeaseTTL: time.Minute}, entries)
			if err != nil {
				t.Fatal(err)
			}
			return entries[0], st[0]
		}
		finish := func(e Entry, s Started, o Outcome) string {
			t.Helper()
			out, err := q.Finish(ctx, FinishConfig{Retention: time.Hour, KeepSucceeded: true, IdemWindow: time.Hour}, "w",
				[]FinishItem{{TaskID: e.TaskID, Band: e.Band, EntryID: e.EntryID, Run: s.Run, Outcome: o, RetryDelay: time.Hour,
					Attempt: s.Attempt, Crashes: s.Crashes, Started: s.Started, Born: e.BornSpec(), IdemHash: e.Spec.IdemHash}})
			if err != nil {
				t.Fatal(err)
			}
			return out[0]
		}

		e, s := claim(0)
		if s.Code != Began || s.Run != 1 || s.Attempt != 1 {
			t.Fatalf("start: %+v", s)
		}
		if r := get(0, StatusRunning, false); r.Run != 1 || r.Attempt != 1 {
			t.Fatalf("running: %+v", r)
		}
		noHash(0)
		if got := finish(e, s, OutcomeOK); got != StatusSucceeded {
			t.Fatalf("finish: %s", got)
		}
		get(0, StatusSucceeded, false)
		noHash(0)
		if n, _ := b.Client.Do(ctx, b.Client.B().Hlen().Key(q.k.OrderIndex()).Build()).AsInt64(); n != int64(len(ids)-1) {
			t.Fatalf("index: %d fields, want the %d tasks still in the line", n, len(ids)-1)
		}
		get(1, StatusQueued, false) // handed the key: in its band

		// A waiter cancelled: its record from its line's value.
		if status, _, err := q.Cancel(ctx, ids[2], time.Hour); err != nil || status != StatusCancelled {
			t.Fatalf("cancel of a waiter: %q %v", status, err)
		}
		get(2, StatusCancelled, false)

		// A retry keeps the key: its hash made, SCHEDULED.
		e, s = claim(1)
		if got := finish(e, s, OutcomeRetry); got != StatusScheduled {
			t.Fatalf("retry: %s", got)
		}
		if r := get(1, StatusScheduled, false); r.Trace != items[1].Trace {
			t.Fatalf("retried: %+v", r)
		}
		if line, err := q.OrderKey(ctx, "k", 5); err != nil || line.Holder != ids[1] || line.Waiting != int64(len(ids)-3) { // ids[3:] wait
			t.Fatalf("line after the retry: %+v %v", line, err)
		}
		// cancelled there, it passes the key on
		if status, _, err := q.Cancel(ctx, ids[1], time.Hour); err != nil || status != StatusCancelled {
			t.Fatalf("cancel of the retried: %q %v", status, err)
		}

		// Cancelled between its claim and its start: its start ends it, the
		// key passes on.
		entries, _, err := q.ReadBands(ctx, "w", 10, 0, 0)
		if err != nil || len(entries) != 1 || entries[0].TaskID != ids[3] {
			t.Fatalf("claim of 3: %+v %v", entries, err)
		}
		if status, _, err := q.Cancel(ctx, ids[3], time.Hour); err != nil || status != StatusRunning {
			t.Fatalf("cancel of a claimed task: %q %v", status, err)
		}
		st, err := q.Start(ctx, StartConfig{Worker: "w", MaxCrashes: 3, Retention: time.Hour, LeaseTTL: time.Minute}, entries)
		if err != nil || st[0].Code != Withdrawn {
			t.Fatalf("start of a cancelled claim: %+v %v", st, err)
		}
		get(3, StatusCancelled, false)
		e, s = claim(4)
		if got := finish(e, s, OutcomeCancel); got != StatusCancelled {
			t.Fatalf("finish cancelled: %s", got)
		}
		get(4, StatusCancelled, false)
		noHash(4)
		// Dead in its first run: its hash made at its end, the key passed on.
		e, s = claim(5)
		if got := finish(e, s, OutcomeDead); got != StatusDead {
			t.Fatalf("finish dead: %s", got)
		}
		get(5, StatusDead, false)
		if line, err := q.OrderKey(ctx, "k", 5); err != nil || line.Holder != "" || line.Waiting != 0 {
			t.Fatalf("line at the end: %+v %v", line, err)
		}
		if n, _ := b.Client.Do(ctx, b.Client.B().Hlen().Key(q.k.OrderIndex()).Build()).AsInt64(); n != 0 {
			t.Fatalf("index: %d fields left", n)
		}
	})
}
