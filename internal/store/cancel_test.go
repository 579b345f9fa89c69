package store

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/dtq-dev/dtq/internal/redistest"
)

// bandLen is the number of entries of q's band p.
func bandLen(t *testing.T, b *redistest.Backend, q *Queue, p int) int64 {
	t.Helper()
	n, err := b.Client.Do(context.Background(), b.Client.B().Xlen().Key(q.k.Band(p)).Build()).AsInt64()
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// cancelled cancels task id and fails unless it went CANCELLED here.
func cancelled(t *testing.T, q *Queue, id string) {
	t.Helper()
	if st, typ, err := q.Cancel(context.Background(), id, time.Hour); err != nil || st != StatusCancelled || typ == "" {
		t.Fatalf("cancel of %s: %q %q %v, want CANCELLED with its type", id, st, typ, err)
	}
}

// A QUEUED task waiting as an entry written again — given back by a
// worker that read it (with the queue paused or not), a delayed task
// promoted, one submitted with a limit key — loses that entry when it is
// cancelled: nothing of it is left queued in its band, and no worker reads
// it again. Counts then say one task submitted, cancelled, none queued.
func TestCancelDeletesTheEntryWrittenAgain(t *testing.T) {
	t.Parallel()
	giveBack := func(t *testing.T, q *Queue, paused bool) string {
		ctx := context.Background()
		if _, err := q.Enqueue(ctx, EnqueueConfig{}, []EnqueueItem{item("t", "1", "")}); err != nil {
			t.Fatal(err)
		}
		entries, _, err := q.ReadBands(ctx, "w", 1, 0, 0)
		if err != nil || len(entries) != 1 {
			t.Fatalf("read: %d %v", len(entries), err)
		}
		entries[0].GiveBack = !paused
		if paused {
			if err := q.SetPaused(ctx, true); err != nil {
				t.Fatal(err)
			}
			defer func() {
				if err := q.SetPaused(ctx, false); err != nil {
					t.Fatal(err)
				}
			}()
		}
		st, err := q.Start(ctx, StartConfig{Worker: "w", MaxCrashes: 3, Retention: time.Hour}, entries)
		if err != nil || st[0].Code != Skipped {
			t.Fatalf("give-back: %+v %v", st, err)
		}
		return entries[0].TaskID
	}
	for _, tc := range []struct {
		name   string
		create func(t *testing.T, q *Queue) string
	}{
		{"given back", func(t *testing.T, q *Queue) string { return giveBack(t, q, false) }},
		{"given back while paused", func(t *testing.T, q *Queue) string { return giveBack(t, q, true) }},
		{"promoted", func(t *testing.T, q *Queue) string {
			ctx := context.Background()
			it := item("t", "1", "")
			it.Delay = time.Millisecond
			res, err := q.Enqueue(ctx, EnqueueConfig{}, []EnqueueItem{it})
			if err != nil {
				t.Fatal(err)
			}
			for deadline := time.Now().Add(10 * time.Second); ; {
				if n, _, _, err := q.PromoteDue(ctx, 10); err != nil || n == 1 {
					if err != nil {
						t.Fatal(err)
					}
					break
				}
				if time.Now().After(deadline) {
					t.Fatal("the delayed task was not promoted")
				}
				time.Sleep(time.Millisecond)
			}
			return res[0].ID
		}},
		{"with a limit key", func(t *testing.T, q *Queue) string {
			res, err := q.Enqueue(context.Background(), EnqueueConfig{}, []EnqueueItem{item("t", "1", "k")})
			if err != nil {
				t.Fatal(err)
			}
			return res[0].ID
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			redistest.ForEachBackend(t, func(t *testing.T, b *redistest.Backend) {
				q := New(b.Client, b.Namespace).Queue("q")
				ensureGroups(t, q)
				id := tc.create(t, q)
				if ct := counts(t, q); ct.QueuedByPriority[5] != 1 || ct.Running != 0 {
					t.Fatalf("before the cancel: %+v, want 1 queued", ct)
				}
				cancelled(t, q, id)
				ct := counts(t, q)
				if ct.QueuedByPriority[5] != 0 || ct.Running != 0 || ct.Cancelled != 1 || ct.Submitted != 1 {
					t.Errorf("after the cancel: %+v, want none queued, 1 submitted, 1 cancelled", ct)
				}
				if n := bandLen(t, b, q, 5); n != 0 {
					t.Errorf("band 5 holds %d entries after the cancel, want 0", n)
				}
				if p := startNext(t, q); p != "" {
					t.Errorf("started %q after the cancel", p)
				}
			})
		})
	}
}

// A cancelled entry admitted under its group's window gives the group
// room: its next waiter moves in at once.
func TestCancelAdmittedEntryMovesAWaiterIn(t *testing.T) {
	t.Parallel()
	redistest.ForEachBackend(t, func(t *testing.T, b *redistest.Backend) {
		q := New(b.Client, b.Namespace).Queue("q")
		ensureGroups(t, q)
		res, err := q.Enqueue(context.Background(), EnqueueConfig{}, groupItems("a", GroupWindow+1, 5))
		if err != nil {
			t.Fatal(err)
		}
		cancelled(t, q, res[0].ID)
		ct := counts(t, q)
		if ct.QueuedByPriority[5] != GroupWindow || ct.GroupWaiting != 0 || ct.Submitted != GroupWindow+1 {
			t.Fatalf("after the cancel: %+v, want %d in band 5, none waiting, %d submitted", ct, GroupWindow, GroupWindow+1)
		}
		var got []string
		for p := startNext(t, q); p != ""; p = startNext(t, q) {
			got = append(got, p)
		}
		if len(got) != GroupWindow || got[0] != "a1" || got[GroupWindow-1] != fmt.Sprintf("a%d", GroupWindow) {
			t.Errorf("started %v, want a1..a%d", got, GroupWindow)
		}
	})
}

// A task cancelled while a worker has claimed its entry written again
// (pending, not started yet): the entry is left to that worker's start,
// which skips it, deletes it and counts it out of its group.
func TestCancelClaimedEntryWrittenAgain(t *testing.T) {
	t.Parallel()
	redistest.ForEachBackend(t, func(t *testing.T, b *redistest.Backend) {
		ctx := context.Background()
		q := New(b.Client, b.Namespace).Queue("q")
		ensureGroups(t, q)
		res, err := q.Enqueue(ctx, EnqueueConfig{}, groupItems("a", GroupWindow+1, 5))
		if err != nil {
			t.Fatal(err)
		}
		entries, _, err := q.ReadBands(ctx, "w", 1, 0, 0)
		if err != nil || len(entries) != 1 || entries[0].TaskID != res[0].ID {
			t.Fatalf("read: %+v %v", entries, err)
		}
		cancelled(t, q, res[0].ID)
		if ct := counts(t, q); ct.QueuedByPriority[5] != GroupWindow-1 || ct.Running != 1 || ct.GroupWaiting != 1 {
			t.Fatalf("after the cancel: %+v, want the claimed entry still there", ct)
		}
		st, err := q.Start(ctx, StartConfig{Worker: "w", MaxCrashes: 3, Retention: time.Hour}, entries)
		if err != nil || st[0].Code != Skipped {
			t.Fatalf("start of the cancelled task: %+v %v", st, err)
		}
		ct := counts(t, q)
		if ct.QueuedByPriority[5] != GroupWindow || ct.Running != 0 || ct.GroupWaiting != 0 || ct.Submitted != GroupWindow+1 {
			t.Fatalf("after the start: %+v, want %d queued, none running or waiting", ct, GroupWindow)
		}
		if n := bandLen(t, b, q, 5); n != GroupWindow {
			t.Errorf("band 5 holds %d entries, want %d", n, GroupWindow)
		}
	})
}
