package store

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/dtq-dev/dtq/internal/redistest"
)

// OrderKey reads a key's line — holder, first waiters in order, count —
// and OrderKeys lists the keys with a task in flight, without the
// sequence field, each with its holder and count.
func TestOrderKeyLines(t *testing.T) {
	t.Parallel()
	redistest.ForEachBackend(t, func(t *testing.T, b *redistest.Backend) {
		ctx := context.Background()
		q := New(b.Client, b.Namespace).Queue("q")
		var items []EnqueueItem
		for i := range 5 {
			items = append(items, EnqueueItem{Type: "t", Payload: fmt.Appendf(nil, "a%d", i), MaxAttempts: 1, Timeout: time.Minute, OrderKey: "acct-a"})
		}
		items = append(items, EnqueueItem{Type: "t", MaxAttempts: 1, Timeout: time.Minute, OrderKey: "acct-b"})
		res, err := q.Enqueue(ctx, EnqueueConfig{}, items)
		if err != nil {
			t.Fatal(err)
		}
		ids := make([]string, len(res))
		for i, r := range res {
			ids[i] = r.ID
		}
		line, err := q.OrderKey(ctx, "acct-a", 3)
		if err != nil {
			t.Fatal(err)
		}
		if line.Holder != ids[0] || !slices.Equal(line.Next, ids[1:4]) || line.Waiting != 4 {
			t.Errorf("line of acct-a: %+v, want holder %s, next %v, 4 waiting", line, ids[0], ids[1:4])
		}
		line, err = q.OrderKey(ctx, "acct-none", 3)
		if err != nil || line.Holder != "" || len(line.Next) != 0 || line.Waiting != 0 {
			t.Errorf("line of a key without tasks: %+v, %v", line, err)
		}
		var got []OrderKeyState
		for cursor := uint64(0); ; {
			ks, next, err := q.OrderKeys(ctx, cursor, 1)
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, ks...)
			if cursor = next; cursor == 0 {
				break
			}
		}
		slices.SortFunc(got, func(a, b OrderKeyState) int { return strings.Compare(a.Key, b.Key) })
		want := []OrderKeyState{{Key: "acct-a", Holder: ids[0], Waiting: 4}, {Key: "acct-b", Holder: ids[5]}}
		if !slices.Equal(got, want) {
			t.Errorf("keys: %+v, want %+v", got, want)
		}
	})
}

// The call that ends the task holding an order key moves the key's next
// task into its band itself: a finish (succeeded, or cancelled while it
// ran) and a cancel (of a holder QUEUED in its band, or SCHEDULED) — so
// the next read claims it. No scheduler runs here, whose pass would
// otherwise do it (CONTRACT 3.3.2f); each step fails unless order_release
// writes the next task's entry in that call.
func TestOrderKeyPassedByTheEndingCall(t *testing.T) {
	t.Parallel()
	redistest.ForEachBackend(t, func(t *testing.T, b *redistest.Backend) {
		ctx := context.Background()
		q := New(b.Client, b.Namespace).Queue("q")
		ensureGroups(t, q)
		enqueue := func(key string, delays ...time.Duration) []string {
			t.Helper()
			var items []EnqueueItem
			for _, d := range delays {
				items = append(items, EnqueueItem{Type: "t", Priority: 5, MaxAttempts: 3, Timeout: time.Minute, OrderKey: key, Delay: d})
			}
			res, err := q.Enqueue(ctx, EnqueueConfig{}, items)
			if err != nil {
				t.Fatal(err)
			}
			ids := make([]string, len(res))
			for i, r := range res {
				ids[i] = r.ID
			}
			return ids
		}
		// claim reads the bands once, not blocking: it must claim exactly
		// task id, which it starts.
		claim := func(what, id string) (Entry, Started) {
			t.Helper()
			entries, _, err := q.ReadBands(ctx, "w", 10, 0, 0)
			if err != nil {
				t.Fatal(err)
			}
			if len(entries) != 1 || entries[0].TaskID != id {
				rec, _ := q.s.Get(ctx, id)
				t.Fatalf("%s: claimed %d entries %v, want %s alone in its band at once (it is %+v)", what, len(entries), entries, id, rec)
			}
			st, err := q.Start(ctx, StartConfig{Worker: "w", MaxCrashes: 3, Retention: time.Hour, LeaseTTL: time.Minute}, entries)
			if err != nil || st[0].Code != Began {
				t.Fatalf("%s: start %+v %v", what, st, err)
			}
			return entries[0], st[0]
		}
		finish := func(e Entry, s Started, o Outcome) string {
			t.Helper()
			item := FinishItem{TaskID: e.TaskID, Band: e.Band, EntryID: e.EntryID, Run: s.Run, Outcome: o,
				Attempt: s.Attempt, Crashes: s.Crashes, Started: s.Started}
			item.Born = e.BornSpec()
			out, err := q.Finish(ctx, FinishConfig{Retention: time.Hour, KeepSucceeded: true, IdemWindow: time.Hour}, "w", []FinishItem{item})
			if err != nil {
				t.Fatal(err)
			}
			return out[0]
		}
		cancel := func(id, want string) {
			t.Helper()
			if status, _, err := q.Cancel(ctx, id, time.Hour); err != nil || status != want {
				t.Fatalf("cancel %s: %q %v, want %s", id, status, err, want)
			}
		}

		// A succeeded holder passes its key to the next at once.
		a := enqueue("a", 0, 0, 0)
		e, s := claim("the first of a", a[0])
		if got := finish(e, s, OutcomeOK); got != StatusSucceeded {
			t.Fatalf("finish: %s", got)
		}
		e, s = claim("after the holder succeeded", a[1])

		// A running holder whose cancellation is requested passes it when
		// its run ends cancelled.
		cancel(a[1], StatusRunning)
		if got := finish(e, s, OutcomeOK); got != StatusCancelled {
			t.Fatalf("finish of a cancelled run: %s", got)
		}
		e, s = claim("after the running holder was cancelled", a[2])
		finish(e, s, OutcomeOK)

		// A holder QUEUED in its band, cancelled: the next enters its band.
		b1 := enqueue("b", 0, 0)
		cancel(b1[0], StatusCancelled)
		e, s = claim("after the queued holder was cancelled", b1[1])
		finish(e, s, OutcomeOK)

		// A holder SCHEDULED by its delay, cancelled: likewise.
		c := enqueue("c", time.Hour, 0)
		cancel(c[0], StatusCancelled)
		e, s = claim("after the scheduled holder was cancelled", c[1])
		finish(e, s, OutcomeOK)
	})
}

