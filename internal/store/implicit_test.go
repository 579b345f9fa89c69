package store

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/dtq-dev/dtq/internal/redistest"
	"github.com/dtq-dev/dtq/internal/taskid"
)

// claimImplicit enqueues n born tasks and starts them as consumer's
// implicit first runs (a plain read, no script).
func claimImplicit(t *testing.T, q *Queue, consumer string, n int) ([]Entry, []Started) {
	t.Helper()
	ctx := context.Background()
	var items []EnqueueItem
	for range n {
		items = append(items, EnqueueItem{Type: "t", Payload: []byte("1"), Priority: 5, MaxAttempts: 3, Timeout: time.Minute})
	}
	if _, err := q.Enqueue(ctx, EnqueueConfig{}, items); err != nil {
		t.Fatal(err)
	}
	ensureGroups(t, q)
	entries, st, missing, err := q.ReadBandsState(ctx, consumer, n, 0, 0)
	if err != nil || missing || len(entries) != n {
		t.Fatalf("read: %d entries, missing=%v, %v", len(entries), missing, err)
	}
	started := StartImplicit(entries, st)
	for i, s := range started {
		if s.Code != Began || s.Run != 1 || s.Attempt != 1 || s.Started == "" {
			t.Fatalf("entry %d: %+v, want an implicit first run", i, s)
		}
	}
	return entries, started
}

// finishOK records run's success of entry e by worker.
func finishOK(t *testing.T, q *Queue, worker string, e Entry, s Started, run int) string {
	t.Helper()
	res, err := q.Finish(context.Background(), FinishConfig{Retention: time.Hour, KeepSucceeded: true, IdemWindow: time.Hour}, worker,
		[]FinishItem{{TaskID: e.TaskID, Band: e.Band, EntryID: e.EntryID, Run: run, Outcome: OutcomeOK, Text: "1",
			Attempt: s.Attempt, Crashes: s.Crashes, Started: s.Started, Born: e.Spec}})
	if err != nil {
		t.Fatal(err)
	}
	return res[0]
}

// takeOver claims for consumer the entries idle for idle (a reclaim
// pass), unstarted.
func takeOver(t *testing.T, q *Queue, consumer string, idle time.Duration) []Entry {
	t.Helper()
	res, err := q.Read(context.Background(), ReadRequest{Consumer: consumer, Credit: 10, ReclaimIdle: idle})
	if err != nil {
		t.Fatal(err)
	}
	var taken []Entry
	for _, e := range res.Entries {
		if e.Reclaimed {
			taken = append(taken, e)
		}
	}
	return taken
}

// reclaim takes over, for consumer, the entries idle for idle and starts
// them with start.lua.
func reclaim(t *testing.T, q *Queue, consumer string, idle time.Duration) ([]Entry, []Started) {
	t.Helper()
	return startTaken(t, q, consumer, takeOver(t, q, consumer, idle))
}

func startTaken(t *testing.T, q *Queue, consumer string, taken []Entry) ([]Entry, []Started) {
	t.Helper()
	if len(taken) == 0 {
		return nil, nil
	}
	st, err := q.Start(context.Background(), StartConfig{Worker: consumer, MaxCrashes: 3, Retention: time.Hour, LeaseTTL: time.Minute}, taken)
	if err != nil {
		t.Fatal(err)
	}
	return taken, st
}

