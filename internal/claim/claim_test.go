package claim_test

import (
	"context"
	"io"
	"log/slog"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/dtq-dev/dtq/internal/claim"
	"github.com/dtq-dev/dtq/internal/redistest"
	"github.com/dtq-dev/dtq/internal/store"
)

func TestMain(m *testing.M) { os.Exit(redistest.Main(m)) }

// hooks records what a claimer tells its runner.
type hooks struct {
	mu         sync.Mutex
	registered int
	published  []string // task ids of RUNNING events
	throttled  int
	errs       []error
}

func (h *hooks) Durability() store.Durability { return store.Durability{} }
func (h *hooks) Register(context.Context) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.registered++
	return nil
}

func (h *hooks) Publish(started []claim.Claim) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, c := range started {
		h.published = append(h.published, c.Entry.TaskID)
	}
}

func (h *hooks) Throttled(n int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.throttled += n
}
func (h *hooks) Reclaimed([]store.Entry)             {}
func (h *hooks) Ended(*store.Entry, store.StartCode) {}
func (h *hooks) OnFull(*store.Entry, *store.Started) {}
func (h *hooks) RedisError(_ string, err error) {
	h.mu.Lock()
	h.errs = append(h.errs, err)
	h.mu.Unlock()
}
func (h *hooks) publishedIDs() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.published...)
}
func (h *hooks) registrations() int { h.mu.Lock(); defer h.mu.Unlock(); return h.registered }
func enqueue(t *testing.T, q *store.Queue, types ...string) []string {
	t.Helper()
	items := make([]store.EnqueueItem, len(types))
	for i, typ := range types {
		items[i] = store.EnqueueItem{Type: typ, Payload: []byte(`"p"`), Priority: 5, MaxAttempts: 3, Timeout: time.Minute}
	}
	res, err := q.Enqueue(context.Background(), store.EnqueueConfig{}, items)
	if err != nil {
		t.Fatal(err)
	}
	ids := make([]string, len(res))
	for i, r := range res {
		ids[i] = r.ID
	}
	return ids
}

func newClaimer(b *redistest.Backend, h *hooks) (*claim.Claimer, *store.Queue) {
	q := store.New(b.Client, b.Namespace).Queue("q")
	return claim.New(claim.Config{Queue: "q", Store: q, Hooks: h, Log: slog.New(slog.NewTextHandler(io.Discard, nil)),
		MaxCrashes: 3, Visibility: 30 * time.Second}), q
}

