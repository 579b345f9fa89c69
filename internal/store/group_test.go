package store

import (
	"context"
	"fmt"
	"os"
	"regexp"
	"testing"
	"time"

	"github.com/dtq-dev/dtq/internal/redistest"
)

// groupItems returns n tasks of group g, payload "<g><i>", priority p.
func groupItems(g string, n, p int) []EnqueueItem {
	var items []EnqueueItem
	for i := range n {
		items = append(items, EnqueueItem{Type: "t", Payload: fmt.Appendf(nil, "%s%d", g, i), Priority: p, MaxAttempts: 1,
			Timeout: time.Minute, Group: g})
	}
	return items
}

// startNext claims the queue's next task as a worker does — the highest
// band's first entry, the others read with it given back — and starts it.
// It returns the started task's payload ("" when none was there).
func startNext(t *testing.T, q *Queue) string {
	t.Helper()
	ctx := context.Background()
	entries, missing, err := q.ReadBands(ctx, "w", 1, 0, 0)
	if err != nil || missing {
		t.Fatalf("read: %v (missing group %v)", err, missing)
	}
	if len(entries) == 0 {
		return ""
	}
	for i := 1; i < len(entries); i++ {
		entries[i].GiveBack = true
	}
	st, err := q.Start(ctx, StartConfig{Worker: "w", MaxCrashes: 3, Retention: time.Hour}, entries)
	if err != nil {
		t.Fatal(err)
	}
	if st[0].Code != Began {
		t.Fatalf("start of %+v: %+v", entries[0], st[0])
	}
	return string(entries[0].Spec.Payload)
}

func ensureGroups(t *testing.T, q *Queue) {
	t.Helper()
	if _, err := q.Read(context.Background(), ReadRequest{Consumer: "probe", Credit: 0, EnsureGroups: true}); err != nil {
		t.Fatal(err)
	}
}

func counts(t *testing.T, q *Queue) Counts {
	t.Helper()
	cs, err := q.s.Counts(context.Background(), []string{q.name})
	if err != nil {
		t.Fatal(err)
	}
	return cs[0]
}

// A group keeps GroupWindow entries in the bands; each start moves its
// next waiter in, so a group submitted after another's backlog is served
// within a window of it, and each group's tasks start in submission order.
func TestGroupsTakeTurns(t *testing.T) {
	t.Parallel()
	redistest.ForEachBackend(t, func(t *testing.T, b *redistest.Backend) {
		ctx := context.Background()
		q := New(b.Client, b.Namespace).Queue("q")
		ensureGroups(t, q)
		if _, err := q.Enqueue(ctx, EnqueueConfig{}, groupItems("a", 40, 5)); err != nil {
			t.Fatal(err)
		}
		if _, err := q.Enqueue(ctx, EnqueueConfig{}, groupItems("b", 3, 5)); err != nil {
			t.Fatal(err)
		}
		ct := counts(t, q)
		if ct.QueuedByPriority[5] != GroupWindow+3 || ct.GroupWaiting != 40-GroupWindow || ct.Submitted != 43 {
			t.Fatalf("counts %+v: want %d in band 5, %d waiting, 43 submitted", ct, GroupWindow+3, 40-GroupWindow)
		}
		next := map[byte]int{'a': 0, 'b': 0}
		bDone := 0
		for i := range 43 {
			p := startNext(t, q)
			if p == "" {
				t.Fatalf("start %d: nothing to start (counts %+v)", i, counts(t, q))
			}
			if want := fmt.Sprintf("%c%d", p[0], next[p[0]]); p != want {
				t.Fatalf("start %d: %s, want %s (FIFO within a group)", i, p, want)
			}
			next[p[0]]++
			if p[0] == 'b' {
				bDone = i + 1
			}
		}
		if bDone > GroupWindow+3 {
			t.Errorf("b's 3 tasks were done only at start %d, want within the first %d", bDone, GroupWindow+3)
		}
		if p := startNext(t, q); p != "" {
			t.Errorf("a 44th start: %s", p)
		}
		ct = counts(t, q)
		if ct.GroupWaiting != 0 || ct.Running != 43 {
			t.Errorf("counts after: %+v", ct)
		}
		if n, _ := b.Client.Do(ctx, b.Client.B().Hlen().Key(q.k.GroupCount()).Build()).AsInt64(); n > 1 {
			t.Errorf("gcount keeps %d fields, want only the sequence", n)
		}
	})
}

