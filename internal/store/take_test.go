package store

import (
	"context"
	"testing"
	"time"

	"github.com/dtq-dev/dtq/internal/redistest"
	"github.com/dtq-dev/dtq/internal/taskid"
)

// take.lua names a born task's Run field by the ULID taskid.FromEntry
// derives from its entry: the two must agree on every band and on entry
// ids whose parts need every digit.
func TestBornULIDMatchesTaskID(t *testing.T) {
	t.Parallel()
	redistest.ForEachBackend(t, func(t *testing.T, b *redistest.Backend) {
		ctx := context.Background()
		probe := libSource + "\nreturn born_ulid(ARGV[1], ARGV[2], {}) or ''"
		ids := []string{"0-0", "1-1", "31-31", "32-32", "1796123962271-0", "1796123962271-3", "1796123962271-31",
			"1796123962271-32", "1796123962271-1023", "281474976710655-9007199254740991", "1796123962271-999999999999999"}
		for band := 0; band < Bands; band++ {
			for _, eid := range ids {
				got, err := b.Client.Do(ctx, b.Client.B().Eval().Script(probe).Numkeys(0).Arg(itoa(band), eid).Build()).ToString()
				if err != nil {
					t.Fatalf("band %d %s: %v", band, eid, err)
				}
				id, err := taskid.FromEntry("q", band, eid)
				if err != nil {
					t.Fatal(err)
				}
				if want := id[len("q-"):]; got != want {
					t.Errorf("band %d entry %s: born_ulid %q, taskid.FromEntry %q", band, eid, got, want)
				}
			}
			// Beyond a Lua number's exact integers: no ULID (Take leaves
			// such an entry to start.lua).
			got, err := b.Client.Do(ctx, b.Client.B().Eval().Script(probe).Numkeys(0).Arg(itoa(band), "1-9007199254740992").Build()).ToString()
			if err != nil || got != "" {
				t.Errorf("band %d, sequence 2^53: born_ulid %q (%v), want none", band, got, err)
			}
		}
	})
}

// Take starts the common case in the claim and leaves the others to Start:
// a paused queue's entries, entries beyond the credit (given back), and a
// task whose Run field exists already.
func TestTakeStartsOnlyTheCommonCase(t *testing.T) {
	t.Parallel()
	redistest.ForEachBackend(t, func(t *testing.T, b *redistest.Backend) {
		ctx := context.Background()
		q := New(b.Client, b.Namespace).Queue("q")
		var items []EnqueueItem
		for range 4 {
			items = append(items, EnqueueItem{Type: "t", Payload: []byte("1"), Priority: 5, MaxAttempts: 1, Timeout: time.Minute})
		}
		ids, err := q.Enqueue(ctx, EnqueueConfig{}, items)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := q.Read(ctx, ReadRequest{Consumer: "w", Credit: 1, EnsureGroups: true}); err != nil {
			t.Fatal(err) // claims the first task, unstarted: its groups exist now
		}
		// The second task has a Run field already (a cancel between claim
		// and start writes one): Take must not start it over it.
		_, second, _ := taskid.Parse(ids[1].ID)
		if err := b.Client.Do(ctx, b.Client.B().Hset().Key(q.k.Run()).FieldValue().FieldValue(second, "C").Build()).Error(); err != nil {
			t.Fatal(err)
		}
		cfg := StartConfig{Worker: "w", MaxCrashes: 3, Retention: time.Hour}
		entries, started, missing, err := q.Take(ctx, cfg, 2, 5)
		if err != nil || missing {
			t.Fatalf("take: %v missing=%v", err, missing)
		}
		if len(entries) != 2 || entries[0].TaskID != ids[1].ID || entries[1].TaskID != ids[2].ID {
			t.Fatalf("take claimed %+v, want tasks 2 and 3", entries)
		}
		if started[0].Code != Unstarted {
			t.Errorf("task with a Run field: code %d, want Unstarted", started[0].Code)
		}
		s := started[1]
		if s.Code != Began || s.Run != 1 || s.Attempt != 1 || s.Crashes != 0 || s.Started == "" {
			t.Errorf("new task: %+v, want began as run 1, attempt 1", s)
		}
		_, third, _ := taskid.Parse(ids[2].ID)
		v, err := b.Client.Do(ctx, b.Client.B().Hget().Key(q.k.Run()).Field(third).Build()).ToString()
		if err != nil || v != "1|1|0|"+s.Started+"|0|w" {
			t.Errorf("Run field of the started task = %q (%v)", v, err)
		}

		// Paused: nothing starts; the entry is left to Start (which gives
		// it back).
		if err := b.Client.Do(ctx, b.Client.B().Hset().Key(q.k.Info()).FieldValue().FieldValue(InfoPaused, "1").Build()).Error(); err != nil {
			t.Fatal(err)
		}
		entries, started, _, err = q.Take(ctx, cfg, 1, 0)
		if err != nil || len(entries) != 1 || started[0].Code != Unstarted || entries[0].GiveBack {
			t.Fatalf("paused take: %+v %+v %v, want one entry left unstarted", entries, started, err)
		}
	})
}

// Entries beyond the credit from a band above low come back to be given
// back, unstarted.
func TestTakeGivesBackBeyondCredit(t *testing.T) {
	t.Parallel()
	redistest.ForEachBackend(t, func(t *testing.T, b *redistest.Backend) {
		ctx := context.Background()
		q := New(b.Client, b.Namespace).Queue("q")
		items := []EnqueueItem{
			{Type: "t", Payload: []byte("1"), Priority: 7, MaxAttempts: 1, Timeout: time.Minute},
			{Type: "t", Payload: []byte("1"), Priority: 3, MaxAttempts: 1, Timeout: time.Minute},
		}
		if _, err := q.Enqueue(ctx, EnqueueConfig{}, items); err != nil {
			t.Fatal(err)
		}
		if _, err := q.Read(ctx, ReadRequest{Consumer: "w", Credit: 1, EnsureGroups: true}); err != nil {
			t.Fatal(err)
		}
		if _, err := q.Enqueue(ctx, EnqueueConfig{}, items); err != nil {
			t.Fatal(err)
		}
		entries, started, _, err := q.Take(ctx, StartConfig{Worker: "w", MaxCrashes: 3, Retention: time.Hour}, 1, 0)
		if err != nil {
			t.Fatal(err)
		}
		// The read claimed band 7's first entry; band 7's second comes
		// first, then band 3's first (one XREADGROUP asks each band for 1).
		if len(entries) != 2 || entries[0].Band != 7 || entries[1].Band != 3 {
			t.Fatalf("take: %+v", entries)
		}
		if started[0].Code != Began || entries[0].GiveBack {
			t.Errorf("first entry: %+v %+v, want started", entries[0], started[0])
		}
		if started[1].Code != Unstarted || !entries[1].GiveBack {
			t.Errorf("entry beyond the credit: %+v %+v, want given back unstarted", entries[1], started[1])
		}
	})
}