// A lease poll of a holder of one type claims and starts only that
// type's tasks, maps each started entry to its record, publishes their
// RUNNING events and registers the queue; the others stay queued for
// another runner.
func TestLeaseTakesItsTypesAndMapsTheRecord(t *testing.T) {
	t.Parallel()
	redistest.ForEachBackend(t, func(t *testing.T, b *redistest.Backend) {
		ctx := context.Background()
		h := &hooks{}
		c, q := newClaimer(b, h)
		ids := enqueue(t, q, "resize", "transcode", "resize")
		got, err := claim.Lease(ctx, []*claim.Claimer{c}, claim.Poll{Consumer: "http:w1", Max: 10, Types: claim.Types{"resize": true},
			TTL: 30 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 2 || got[0].Entry.TaskID != ids[0] || got[1].Entry.TaskID != ids[2] {
			t.Fatalf("leased %+v, want the two resize tasks %s and %s", got, ids[0], ids[2])
		}
		r := got[0].Record("http:w1")
		if r.ID != ids[0] || r.Queue != "q" || r.Type != "resize" || string(r.Payload) != `"p"` || r.Status != store.StatusRunning ||
			r.Attempt != 1 || r.Run != got[0].Started.Run || r.Worker != "http:w1" || r.MaxAttempts != 3 || r.Priority != 5 || r.Started == 0 {
			t.Errorf("record of the started entry: %+v", r)
		}
		if p := h.publishedIDs(); len(p) != 2 || p[0] != ids[0] || p[1] != ids[2] {
			t.Errorf("RUNNING events published for %v, want %v", p, []string{ids[0], ids[2]})
		}
		if h.registrations() == 0 {
			t.Error("the queue was never registered before its read")
		}
		// The transcode task is still there for a runner of its type.
		other, err := claim.Lease(ctx, []*claim.Claimer{c}, claim.Poll{Consumer: "http:w2", Max: 10, TTL: 30 * time.Second})
		if err != nil || len(other) != 1 || other[0].Entry.TaskID != ids[1] {
			t.Fatalf("a holder of every type leased %+v (%v), want the transcode task %s", other, err, ids[1])
		}
	})
}

// A reader claims and hands over every task once, in slots it frees only
// when told (a task's outcome recorded), and stops with its context.
func TestReaderLaunchesEachTaskOnce(t *testing.T) {
	t.Parallel()
	redistest.ForEachBackend(t, func(t *testing.T, b *redistest.Backend) {
		h := &hooks{}
		c, q := newClaimer(b, h)
		types := make([]string, 200)
		for i := range types {
			types[i] = "job"
		}
		ids := enqueue(t, q, types...)
		var mu sync.Mutex
		seen := map[string]int{}
		var r *claim.Reader
		r = claim.NewReader(c, claim.ReaderConfig{Consumer: "w1", Visibility: 30 * time.Second, Share: 4,
			Held: func(string) bool { return true },
			Launch: func(cs []claim.Claim, _ time.Time) {
				mu.Lock()
				for _, c := range cs {
					seen[c.Entry.TaskID]++
				}
				mu.Unlock()
				r.Slots.Release(len(cs)) // as a worker does once each outcome is recorded
			}})
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() {
			defer close(done)
			r.Run(ctx, claim.RunConfig{Types: claim.Types{"job": true}, TypeList: []string{"job"}, AheadBelow: claim.AheadBelow})
		}()
		deadline := time.Now().Add(20 * time.Second)
		for {
			mu.Lock()
			n := len(seen)
			mu.Unlock()
			if n == len(ids) || time.Now().After(deadline) {
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
		cancel()
		<-done
		mu.Lock()
		defer mu.Unlock()
		for _, id := range ids {
			if seen[id] != 1 {
				t.Errorf("task %s launched %d times, want once", id, seen[id])
			}
		}
		if len(seen) != len(ids) {
			t.Errorf("launched %d distinct tasks, want %d", len(seen), len(ids))
		}
	})
}

// Watch wakes for an entry of its types added after the marks, not for
// one of another type.
func TestWatchWakesOnlyForItsTypes(t *testing.T) {
	t.Parallel()
	redistest.ForEachBackend(t, func(t *testing.T, b *redistest.Backend) {
		ctx := context.Background()
		q := store.New(b.Client, b.Namespace).Queue("q")
		enqueue(t, q, "seed") // the bands exist
		marks, err := q.Tails(ctx)
		if err != nil {
			t.Fatal(err)
		}
		enqueue(t, q, "transcode")
		mine := claim.Types{"resize": true}
		if woke, err := claim.Watch(ctx, q, marks, mine, 200*time.Millisecond); err != nil || woke {
			t.Fatalf("Watch after another type's entry: woke %v (%v), want no wake", woke, err)
		}
		go func() {
			time.Sleep(100 * time.Millisecond)
			item := store.EnqueueItem{Type: "resize", Payload: []byte(`"p"`), MaxAttempts: 1, Timeout: time.Minute}
			if _, err := q.Enqueue(ctx, store.EnqueueConfig{}, []store.EnqueueItem{item}); err != nil {
				t.Error(err)
			}
		}()
		if woke, err := claim.Watch(ctx, q, marks, mine, 5*time.Second); err != nil || !woke {
			t.Fatalf("Watch with an entry of its type added: woke %v (%v), want a wake", woke, err)
		}
	})
}

// A reader beside a task of another type reaches its wait whatever the
// reads between bring: an empty read (the give-back of the task still on
// its way, so a non-blocking read finds nothing) forgets nothing. (It
// forgot the marks, and on a loaded machine the reader span a blocking read
// that returned the given-back task at once, CI's
// TestGoWorkerBesideAnotherTypeDoesNotSpin: 3,843 commands in 2 s.)
func TestPassOthersKeepsMarksOverEmptyReads(t *testing.T) {
	t.Parallel()
	redistest.ForEachBackend(t, func(t *testing.T, b *redistest.Backend) {
		c, q := newClaimer(b, &hooks{})
		ids := enqueue(t, q, "other")
		r := claim.NewReader(c, claim.ReaderConfig{Consumer: "w1", Visibility: 30 * time.Second, Share: 4})
		mine := claim.Types{"mine": true}
		other := []store.Entry{{TaskID: ids[0], Spec: &store.Spec{Type: "other"}}}
		for i, read := range [][]store.Entry{other, nil, other, nil} {
			claim.PassOthers(t.Context(), r, mine, read)
			if claim.WaitsForTypes(r) {
				t.Fatalf("waits after read %d", i)
			}
		}
		claim.PassOthers(t.Context(), r, mine, other)
		if !claim.WaitsForTypes(r) {
			t.Fatal("the third read of only the given-back task did not make the reader wait")
		}
	})
}