// Within a group a waiter of a higher priority enters the bands first.
func TestGroupWaitersByPriority(t *testing.T) {
	t.Parallel()
	redistest.ForEachBackend(t, func(t *testing.T, b *redistest.Backend) {
		ctx := context.Background()
		q := New(b.Client, b.Namespace).Queue("q")
		ensureGroups(t, q)
		if _, err := q.Enqueue(ctx, EnqueueConfig{}, groupItems("a", GroupWindow+5, 1)); err != nil {
			t.Fatal(err)
		}
		hi := groupItems("h", 1, 8)
		hi[0].Group = "a"
		if _, err := q.Enqueue(ctx, EnqueueConfig{}, hi); err != nil {
			t.Fatal(err)
		}
		if p := startNext(t, q); p != "a0" {
			t.Fatalf("first start %s, want a0", p)
		}
		// a0's start moved the best waiter in: the priority-8 one.
		if p := startNext(t, q); p != "h0" {
			t.Fatalf("second start %s, want h0 (priority 8, waiting behind a's window)", p)
		}
	})
}

// A waiting task cancelled leaves the wait and never starts; the others
// still do.
func TestGroupWaiterCancelled(t *testing.T) {
	t.Parallel()
	redistest.ForEachBackend(t, func(t *testing.T, b *redistest.Backend) {
		ctx := context.Background()
		q := New(b.Client, b.Namespace).Queue("q")
		ensureGroups(t, q)
		res, err := q.Enqueue(ctx, EnqueueConfig{}, groupItems("a", GroupWindow+2, 5))
		if err != nil {
			t.Fatal(err)
		}
		if res[GroupWindow-1].GroupWaiting || !res[GroupWindow].GroupWaiting {
			t.Errorf("enqueue results: the 10th waiting %v, the 11th %v; want false, true",
				res[GroupWindow-1].GroupWaiting, res[GroupWindow].GroupWaiting)
		}
		waiting := res[GroupWindow].ID
		rec, err := q.s.Get(ctx, waiting)
		if err != nil || rec == nil || rec.Status != StatusQueued || !rec.GroupWaiting || rec.Group != "a" {
			t.Fatalf("the 11th task: %+v (%v), want QUEUED, waiting in group a", rec, err)
		}
		page, _, err := q.List(ctx, ListQuery{Status: StatusQueued, Limit: 100})
		if err != nil || len(page) != GroupWindow+2 || page[GroupWindow].ID != waiting {
			t.Fatalf("list of QUEUED: %d records (%v), want %d, the waiters after the bands", len(page), err, GroupWindow+2)
		}
		if st, _, err := q.Cancel(ctx, waiting, time.Hour); err != nil || st != StatusCancelled {
			t.Fatalf("cancel: %q %v", st, err)
		}
		if ct := counts(t, q); ct.GroupWaiting != 1 {
			t.Fatalf("waiting after the cancel: %d, want 1", ct.GroupWaiting)
		}
		var got []string
		for p := startNext(t, q); p != ""; p = startNext(t, q) {
			got = append(got, p)
		}
		if len(got) != GroupWindow+1 || got[GroupWindow] != fmt.Sprintf("a%d", GroupWindow+1) {
			t.Errorf("started %v, want every task but a%d", got, GroupWindow)
		}
	})
}

