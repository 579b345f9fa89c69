package store

import (
	"context"
	"testing"
	"time"

	"github.com/dtq-dev/dtq/internal/redistest"
)

// debounced submits payload under identity id with period and maxWait.
func debounced(t *testing.T, q *Queue, cfg EnqueueConfig, id, payload string, period, maxWait time.Duration, keep bool) (EnqueueResult, *Record) {
	t.Helper()
	res, rec, err := q.EnqueueDebounced(context.Background(), cfg, DebounceItem{
		Item:     EnqueueItem{Type: "t", Payload: []byte(payload), Priority: 5, MaxAttempts: 1, Timeout: time.Minute},
		Identity: id, Period: period, MaxWait: maxWait, KeepFirst: keep})
	if err != nil {
		t.Fatal(err)
	}
	return res, rec
}

// scheduleScore returns task id's due time in the schedule (0: not there).
func scheduleScore(t *testing.T, b *redistest.Backend, q *Queue, id string) int64 {
	t.Helper()
	f, err := b.Client.Do(context.Background(), b.Client.B().Zscore().Key(q.k.Schedule()).Member(id).Build()).AsFloat64()
	if err != nil {
		return 0
	}
	return int64(f)
}

// Submissions of one identity join its pending task: one task, the last
// payload (the first with keep first), its due time moved on by each and
// capped by the first submission + max wait; another identity is another
// task.
func TestDebounceJoins(t *testing.T) {
	t.Parallel()
	redistest.ForEachBackend(t, func(t *testing.T, b *redistest.Backend) {
		q := New(b.Client, b.Namespace).Queue("q")
		cfg := EnqueueConfig{}
		first, _ := debounced(t, q, cfg, "a", `1`, time.Hour, 0, false)
		if first.Code != Created || first.Status != StatusScheduled || first.Due != first.Created+3600_000 {
			t.Fatalf("first submission: %+v, want created SCHEDULED an hour ahead", first)
		}
		for redisMillis(t, b) == first.Created { // the next submission is a later millisecond
			time.Sleep(time.Millisecond)
		}
		res, rec := debounced(t, q, cfg, "a", `2`, time.Hour, 0, false)
		if res.Code != Joined || res.ID != first.ID || rec == nil || string(rec.Payload) != "2" || rec.Status != StatusScheduled {
			t.Fatalf("second submission: %+v %+v, want it joined %s with payload 2", res, rec, first.ID)
		}
		if rec.Due <= first.Due || scheduleScore(t, b, q, first.ID) != rec.Due {
			t.Errorf("due time after joining: %d (schedule %d), want later than %d", rec.Due, scheduleScore(t, b, q, first.ID), first.Due)
		}
		if _, rec := debounced(t, q, cfg, "a", `3`, time.Hour, 0, true); string(rec.Payload) != "2" {
			t.Errorf("keep first: payload %s, want 2", rec.Payload)
		}
		other, _ := debounced(t, q, cfg, "b", `1`, time.Hour, 0, false)
		if other.Code != Created || other.ID == first.ID {
			t.Errorf("another identity: %+v, want a new task", other)
		}

		// max wait: the due time never passes first + max wait
		capped, _ := debounced(t, q, cfg, "c", `1`, time.Hour, time.Hour, false)
		for redisMillis(t, b) == capped.Created {
			time.Sleep(time.Millisecond)
		}
		_, rec = debounced(t, q, cfg, "c", `2`, time.Hour, time.Hour, false)
		if rec.Due != capped.Created+3600_000 || scheduleScore(t, b, q, capped.ID) != rec.Due {
			t.Errorf("max wait: due %d, want the first submission's %d + 1h", rec.Due, capped.Created)
		}
		// a shorter max wait moves it earlier
		_, rec = debounced(t, q, cfg, "c", `3`, time.Hour, time.Minute, false)
		if rec.Due != capped.Created+60_000 {
			t.Errorf("a shorter max wait: due %d, want %d", rec.Due, capped.Created+60_000)
		}

		// the depth bound counts a new task, not a joining submission
		full := EnqueueConfig{MaxDepth: 3}
		if res, _ := debounced(t, q, full, "a", `4`, time.Hour, 0, false); res.Code != Joined {
			t.Errorf("joining a full queue: %+v, want joined", res)
		}
		if res, _ := debounced(t, q, full, "d", `1`, time.Hour, 0, false); res.Code != Full {
			t.Errorf("a new task in a full queue: %+v, want full", res)
		}
	})
}

// Once the pending task has come due (promoted), or was cancelled, a
// submission creates a new task; the sweep deletes the fields of tasks no
// longer pending and keeps the others.
func TestDebounceAfterDueAndSweep(t *testing.T) {
	t.Parallel()
	redistest.ForEachBackend(t, func(t *testing.T, b *redistest.Backend) {
		ctx := context.Background()
		q := New(b.Client, b.Namespace).Queue("q")
		cfg := EnqueueConfig{}
		a, _ := debounced(t, q, cfg, "a", `1`, 5*time.Millisecond, 0, false)
		for redisMillis(t, b) <= a.Due {
			time.Sleep(time.Millisecond)
		}
		// due, not promoted yet: no longer pending
		late, _ := debounced(t, q, cfg, "a", `2`, 5*time.Millisecond, 0, false)
		if late.Code != Created || late.ID == a.ID {
			t.Fatalf("after the due time: %+v, want a new task", late)
		}
		for redisMillis(t, b) <= late.Due {
			time.Sleep(time.Millisecond)
		}
		if n, _, _, err := q.PromoteDue(ctx, 10); err != nil || n != 2 {
			t.Fatalf("promote: %d %v", n, err)
		}
		if res, _ := debounced(t, q, cfg, "a", `3`, time.Hour, 0, false); res.Code != Created {
			t.Fatalf("after promotion: %+v, want a new task", res)
		}
		c, _ := debounced(t, q, cfg, "c", `1`, time.Hour, 0, false)
		cancelled(t, q, c.ID)
		if res, _ := debounced(t, q, cfg, "c", `2`, time.Hour, 0, false); res.Code != Created || res.ID == c.ID {
			t.Fatalf("after a cancel: %+v, want a new task", res)
		}
		d, _ := debounced(t, q, cfg, "d", `1`, time.Hour, 0, false)
		cancelled(t, q, d.ID)
		if _, n, err := q.SweepDebounce(ctx, "0", 100); err != nil || n != 1 {
			t.Fatalf("sweep: %d deleted, %v; want d's field", n, err)
		}
		left, err := b.Client.Do(ctx, b.Client.B().Hkeys().Key(q.k.Debounce()).Build()).AsStrSlice()
		if err != nil || len(left) != 2 {
			t.Fatalf("fields left: %v %v, want a's and c's pending tasks", left, err)
		}
	})
}
