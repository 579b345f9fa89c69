package store

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/dtq-dev/dtq/internal/redistest"
)

// scopesOf is what a worker of a queue with scoped limits passes: the
// task's type's scope and its limit key's.
func scopesOf(e *Entry) []string {
	if e.Spec == nil {
		return nil
	}
	s := []string{ScopeType + e.Spec.Type}
	if e.Spec.LimitKey != "" {
		s = append(s, ScopeKey+e.Spec.LimitKey)
	}
	return s
}

// startScoped claims up to n entries and starts them under their scoped
// limits with leases of ttl; it returns each one's payload and code.
func startScoped(t *testing.T, q *Queue, n int, ttl time.Duration) (payloads []string, codes []StartCode) {
	t.Helper()
	ctx := context.Background()
	entries, _, err := q.ReadBands(ctx, "w", n, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) == 0 {
		return nil, nil
	}
	for i := range entries {
		entries[i].Scopes = scopesOf(&entries[i])
	}
	st, err := q.Start(ctx, StartConfig{Worker: "w", MaxCrashes: 3, Retention: time.Hour, LeaseTTL: ttl}, entries)
	if err != nil {
		t.Fatal(err)
	}
	for i, e := range entries {
		payloads = append(payloads, string(e.Spec.Payload))
		codes = append(codes, st[i].Code)
	}
	return payloads, codes
}

func item(typ, payload, key string) EnqueueItem {
	return EnqueueItem{Type: typ, Payload: []byte(payload), Priority: 5, MaxAttempts: 3, Timeout: time.Minute, LimitKey: key}
}