// The scheduler's sweep moves in the waiters of a group that has room and
// no start to move them (its worker was lost between a start and the move),
// and resets counts that say a group is full while the bands hold nothing
// queued.
func TestSweepGroupsRepairs(t *testing.T) {
	t.Parallel()
	redistest.ForEachBackend(t, func(t *testing.T, b *redistest.Backend) {
		ctx := context.Background()
		q := New(b.Client, b.Namespace).Queue("q")
		ensureGroups(t, q)
		if _, err := q.Enqueue(ctx, EnqueueConfig{}, groupItems("a", GroupWindow+4, 5)); err != nil {
			t.Fatal(err)
		}
		for range GroupWindow {
			startNext(t, q)
		}
		// Every start moved a waiter in. Undo it as a lost worker would
		// leave it: the 4 moved entries gone from the band, their tasks
		// back in the wait, the group's count at 0.
		bandKey := q.k.Band(5)
		xs, err := b.Client.Do(ctx, b.Client.B().Xrange().Key(bandKey).Start("-").End("+").Build()).AsXRange()
		if err != nil {
			t.Fatal(err)
		}
		pend, err := b.Client.Do(ctx, b.Client.B().Xpending().Key(bandKey).Group(Group).Start("-").End("+").Count(100).Build()).ToArray()
		if err != nil {
			t.Fatal(err)
		}
		running := map[string]bool{}
		for _, p := range pend {
			row, _ := p.ToArray()
			id, _ := row[0].ToString()
			running[id] = true
		}
		moved := 0
		for _, x := range xs {
			if running[x.ID] || x.FieldValues[EntryGroup] == "" {
				continue
			}
			id := x.FieldValues[EntryID]
			ulid := id[len(id)-26:]
			m := fmt.Sprintf("a|4|%016d|%s", 100+moved, ulid)
			for _, cmd := range []func() error{
				func() error { return b.Client.Do(ctx, b.Client.B().Xdel().Key(bandKey).Id(x.ID).Build()).Error() },
				func() error {
					return b.Client.Do(ctx, b.Client.B().Zadd().Key(q.k.GroupWait()).ScoreMember().ScoreMember(0, m).Build()).Error()
				},
				func() error {
					return b.Client.Do(ctx, b.Client.B().Hset().Key(q.k.Task(ulid)).FieldValue().FieldValue(FieldGroupWait, m).Build()).Error()
				},
			} {
				if err := cmd(); err != nil {
					t.Fatal(err)
				}
			}
			moved++
		}
		if moved != 4 {
			t.Fatalf("undid %d moves, want 4", moved)
		}
		if err := b.Client.Do(ctx, b.Client.B().Hdel().Key(q.k.GroupCount()).Field("a").Build()).Error(); err != nil {
			t.Fatal(err)
		}
		if p := startNext(t, q); p != "" {
			t.Fatalf("before the sweep %s started: the setup left something in the band", p)
		}
		next, n, err := q.SweepGroups(ctx, "", 10)
		if err != nil || n != 4 || next != "" {
			t.Fatalf("sweep: moved %d, next %q, %v; want 4 moved, done", n, next, err)
		}
		for i := range 4 {
			if p := startNext(t, q); p != fmt.Sprintf("a%d", GroupWindow+i) {
				t.Fatalf("after the sweep, start %d: %q", i, p)
			}
		}

		// Counts that drifted: the group seems full, the bands hold none of
		// its entries.
		if _, err := q.Enqueue(ctx, EnqueueConfig{}, groupItems("c", 1, 5)); err != nil {
			t.Fatal(err)
		}
		if p := startNext(t, q); p != "c0" {
			t.Fatalf("start %q, want c0", p)
		}
		if err := b.Client.Do(ctx, b.Client.B().Hset().Key(q.k.GroupCount()).FieldValue().FieldValue("c", itoa(GroupWindow)).Build()).Error(); err != nil {
			t.Fatal(err)
		}
		if _, err := q.Enqueue(ctx, EnqueueConfig{}, groupItems("c", 2, 5)); err != nil {
			t.Fatal(err)
		}
		if p := startNext(t, q); p != "" {
			t.Fatalf("start %q with c's count at the window", p)
		}
		if _, n, err := q.SweepGroups(ctx, "", 10); err != nil || n != 2 {
			t.Fatalf("sweep of drifted counts: moved %d, %v; want 2", n, err)
		}
	})
}

