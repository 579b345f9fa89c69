package store

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/dtq-dev/dtq/internal/redistest"
)

// startRuled enqueues tasks with payloads of limit key "acct" in q and
// starts them in one batch under their scoped limits: each one's code and
// what a full limit's rule did at its start.
func startRuled(t *testing.T, q *Queue, payloads ...string) (ids []string, out []Started) {
	t.Helper()
	ctx := context.Background()
	items := make([]EnqueueItem, len(payloads))
	for i, p := range payloads {
		items[i] = item("t", p, "acct")
	}
	res, err := q.Enqueue(ctx, EnqueueConfig{}, items)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res {
		ids = append(ids, r.ID)
	}
	entries, _, err := q.ReadBands(ctx, "w", len(payloads), 0, 0)
	if err != nil || len(entries) != len(payloads) {
		t.Fatalf("claimed %d of %d: %v", len(entries), len(payloads), err)
	}
	for i := range entries {
		entries[i].Scopes = []string{ScopeKey + "acct"}
	}
	out, err = q.Start(ctx, StartConfig{Worker: "w", MaxCrashes: 3, Retention: time.Hour, LeaseTTL: time.Minute}, entries)
	if err != nil {
		t.Fatal(err)
	}
	return ids, out
}

// summary is "<code><rule> …" per start, with the payload ids replaced.
func summary(out []Started, ids []string) string {
	s := ""
	for _, st := range out {
		s += fmt.Sprintf(" %d%s", st.Code, st.OnFull)
		for _, r := range st.Replaced {
			for i, id := range ids {
				if r.ID == id {
					s += fmt.Sprintf("[%d:%s]", i, r.Type)
				}
			}
		}
	}
	return s[1:]
}

// Start answers what the rule of a full limit did at each start, once per
// task acted on: the newest cancelled at its start; one cancellation of
// the oldest run requested, not again while it is pending; each waiter
// replaced listed once, at the first start that replaced it, though a
// later start of the batch replaces it again.
func TestStartReportsOnFullRules(t *testing.T) {
	t.Parallel()
	redistest.ForEachBackend(t, func(t *testing.T, b *redistest.Backend) {
		ctx := context.Background()
		s := New(b.Client, b.Namespace)
		for q, rule := range map[string]string{"n": OnFullCancelNewest, "r": OnFullCancelRunning, "w": OnFullReplaceWaiting} {
			q := s.Queue(q)
			ensureGroups(t, q)
			if err := q.SetScopeLimit(ctx, ScopeDef{Scope: ScopeKey + "acct", MaxRunning: 1, OnFull: rule}); err != nil {
				t.Fatal(err)
			}
		}

		ids, out := startRuled(t, s.Queue("n"), "a", "b", "c")
		if got, want := summary(out, ids), "1 -2n -2n"; got != want {
			t.Errorf("cancel_newest: %s, want %s", got, want)
		}

		ids, out = startRuled(t, s.Queue("r"), "a")
		if got := summary(out, ids); got != "1" {
			t.Fatalf("cancel_running, the first: %s", got)
		}
		ids, out = startRuled(t, s.Queue("r"), "b", "c")
		if got, want := summary(out, ids), "3r 3"; got != want {
			t.Errorf("cancel_running: %s, want %s (one request while it is pending)", got, want)
		}

		ids, out = startRuled(t, s.Queue("w"), "a", "b", "c", "d")
		if got, want := summary(out, ids), "1 3 3w[1:t] 3w[2:t]"; got != want {
			t.Errorf("replace_waiting: %s, want %s", got, want)
		}
		for i, want := range []string{StatusRunning, StatusCancelled, StatusCancelled, StatusQueued} {
			if rec, err := s.Get(ctx, ids[i]); err != nil || rec.Status != want {
				t.Errorf("replace_waiting, task %d: %+v %v, want %s", i, rec, err, want)
			}
		}
	})
}