// An implicit first run is its worker's while its entry is pending for it
// in its first delivery: its outcome records; once another worker took it
// over, or its own reclaim pass did, its outcome is refused — the takeover
// counts the lost run as a crash and starts run 2.
func TestImplicitFirstRunFence(t *testing.T) {
	t.Parallel()
	redistest.ForEachBackend(t, func(t *testing.T, b *redistest.Backend) {
		ctx := context.Background()
		q := New(b.Client, b.Namespace).Queue("q")

		es, st := claimImplicit(t, q, "w1", 1)
		if got := finishOK(t, q, "w2", es[0], st[0], 1); got != "" {
			t.Errorf("another worker's outcome of w1's implicit run: %q, want refused", got)
		}
		if got := finishOK(t, q, "w1", es[0], st[0], 1); got != StatusSucceeded {
			t.Errorf("w1's outcome: %q, want SUCCEEDED", got)
		}
		if got := finishOK(t, q, "w1", es[0], st[0], 1); got != StatusSucceeded {
			t.Errorf("w1's outcome recorded again: %q, want SUCCEEDED (unchanged)", got)
		}

		for _, by := range []string{"w2", "w1"} { // taken over by another worker, then by w1's own reclaim pass
			es, st = claimImplicit(t, q, "w1", 1)
			time.Sleep(20 * time.Millisecond)
			claimed := takeOver(t, q, by, 10*time.Millisecond)
			// Taken over, not restarted yet (no Run field): refused already.
			if got := finishOK(t, q, "w1", es[0], st[0], 1); got != "" {
				t.Errorf("the lost implicit run's outcome right after the takeover by %s: %q, want refused", by, got)
			}
			taken, tst := startTaken(t, q, by, claimed)
			if len(taken) != 1 || tst[0].Code != Began || tst[0].Run != 2 || tst[0].Crashes != 1 || tst[0].Attempt != 1 {
				t.Fatalf("reclaimed by %s: %+v %+v, want run 2 after one crash", by, taken, tst)
			}
			if got := finishOK(t, q, "w1", es[0], st[0], 1); got != "" {
				t.Errorf("the lost implicit run's outcome after a reclaim by %s: %q, want refused", by, got)
			}
			if got := finishOK(t, q, by, taken[0], tst[0], 2); got != StatusSucceeded {
				t.Errorf("run 2's outcome: %q, want SUCCEEDED", got)
			}
			r, err := q.s.Get(ctx, es[0].TaskID)
			if err != nil || r.Status != StatusSucceeded || r.Run != 2 || r.Crashes != 1 || len(r.History) != 2 ||
				r.History[0].Outcome != OutcomeCrashed {
				t.Errorf("record after the takeover by %s: %+v, %v", by, r, err)
			}
		}
	})
}

// Renewal keeps an implicit run its worker's and gives it a Run field;
// another consumer's renewal of it is refused. A stale renewal after a
// takeover is refused too.
func TestImplicitRunRenewal(t *testing.T) {
	t.Parallel()
	redistest.ForEachBackend(t, func(t *testing.T, b *redistest.Backend) {
		ctx := context.Background()
		q := New(b.Client, b.Namespace).Queue("q")
		es, st := claimImplicit(t, q, "w1", 2)
		item := func(i int) RenewItem {
			return RenewItem{TaskID: es[i].TaskID, Band: es[i].Band, EntryID: es[i].EntryID, Run: 1, Started: st[i].Started}
		}
		if got, err := q.Renew(ctx, "w2", []RenewItem{item(0)}); err != nil || got[0] != Lost {
			t.Errorf("another consumer renews w1's implicit run: %v %v, want lost", got, err)
		}
		if got, err := q.Renew(ctx, "w1", []RenewItem{item(0)}); err != nil || got[0] != Renewed {
			t.Fatalf("w1 renews: %v %v", got, err)
		}
		_, ulid, _ := taskid.Parse(es[0].TaskID)
		v, err := b.Client.Do(ctx, b.Client.B().Hget().Key(q.k.Run()).Field(ulid).Build()).ToString()
		if rs, ok := parseRun(v); err != nil || !ok || rs.run != 1 || rs.worker != "w1" || strconv.FormatInt(rs.started, 10) != st[0].Started {
			t.Errorf("Run field after the first renewal: %q (%v), want run 1 of w1 started %s", v, err, st[0].Started)
		}
		// Renewed, it is fenced by its Run field: still w1's, and a
		// cancellation reaches it.
		if got, err := q.Renew(ctx, "w1", []RenewItem{item(0)}); err != nil || got[0] != Renewed {
			t.Errorf("second renewal: %v %v", got, err)
		}
		// The second is taken over before it is renewed.
		time.Sleep(50 * time.Millisecond)
		if got, err := q.Renew(ctx, "w1", []RenewItem{item(0)}); err != nil || got[0] != Renewed {
			t.Fatalf("renewal: %v %v", got, err)
		}
		taken, _ := reclaim(t, q, "w2", 40*time.Millisecond)
		if len(taken) != 1 || taken[0].TaskID != es[1].TaskID {
			t.Fatalf("reclaimed %+v, want only the unrenewed task", taken)
		}
		if got, err := q.Renew(ctx, "w1", []RenewItem{item(1)}); err != nil || got[0] != Lost {
			t.Errorf("renewal of the implicit run taken over: %v %v, want lost", got, err)
		}
	})
}