// The sweep visits a bounded number of groups per call and goes on from
// where it stopped.
func TestSweepGroupsCursor(t *testing.T) {
	t.Parallel()
	redistest.ForEachBackend(t, func(t *testing.T, b *redistest.Backend) {
		ctx := context.Background()
		q := New(b.Client, b.Namespace).Queue("q")
		ensureGroups(t, q)
		for _, g := range []string{"g1", "g2", "g3"} {
			if _, err := q.Enqueue(ctx, EnqueueConfig{}, groupItems(g, GroupWindow+1, 5)); err != nil {
				t.Fatal(err)
			}
			// as if its starts had happened and their moves were lost
			if err := b.Client.Do(ctx, b.Client.B().Hincrby().Key(q.k.GroupCount()).Field(g).Increment(-1).Build()).Error(); err != nil {
				t.Fatal(err)
			}
		}
		var visited []string
		after, total := "", 0
		for range 5 {
			next, n, err := q.SweepGroups(ctx, after, 2)
			if err != nil {
				t.Fatal(err)
			}
			total += n
			visited = append(visited, next)
			if next == "" {
				break
			}
			after = next
		}
		if total != 3 || fmt.Sprint(visited) != "[g2 ]" {
			t.Errorf("sweeps moved %d (want 3), stopped after %v (want [g2 ])", total, visited)
		}
	})
}

// lib_group.lua's GROUP_WINDOW is GroupWindow.
func TestGroupWindowAgrees(t *testing.T) {
	t.Parallel()
	src, err := os.ReadFile("lib_group.lua")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`local GROUP_WINDOW = (\d+)`).FindSubmatch(src)
	if m == nil || string(m[1]) != itoa(GroupWindow) {
		t.Fatalf("lib_group.lua's GROUP_WINDOW = %q, GroupWindow = %d", m, GroupWindow)
	}
}

// A group of weight 3 keeps three windows in the bands and is served three
// times as often as a group of weight 1 while both have work.
func TestGroupWeights(t *testing.T) {
	t.Parallel()
	redistest.ForEachBackend(t, func(t *testing.T, b *redistest.Backend) {
		ctx := context.Background()
		q := New(b.Client, b.Namespace).Queue("q")
		ensureGroups(t, q)
		if err := q.SetGroupWeight(ctx, "heavy", 3); err != nil {
			t.Fatal(err)
		}
		if _, err := q.Enqueue(ctx, EnqueueConfig{}, groupItems("light", 400, 5)); err != nil {
			t.Fatal(err)
		}
		if _, err := q.Enqueue(ctx, EnqueueConfig{}, groupItems("heavy", 400, 5)); err != nil {
			t.Fatal(err)
		}
		if ws, err := q.GroupWeights(ctx); err != nil || len(ws) != 1 || ws[0].Group != "heavy" || ws[0].Weight != 3 ||
			ws[0].Waiting != 400-3*GroupWindow {
			t.Fatalf("weights %+v %v, want heavy 3 with %d waiting", ws, err, 400-3*GroupWindow)
		}
		n := map[byte]int{}
		for range 40 + 3*GroupWindow + GroupWindow { // past the first windows, into the steady state
			n[startNext(t, q)[0]]++
		}
		n = map[byte]int{}
		for range 200 {
			n[startNext(t, q)[0]]++
		}
		if n['h'] < 140 || n['h'] > 160 {
			t.Errorf("of 200 starts heavy got %d, light %d: want 3 to 1 (150)", n['h'], n['l'])
		}
		t.Logf("of 200 starts heavy got %d, light %d", n['h'], n['l'])
		// The sweep's reset of drifted counts keeps the weight.
		if _, _, err := q.SweepGroups(ctx, "", 10); err != nil {
			t.Fatal(err)
		}
		if ws, _ := q.GroupWeights(ctx); len(ws) != 1 || ws[0].Weight != 3 {
			t.Errorf("weights after a sweep: %+v", ws)
		}
		if err := q.SetGroupWeight(ctx, "heavy", 1); err != nil {
			t.Fatal(err)
		}
		if ws, _ := q.GroupWeights(ctx); len(ws) != 0 {
			t.Errorf("weights after the reset to 1: %+v", ws)
		}
	})
}