// One finish of three holders hands their keys over: a key whose
// first waiter was cancelled (a gap at the head of its line) to the one
// behind it, a key with a waiter to it, a key with none is freed.
func TestOrderKeyBatchHandOver(t *testing.T) {
	t.Parallel()
	redistest.ForEachBackend(t, func(t *testing.T, b *redistest.Backend) {
		ctx := context.Background()
		q := New(b.Client, b.Namespace).Queue("q")
		ensureGroups(t, q)
		var items []EnqueueItem
		for _, key := range []string{"gap", "gap", "gap", "next", "next", "alone"} {
			items = append(items, EnqueueItem{Type: "t", Priority: 5, MaxAttempts: 1, Timeout: time.Minute, OrderKey: key})
		}
		res, err := q.Enqueue(ctx, EnqueueConfig{}, items)
		if err != nil {
			t.Fatal(err)
		}
		if status, _, err := q.Cancel(ctx, res[1].ID, time.Hour); err != nil || status != StatusCancelled {
			t.Fatalf("cancel of gap's first waiter: %q %v", status, err)
		}
		read := func(want ...string) ([]Entry, []Started) {
			t.Helper()
			entries, _, err := q.ReadBands(ctx, "w", 10, 0, 0)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, e := range entries {
				got = append(got, e.TaskID)
			}
			slices.Sort(got)
			slices.Sort(want)
			if !slices.Equal(got, want) {
				t.Fatalf("claimed %v, want %v", got, want)
			}
			st, err := q.Start(ctx, StartConfig{Worker: "w", MaxCrashes: 3, Retention: time.Hour, LeaseTTL: time.Minute}, entries)
			if err != nil {
				t.Fatal(err)
			}
			return entries, st
		}
		entries, st := read(res[0].ID, res[3].ID, res[5].ID)
		var fin []FinishItem
		for i, e := range entries {
			fin = append(fin, FinishItem{TaskID: e.TaskID, Band: e.Band, EntryID: e.EntryID, Run: st[i].Run, Outcome: OutcomeOK,
				Attempt: st[i].Attempt, Started: st[i].Started, Born: e.BornSpec()})
		}
		if _, err := q.Finish(ctx, FinishConfig{Retention: time.Hour, KeepSucceeded: true, IdemWindow: time.Hour}, "w", fin); err != nil {
			t.Fatal(err)
		}
		read(res[2].ID, res[4].ID)
		for key, want := range map[string]string{"gap": res[2].ID, "next": res[4].ID, "alone": ""} {
			line, err := q.OrderKey(ctx, key, 5)
			if err != nil || line.Holder != want || line.Waiting != 0 || len(line.Next) != 0 {
				t.Errorf("key %s: %+v %v, want %q holding it, none waiting", key, line, err, want)
			}
		}
	})
}