// A task claimed with no Run field is RUNNING to Get and to Cancel: its
// cancellation is requested (renewal reports it, the outcome records
// CANCELLED); a start of such a claim ends it CANCELLED unstarted.
func TestImplicitRunCancel(t *testing.T) {
	t.Parallel()
	redistest.ForEachBackend(t, func(t *testing.T, b *redistest.Backend) {
		ctx := context.Background()
		q := New(b.Client, b.Namespace).Queue("q")
		es, st := claimImplicit(t, q, "w1", 1)
		r, err := q.s.Get(ctx, es[0].TaskID)
		if err != nil || r.Status != StatusRunning || r.Worker != "w1" || r.Run != 1 || r.Attempt != 1 {
			t.Fatalf("Get of an implicit run: %+v, %v", r, err)
		}
		if status, _, err := q.Cancel(ctx, es[0].TaskID, time.Hour); err != nil || status != StatusRunning {
			t.Fatalf("cancel: %q, %v, want RUNNING (requested)", status, err)
		}
		got, err := q.Renew(ctx, "w1", []RenewItem{{TaskID: es[0].TaskID, Band: es[0].Band, EntryID: es[0].EntryID, Run: 1, Started: st[0].Started}})
		if err != nil || got[0] != Cancelled {
			t.Errorf("renewal after the cancel: %v %v, want cancelled", got, err)
		}
		res, err := q.Finish(ctx, FinishConfig{Retention: time.Hour, KeepSucceeded: true}, "w1",
			[]FinishItem{{TaskID: es[0].TaskID, Band: es[0].Band, EntryID: es[0].EntryID, Run: 1, Outcome: OutcomeCancel,
				Attempt: 1, Started: st[0].Started, Born: es[0].Spec}})
		if err != nil || res[0] != StatusCancelled {
			t.Errorf("outcome of the cancelled run: %v %v, want CANCELLED", res, err)
		}

		// Claimed for start.lua (not started yet) and cancelled: its start
		// ends it.
		if _, err := q.Enqueue(ctx, EnqueueConfig{}, []EnqueueItem{{Type: "t", Payload: []byte("2"), Priority: 5, MaxAttempts: 3,
			Timeout: time.Minute}}); err != nil {
			t.Fatal(err)
		}
		claimed, _, err := q.ReadBands(ctx, "w1", 1, 0, 0)
		if err != nil || len(claimed) != 1 {
			t.Fatalf("read: %+v %v", claimed, err)
		}
		if status, _, err := q.Cancel(ctx, claimed[0].TaskID, time.Hour); err != nil || status != StatusRunning {
			t.Fatalf("cancel of a claim: %q, %v", status, err)
		}
		sts, err := q.Start(ctx, StartConfig{Worker: "w1", MaxCrashes: 3, Retention: time.Hour}, claimed)
		if err != nil || sts[0].Code != Withdrawn {
			t.Fatalf("start of the cancelled claim: %+v %v, want withdrawn", sts, err)
		}
		if r, err := q.s.Get(ctx, claimed[0].TaskID); err != nil || r.Status != StatusCancelled {
			t.Errorf("record: %+v %v, want CANCELLED", r, err)
		}
		if c := counts(t, q); c.Running != 0 || c.Cancelled != 2 {
			t.Errorf("counts: %+v, want none running, 2 cancelled", c)
		}
	})
}

// Progress of an implicit run is recorded for its worker (and gives it a
// Run field), refused for another.
func TestImplicitRunProgress(t *testing.T) {
	t.Parallel()
	redistest.ForEachBackend(t, func(t *testing.T, b *redistest.Backend) {
		ctx := context.Background()
		q := New(b.Client, b.Namespace).Queue("q")
		es, st := claimImplicit(t, q, "w1", 1)
		_, ulid, _ := taskid.Parse(es[0].TaskID)
		f := Fence{Run: 1, Band: es[0].Band, EntryID: es[0].EntryID, Worker: "w2", Started: st[0].Started}
		if ok, err := q.SetProgress(ctx, ulid, f, 0.5, "x"); err != nil || ok {
			t.Errorf("another worker's progress: %v %v, want refused", ok, err)
		}
		f.Worker = "w1"
		if ok, err := q.SetProgress(ctx, ulid, f, 0.5, "x"); err != nil || !ok {
			t.Errorf("w1's progress: %v %v, want recorded", ok, err)
		}
		if r, err := q.s.Get(ctx, es[0].TaskID); err != nil || r.Progress == nil || r.Progress.Fraction != 0.5 {
			t.Errorf("record: %+v %v, want its progress", r, err)
		}
	})
}