func scopeState(t *testing.T, q *Queue, scope string) ScopeState {
	t.Helper()
	ss, err := q.ScopeLimits(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range ss {
		if s.Scope == scope {
			return s
		}
	}
	t.Fatalf("no scoped limit %q in %+v", scope, ss)
	return ScopeState{}
}

// A task type's concurrency limit: starts beyond it wait QUEUED, in
// limwait, and go back to their band as leases are released or expire.
func TestScopeConcurrency(t *testing.T) {
	t.Parallel()
	redistest.ForEachBackend(t, func(t *testing.T, b *redistest.Backend) {
		ctx := context.Background()
		q := New(b.Client, b.Namespace).Queue("q")
		ensureGroups(t, q)
		if err := q.SetScopeLimit(ctx, ScopeDef{Scope: ScopeType + "report", MaxRunning: 2}); err != nil {
			t.Fatal(err)
		}
		res, err := q.Enqueue(ctx, EnqueueConfig{}, []EnqueueItem{item("report", "r1", ""), item("report", "r2", ""),
			item("report", "r3", ""), item("other", "o1", ""), item("report", "r4", "")})
		if err != nil {
			t.Fatal(err)
		}
		ps, codes := startScoped(t, q, 10, time.Minute)
		if want := "[r1 r2 r3 o1 r4] [1 1 3 1 3]"; fmt.Sprint(ps, codes) != want {
			t.Fatalf("starts %v %v, want %s", ps, codes, want)
		}
		st := scopeState(t, q, ScopeType+"report")
		if st.InUse != 2 || st.Waiting != 2 {
			t.Fatalf("report's limit: %+v, want 2 in use, 2 waiting", st)
		}
		rec, err := q.s.Get(ctx, res[2].ID)
		if err != nil || rec.Status != StatusQueued {
			t.Fatalf("r3: %+v %v, want QUEUED", rec, err)
		}
		if ct := counts(t, q); ct.ScopeWaiting != 2 || ct.QueuedByPriority[5] != 0 {
			t.Errorf("counts %+v: want 2 held back, none in the bands", ct)
		}
		page, _, err := q.List(ctx, ListQuery{Status: StatusQueued, Limit: 10})
		if err != nil || len(page) != 2 || page[0].ID != res[2].ID || page[0].Throttled != ScopeType+"report" {
			t.Fatalf("list of QUEUED: %d records %v, want r3 and r4, held by report's limit", len(page), err)
		}
		// r1 ends: r3 goes back to its band and starts.
		_, u1 := ulidOfTest(t, res[0].ID)
		if err := q.ReleaseScopeLeases(ctx, []string{ScopeLease(ScopeType+"report", u1, 1)}); err != nil {
			t.Fatal(err)
		}
		if ps, codes := startScoped(t, q, 10, 50*time.Millisecond); fmt.Sprint(ps, codes) != "[r3] [1]" {
			t.Fatalf("after r1's release: %v %v, want r3 started", ps, codes)
		}
		// r3's lease (50 ms) expires unrenewed, as a lost worker's: the
		// sweep frees it and moves r4 in.
		time.Sleep(80 * time.Millisecond)
		if _, n, err := q.SweepScopes(ctx, "", 10); err != nil || n != 1 {
			t.Fatalf("sweep: moved %d, %v; want r4", n, err)
		}
		if ps, codes := startScoped(t, q, 10, time.Minute); fmt.Sprint(ps, codes) != "[r4] [1]" {
			t.Fatalf("after the sweep: %v %v, want r4 started", ps, codes)
		}
	})
}

// A limit for each limit key holds each key apart; a cancelled waiter
// leaves the wait.
func TestScopeEachKey(t *testing.T) {
	t.Parallel()
	redistest.ForEachBackend(t, func(t *testing.T, b *redistest.Backend) {
		ctx := context.Background()
		q := New(b.Client, b.Namespace).Queue("q")
		ensureGroups(t, q)
		if err := q.SetScopeLimit(ctx, ScopeDef{Scope: ScopeKey + EachKey, MaxRunning: 1}); err != nil {
			t.Fatal(err)
		}
		res, err := q.Enqueue(ctx, EnqueueConfig{}, []EnqueueItem{item("t", "a1", "a"), item("t", "a2", "a"), item("t", "b1", "b")})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := q.Enqueue(ctx, EnqueueConfig{}, []EnqueueItem{item("t", "n1", "")}); err != nil {
			t.Fatal(err)
		}
		if ps, codes := startScoped(t, q, 10, time.Minute); fmt.Sprint(ps, codes) != "[a1 a2 b1 n1] [1 3 1 1]" {
			t.Fatalf("starts %v %v", ps, codes)
		}
		if st := scopeState(t, q, ScopeKey+EachKey); st.InUse != 2 || st.Waiting != 1 {
			t.Errorf("each key's limit: %+v, want 2 in use (a1, b1) and 1 waiting (a2)", st)
		}
		if st, _, err := q.Cancel(ctx, res[1].ID, time.Hour); err != nil || st != StatusCancelled {
			t.Fatalf("cancel of the waiter: %q %v", st, err)
		}
		if ct := counts(t, q); ct.ScopeWaiting != 0 {
			t.Errorf("waiting after the cancel: %d", ct.ScopeWaiting)
		}
	})
}

// A task type's rate limit: starts beyond it are SCHEDULED at the starts
// the rate reserves for them, one interval apart, and start then.
func TestScopeRateReserves(t *testing.T) {
	t.Parallel()
	redistest.ForEachBackend(t, func(t *testing.T, b *redistest.Backend) {
		ctx := context.Background()
		q := New(b.Client, b.Namespace).Queue("q")
		ensureGroups(t, q)
		if err := q.SetScopeLimit(ctx, ScopeDef{Scope: ScopeType + "call", Rate: 10, Per: time.Second, Burst: 1}); err != nil {
			t.Fatal(err)
		}
		res, err := q.Enqueue(ctx, EnqueueConfig{}, []EnqueueItem{item("call", "c1", ""), item("call", "c2", ""), item("call", "c3", "")})
		if err != nil {
			t.Fatal(err)
		}
		if ps, codes := startScoped(t, q, 10, time.Minute); fmt.Sprint(ps, codes) != "[c1 c2 c3] [1 4 4]" {
			t.Fatalf("starts %v %v", ps, codes)
		}
		r2, _ := q.s.Get(ctx, res[1].ID)
		r3, _ := q.s.Get(ctx, res[2].ID)
		if r2.Status != StatusScheduled || r3.Status != StatusScheduled || r3.Due-r2.Due < 99 || r3.Due-r2.Due > 101 {
			t.Fatalf("c2 %s due %d, c3 %s due %d: want SCHEDULED 100 ms apart", r2.Status, r2.Due, r3.Status, r3.Due)
		}
		// Come due, c2 starts on its reserved slot (the rate is not asked
		// again).
		time.Sleep(time.Until(time.UnixMilli(r2.Due)) + 5*time.Millisecond)
		if _, _, _, err := q.PromoteDue(ctx, 10); err != nil {
			t.Fatal(err)
		}
		if ps, codes := startScoped(t, q, 10, time.Minute); fmt.Sprint(ps, codes) != "[c2] [1]" {
			t.Fatalf("after c2's slot: %v %v, want c2 started", ps, codes)
		}
	})
}

func ulidOfTest(t *testing.T, id string) (string, string) {
	t.Helper()
	if len(id) < 26 {
		t.Fatalf("id %q", id)
	}
	return id[:len(id)-27], id[len(id)-26:]
}

// A lease is its run's: a late or repeated release of a retried task's
// earlier run leaves the lease of its run now.
func TestScopeLeaseIsPerRun(t *testing.T) {
	t.Parallel()
	redistest.ForEachBackend(t, func(t *testing.T, b *redistest.Backend) {
		ctx := context.Background()
		q := New(b.Client, b.Namespace).Queue("q")
		ensureGroups(t, q)
		scope := ScopeType + "report"
		if err := q.SetScopeLimit(ctx, ScopeDef{Scope: scope, MaxRunning: 1}); err != nil {
			t.Fatal(err)
		}
		res, err := q.Enqueue(ctx, EnqueueConfig{}, []EnqueueItem{item("report", "r1", "")})
		if err != nil {
			t.Fatal(err)
		}
		_, ulid := ulidOfTest(t, res[0].ID)
		cfg := StartConfig{Worker: "w", MaxCrashes: 3, Retention: time.Hour, LeaseTTL: time.Minute}
		entries, _, err := q.ReadBands(ctx, "w", 1, 0, 0)
		if err != nil || len(entries) != 1 {
			t.Fatalf("read: %v %v", entries, err)
		}
		entries[0].Scopes = []string{scope}
		st, err := q.Start(ctx, cfg, entries)
		if err != nil || st[0].Code != Began {
			t.Fatalf("start: %+v %v", st, err)
		}
		e := entries[0]
		if _, err := q.Finish(ctx, FinishConfig{Retention: time.Hour, IdemWindow: time.Hour}, "w", []FinishItem{{
			TaskID: e.TaskID, Band: e.Band, EntryID: e.EntryID, Run: 1, Outcome: OutcomeRetry, Text: "again",
			RetryDelay: time.Millisecond, Attempt: 1, Started: st[0].Started, Born: e.Spec,
		}}); err != nil {
			t.Fatal(err)
		}
		release := func() {
			if err := q.ReleaseScopeLeases(ctx, []string{ScopeLease(scope, ulid, 1)}); err != nil {
				t.Fatal(err)
			}
		}
		release()
		time.Sleep(5 * time.Millisecond)
		if _, _, _, err := q.PromoteDue(ctx, 10); err != nil {
			t.Fatal(err)
		}
		if ps, codes := startScoped(t, q, 1, time.Minute); fmt.Sprint(ps, codes) != "[r1] [1]" {
			t.Fatalf("the retry: %v %v, want started", ps, codes)
		}
		release() // run 1's again, late
		if st := scopeState(t, q, scope); st.InUse != 1 {
			t.Fatalf("in use %d after a late release of run 1, want run 2's lease", st.InUse)
		}
	})
}

// A rate limit of each key leaves a rate state per key; once past, the
// prune deletes them, and keeps those still ahead.
func TestPruneScopeStates(t *testing.T) {
	t.Parallel()
	redistest.ForEachBackend(t, func(t *testing.T, b *redistest.Backend) {
		ctx := context.Background()
		q := New(b.Client, b.Namespace).Queue("q")
		ensureGroups(t, q)
		if err := q.SetScopeLimit(ctx, ScopeDef{Scope: ScopeKey + EachKey, Rate: 1, Per: time.Hour, Burst: 1}); err != nil {
			t.Fatal(err)
		}
		var items []EnqueueItem
		for i := range 50 {
			items = append(items, item("t", "x", fmt.Sprintf("k%d", i)))
		}
		if _, err := q.Enqueue(ctx, EnqueueConfig{}, items); err != nil {
			t.Fatal(err)
		}
		startScoped(t, q, 100, time.Minute) // each key's first start: its tat an hour ahead
		lim := q.k.Limits()
		// Age 40 of the 50 states into the past.
		for i := range 40 {
			f := ScopeKey + fmt.Sprintf("k%d", i) + "\ntat"
			if err := b.Client.Do(ctx, b.Client.B().Hset().Key(lim).FieldValue().FieldValue(f, "1000").Build()).Error(); err != nil {
				t.Fatal(err)
			}
		}
		cursor, total := "0", 0
		for {
			next, n, err := q.PruneScopeStates(ctx, cursor)
			if err != nil {
				t.Fatal(err)
			}
			total += n
			if cursor = next; cursor == "0" {
				break
			}
		}
		left, err := b.Client.Do(ctx, b.Client.B().Hlen().Key(lim).Build()).AsInt64()
		if err != nil || total != 40 || left != 10 {
			t.Fatalf("pruned %d, %d fields left (%v); want 40 pruned, the 10 ahead kept", total, left, err)
		}
	})
}

// A run taken over from a lost worker asks the limit too: when the lost
// run's lease expired and another start took the slot, the takeover waits
// as a new task would, and starts later with its attempt kept.
func TestScopeTakeoverRespectsLimit(t *testing.T) {
	t.Parallel()
	redistest.ForEachBackend(t, func(t *testing.T, b *redistest.Backend) {
		ctx := context.Background()
		q := New(b.Client, b.Namespace).Queue("q")
		ensureGroups(t, q)
		scope := ScopeType + "report"
		if err := q.SetScopeLimit(ctx, ScopeDef{Scope: scope, MaxRunning: 1}); err != nil {
			t.Fatal(err)
		}
		res, err := q.Enqueue(ctx, EnqueueConfig{}, []EnqueueItem{item("report", "r1", ""), item("report", "r2", "")})
		if err != nil {
			t.Fatal(err)
		}
		if ps, codes := startScoped(t, q, 1, 30*time.Millisecond); fmt.Sprint(ps, codes) != "[r1] [1]" {
			t.Fatalf("first start: %v %v", ps, codes)
		}
		time.Sleep(60 * time.Millisecond) // r1's worker is lost: its lease expires
		if ps, codes := startScoped(t, q, 1, time.Minute); fmt.Sprint(ps, codes) != "[r2] [1]" {
			t.Fatalf("r2 takes the freed slot: %v %v", ps, codes)
		}
		rr, err := q.Read(ctx, ReadRequest{Consumer: "w2", Credit: 10, ReclaimIdle: 20 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		var taken []Entry
		for _, e := range rr.Entries {
			if e.Reclaimed && e.TaskID == res[0].ID {
				e.Scopes = []string{scope}
				taken = append(taken, e)
			}
		}
		if len(taken) != 1 {
			t.Fatalf("reclaim: %+v, want r1's entry", rr.Entries)
		}
		st, err := q.Start(ctx, StartConfig{Worker: "w2", MaxCrashes: 3, Retention: time.Hour, LeaseTTL: time.Minute}, taken)
		if err != nil || st[0].Code != Parked {
			t.Fatalf("the takeover with the limit full: %+v %v, want held back", st, err)
		}
		if use := scopeState(t, q, scope); use.InUse != 1 || use.Waiting != 1 {
			t.Fatalf("limit %+v, want r2's lease alone and r1 waiting", use)
		}
		_, r2 := ulidOfTest(t, res[1].ID)
		if err := q.ReleaseScopeLeases(ctx, []string{ScopeLease(scope, r2, 1)}); err != nil {
			t.Fatal(err)
		}
		entries, _, err := q.ReadBands(ctx, "w2", 1, 0, 0)
		if err != nil || len(entries) != 1 {
			t.Fatalf("read r1 again: %+v %v", entries, err)
		}
		entries[0].Scopes = []string{scope}
		st, err = q.Start(ctx, StartConfig{Worker: "w2", MaxCrashes: 3, Retention: time.Hour, LeaseTTL: time.Minute}, entries)
		if err != nil || st[0].Code != Began || st[0].Run != 2 || st[0].Attempt != 1 || st[0].Crashes != 1 {
			t.Fatalf("r1's start after the release: %+v %v, want run 2, attempt 1, 1 crash", st, err)
		}
	})
}