// A consumer group destroyed under an implicit run takes its pending entry
// with it: the recreated group delivers the entry again, and its start
// leaves it claimed, unstarted; the run's worker still renews it and
// records its outcome, and the task runs once.
func TestImplicitRunSurvivesGroupLoss(t *testing.T) {
	t.Parallel()
	redistest.ForEachBackend(t, func(t *testing.T, b *redistest.Backend) {
		ctx := context.Background()
		q := New(b.Client, b.Namespace).Queue("q")
		es, st := claimImplicit(t, q, "w1", 2)
		if err := b.Client.Do(ctx, b.Client.B().XgroupDestroy().Key(q.k.Band(es[0].Band)).Group(Group).Build()).Error(); err != nil {
			t.Fatal(err)
		}
		res, err := q.Read(ctx, ReadRequest{Consumer: "w2", Credit: 10})
		if err != nil || len(res.Entries) != 2 || res.Entries[0].TaskID != es[0].TaskID {
			t.Fatalf("read after the group's loss: %+v %v, want the entries again", res.Entries, err)
		}
		sts, err := q.Start(ctx, StartConfig{Worker: "w2", MaxCrashes: 3, Retention: time.Hour}, res.Entries)
		if err != nil || sts[0].Code != Skipped || sts[1].Code != Skipped {
			t.Fatalf("start of the entries delivered again: %+v %v, want them left unstarted", sts, err)
		}
		// The first is renewed before its outcome, the second is not.
		item := RenewItem{TaskID: es[0].TaskID, Band: es[0].Band, EntryID: es[0].EntryID, Run: 1, Started: st[0].Started}
		if got, err := q.Renew(ctx, "w1", []RenewItem{item}); err != nil || got[0] != Renewed {
			t.Errorf("w1 renews its run after the group's loss: %v %v, want renewed", got, err)
		}
		for i := range es {
			if got := finishOK(t, q, "w1", es[i], st[i], 1); got != StatusSucceeded {
				t.Errorf("w1's outcome %d after the group's loss: %q, want SUCCEEDED", i, got)
			}
		}
		time.Sleep(20 * time.Millisecond)
		if taken := takeOver(t, q, "w2", 10*time.Millisecond); len(taken) != 0 {
			t.Errorf("taken over after its outcome: %+v, want nothing to run again", taken)
		}
	})
}

// An implicit run whose group was lost, then taken over and finished by
// another worker (after the visibility timeout, the entry delivered again
// sitting unstarted): its worker's renewal finds the task's record — a
// hash, as a takeover writes — and is refused, writing no Run field.
func TestImplicitRunLostWithGroupTakenOver(t *testing.T) {
	t.Parallel()
	redistest.ForEachBackend(t, func(t *testing.T, b *redistest.Backend) {
		ctx := context.Background()
		q := New(b.Client, b.Namespace).Queue("q")
		es, st := claimImplicit(t, q, "w1", 1)
		if err := b.Client.Do(ctx, b.Client.B().XgroupDestroy().Key(q.k.Band(es[0].Band)).Group(Group).Build()).Error(); err != nil {
			t.Fatal(err)
		}
		if res, err := q.Read(ctx, ReadRequest{Consumer: "w2", Credit: 10}); err != nil || len(res.Entries) != 1 {
			t.Fatalf("read after the group's loss: %+v %v", res, err)
		}
		time.Sleep(20 * time.Millisecond)
		taken, tst := reclaim(t, q, "w2", 10*time.Millisecond)
		if len(taken) != 1 || tst[0].Code != Began || tst[0].Run != 2 {
			t.Fatalf("w2's takeover: %+v %+v", taken, tst)
		}
		if got := finishOK(t, q, "w2", taken[0], tst[0], 2); got != StatusSucceeded {
			t.Fatalf("w2's outcome: %q", got)
		}
		item := RenewItem{TaskID: es[0].TaskID, Band: es[0].Band, EntryID: es[0].EntryID, Run: 1, Started: st[0].Started}
		if got, err := q.Renew(ctx, "w1", []RenewItem{item}); err != nil || got[0] != Lost {
			t.Errorf("w1 renews its run taken over and finished: %v %v, want lost", got, err)
		}
		_, ulid, _ := taskid.Parse(es[0].TaskID)
		if n, err := b.Client.Do(ctx, b.Client.B().Hexists().Key(q.k.Run()).Field(ulid).Build()).AsInt64(); err != nil || n != 0 {
			t.Errorf("a Run field for the finished task: %d %v, want none", n, err)
		}
	})
}

// A start is fenced by the claim's pending entry: a worker that stalled
// between its claim and start.lua (SIGSTOP, a long pause), meanwhile
// reclaimed by another worker, starts nothing — neither while the other
// runs the task nor once it finished it.
func TestStaleStartSkipped(t *testing.T) {
	t.Parallel()
	redistest.ForEachBackend(t, func(t *testing.T, b *redistest.Backend) {
		ctx := context.Background()
		q := New(b.Client, b.Namespace).Queue("q")
		if _, err := q.Enqueue(ctx, EnqueueConfig{}, []EnqueueItem{{Type: "t", Payload: []byte("1"), Priority: 5, MaxAttempts: 3, Timeout: time.Minute}}); err != nil {
			t.Fatal(err)
		}
		ensureGroups(t, q)
		es, missing, err := q.ReadBands(ctx, "w1", 1, 0, 0)
		if err != nil || missing || len(es) != 1 {
			t.Fatalf("read: %d entries, missing=%v, %v", len(es), missing, err)
		}
		time.Sleep(20 * time.Millisecond)
		taken, tst := reclaim(t, q, "w2", 10*time.Millisecond)
		if len(taken) != 1 || tst[0].Code != Began {
			t.Fatalf("w2's takeover: %+v %+v", taken, tst)
		}
		staleStart := func(when string, want string) {
			t.Helper()
			st, err := q.Start(ctx, StartConfig{Worker: "w1", MaxCrashes: 3, Retention: time.Hour, LeaseTTL: time.Minute}, es)
			if err != nil || st[0].Code != Skipped {
				t.Errorf("w1's stale start %s: %+v, %v, want skipped", when, st, err)
			}
			r, err := q.s.Get(ctx, es[0].TaskID)
			if err != nil || r.Status != want || r.Worker != "w2" || r.Run != 2 {
				t.Errorf("record after w1's stale start %s: %+v, %v, want %s by w2 in run 2", when, r, err, want)
			}
		}
		staleStart("while w2 runs it", StatusRunning)
		if got := finishOK(t, q, "w2", taken[0], tst[0], 2); got != StatusSucceeded {
			t.Fatalf("w2's outcome: %q", got)
		}
		staleStart("after w2 finished it", StatusSucceeded)
	})
}

// A planned read (a busy worker's claim from the bands' counts) reads the
// queue's state with its claims, so that they start as implicit first runs
// as a plain read's do; the state is the queue's (a band's regroup mark
// holds back what is at or before it), and a read without it starts
// nothing.
func TestPlannedReadStartsImplicitly(t *testing.T) {
	t.Parallel()
	redistest.ForEachBackend(t, func(t *testing.T, b *redistest.Backend) {
		ctx := context.Background()
		q := New(b.Client, b.Namespace).Queue("q")
		var items []EnqueueItem
		for _, prio := range []int{3, 7, 7, 3} {
			items = append(items, EnqueueItem{Type: "t", Payload: []byte("1"), Priority: prio, MaxAttempts: 3, Timeout: time.Minute})
		}
		res, err := q.Enqueue(ctx, EnqueueConfig{}, items)
		if err != nil {
			t.Fatal(err)
		}
		ensureGroups(t, q)
		_, ulid, _ := taskid.Parse(res[0].ID)
		_, band3First, _ := taskid.Entry(ulid)
		if err := b.Client.Do(ctx, b.Client.B().Hset().Key(q.k.Info()).FieldValue().FieldValue(InfoRegrouped+"3", band3First).Build()).Error(); err != nil {
			t.Fatal(err)
		}

		paused, es, st, err := q.ReadPlanned(ctx, "w1", 3, true)
		if err != nil || paused || len(es) != 3 {
			t.Fatalf("planned read: paused=%v, %d entries, %v", paused, len(es), err)
		}
		if st.Now == "" || st.Regrouped[3] != band3First {
			t.Fatalf("state read with the claims: %+v", st)
		}
		started := StartImplicit(es, st)
		for i, e := range es {
			want := Began
			if e.Band == 3 && e.EntryID == band3First {
				want = Unstarted // at its band's regroup mark: start.lua judges it
			}
			if started[i].Code != want {
				t.Errorf("entry %d (band %d, %s): %+v, want code %v", i, e.Band, e.EntryID, started[i], want)
			}
		}
		if es[0].Band != 7 || es[1].Band != 7 || es[2].Band != 3 {
			t.Errorf("bands %d %d %d, want 7 7 3 (highest first)", es[0].Band, es[1].Band, es[2].Band)
		}
		if got := finishOK(t, q, "w1", es[0], started[0], 1); got != StatusSucceeded {
			t.Errorf("the implicit run's outcome: %q, want SUCCEEDED", got)
		}

		_, es, st, err = q.ReadPlanned(ctx, "w1", 3, false)
		if err != nil || len(es) != 1 {
			t.Fatalf("planned read without state: %d entries, %v", len(es), err)
		}
		if s := StartImplicit(es, st); s[0].Code != Unstarted {
			t.Errorf("without the state: %+v, want unstarted", s[0])
		}
	})
}

// A claim delivered after its queue's pause is not started (the state read
// after it says paused; start.lua gives it back): until it is given back,
// its task reads QUEUED, not RUNNING. A run started before the pause still
// reads RUNNING.
func TestClaimAfterPauseReadsQueued(t *testing.T) {
	t.Parallel()
	redistest.ForEachBackend(t, func(t *testing.T, b *redistest.Backend) {
		ctx := context.Background()
		q := New(b.Client, b.Namespace).Queue("q")
		es, _ := claimImplicit(t, q, "w1", 1)
		if err := q.SetPaused(ctx, true); err != nil {
			t.Fatal(err)
		}
		time.Sleep(10 * time.Millisecond) // a delivery well after the pause (past claimedWhilePaused's margin)
		if _, err := q.Enqueue(ctx, EnqueueConfig{}, []EnqueueItem{{Type: "t", Payload: []byte("2"), Priority: 5,
			MaxAttempts: 3, Timeout: time.Minute}}); err != nil {
			t.Fatal(err)
		}
		claimed, st, _, err := q.ReadBandsState(ctx, "w2", 1, 0, 0)
		if err != nil || len(claimed) != 1 {
			t.Fatalf("read: %+v %v", claimed, err)
		}
		if s := StartImplicit(claimed, st); s[0].Code != Unstarted {
			t.Fatalf("implicit start on a paused queue: %+v", s[0])
		}
		if r, err := q.s.Get(ctx, claimed[0].TaskID); err != nil || r.Status != StatusQueued {
			t.Errorf("claimed after the pause: %+v %v, want QUEUED", r, err)
		}
		if r, err := q.s.Get(ctx, es[0].TaskID); err != nil || r.Status != StatusRunning {
			t.Errorf("started before the pause: %+v %v, want RUNNING", r, err)
		}
		sts, err := q.Start(ctx, StartConfig{Worker: "w2", MaxCrashes: 3, Retention: time.Hour}, claimed)
		if err != nil || sts[0].Code == Began {
			t.Fatalf("start on a paused queue: %+v %v, want given back", sts, err)
		}
		if r, err := q.s.Get(ctx, claimed[0].TaskID); err != nil || r.Status != StatusQueued {
			t.Errorf("given back: %+v %v, want QUEUED", r, err)
		}
		// Resumed, a new task's claim reads RUNNING again (as an implicit
		// run's would; the given-back one reads its hash).
		if err := q.SetPaused(ctx, false); err != nil {
			t.Fatal(err)
		}
		if _, err := q.Enqueue(ctx, EnqueueConfig{}, []EnqueueItem{{Type: "t", Payload: []byte("3"), Priority: 9,
			MaxAttempts: 3, Timeout: time.Minute}}); err != nil {
			t.Fatal(err)
		}
		again, _, err := q.ReadBands(ctx, "w2", 1, 0, 0)
		if err != nil || len(again) == 0 || !again[0].Born {
			t.Fatalf("read after the resume: %+v %v", again, err)
		}
		if r, err := q.s.Get(ctx, again[0].TaskID); err != nil || r.Status != StatusRunning {
			t.Errorf("claimed after the resume: %+v %v, want RUNNING", r, err)
		}
	})
}
