package store

import (
	"context"
	"testing"
	"time"

	"github.com/dtq-dev/dtq/internal/redistest"
)

// Leases hold a queue-wide limit across callers: at most the limit are
// live, a release of a full limit moves the wakeup stream, and a lease no
// one renews expires.
func TestLeases(t *testing.T) {
	t.Parallel()
	redistest.ForEachBackend(t, func(t *testing.T, b *redistest.Backend) {
		ctx := context.Background()
		q := New(b.Client, b.Namespace).Queue("q")
		names := func(prefix string, n int) []string {
			var out []string
			for i := range n {
				out = append(out, prefix+"|"+itoa(i))
			}
			return out
		}
		// No limit: everything granted, nothing written.
		g, err := q.AcquireLeases(ctx, "acquire", time.Minute, names("a", 5))
		if err != nil || g.Granted != 5 || g.Mode != Unlimited {
			t.Fatalf("without a limit: %+v, %v", g, err)
		}
		if n, _ := b.Client.Do(ctx, b.Client.B().Exists().Key(q.k.Leases()).Build()).AsInt64(); n != 0 {
			t.Fatal("leases written without a limit")
		}

		if err := q.SetLimits(ctx, LimitDef{MaxRunning: 3}); err != nil {
			t.Fatal(err)
		}
		a, err := q.AcquireLeases(ctx, "acquire", time.Minute, names("a", 2))
		if err != nil || a.Granted != 2 || a.Mode != Leased {
			t.Fatalf("a: %+v, %v", a, err)
		}
		bb, err := q.AcquireLeases(ctx, "acquire", time.Minute, names("b", 2))
		if err != nil || bb.Granted != 1 {
			t.Fatalf("b, one slot left: %+v, %v", bb, err)
		}
		full, err := q.AcquireLeases(ctx, "acquire", time.Minute, names("c", 1))
		if err != nil || full.Granted != 0 || full.Retry.IsZero() || full.Wakeup == "" {
			t.Fatalf("c, the limit full: %+v, %v", full, err)
		}
		if d, inUse, err := q.Limits(ctx); err != nil || d.MaxRunning != 3 || inUse != 3 {
			t.Fatalf("Limits: %+v %d %v", d, inUse, err)
		}
		// A release of a full limit moves the wakeup stream.
		if err := q.ReleaseLeases(ctx, names("a", 1), 0); err != nil {
			t.Fatal(err)
		}
		after, err := q.AcquireLeases(ctx, "acquire", time.Minute, names("c", 2))
		if err != nil || after.Granted != 1 || after.Wakeup == full.Wakeup {
			t.Fatalf("c after a release: %+v (before %+v), %v", after, full, err)
		}
		// Leases that are not renewed expire; renewed ones stay.
		if err := q.ReleaseLeases(ctx, append(names("a", 2), names("b", 1)...), 0); err != nil {
			t.Fatal(err)
		}
		short, err := q.AcquireLeases(ctx, "acquire", 100*time.Millisecond, names("d", 2)) // with c|0: the limit is full
		if err != nil || short.Granted != 2 {
			t.Fatalf("d: %+v, %v", short, err)
		}
		if err := q.RenewLeases(ctx, time.Minute, names("d", 1)); err != nil {
			t.Fatal(err)
		}
		time.Sleep(200 * time.Millisecond)
		late, err := q.AcquireLeases(ctx, "acquire", time.Minute, names("e", 2))
		if err != nil || late.Granted != 1 {
			t.Fatalf("e, after d|1 expired: %+v, %v (want the one slot it freed)", late, err)
		}
		if err := q.SetLimits(ctx, LimitDef{}); err != nil {
			t.Fatal(err)
		}
		if d, _, _ := q.Limits(ctx); d.Limited() {
			t.Fatalf("limits after removal: %+v", d)
		}
	})
}

// The rate limit grants a burst after an idle spell, then one claim per
// emission interval; unused claims given back count again; a pause grants
// nothing until it ends.
func TestRateLimitGrants(t *testing.T) {
	t.Parallel()
	redistest.ForEachBackend(t, func(t *testing.T, b *redistest.Backend) {
		ctx := context.Background()
		q := New(b.Client, b.Namespace).Queue("q")
		if err := q.SetLimits(ctx, LimitDef{Rate: 10, Per: time.Second, Burst: 3}); err != nil { // one per 100 ms, bursts of 3
			t.Fatal(err)
		}
		acquire := func(n int) Grant {
			t.Helper()
			names := make([]string, n)
			for i := range names {
				names[i] = "w|" + itoa(i)
			}
			g, err := q.AcquireLeases(ctx, "acquire", time.Minute, names)
			if err != nil {
				t.Fatal(err)
			}
			return g
		}
		burst := time.Now()
		if g := acquire(5); g.Granted != 3 || g.Mode != RateOnly {
			t.Fatalf("after idle: %+v, want the burst of 3", g)
		}
		g := acquire(1)
		if g.Granted != 0 || g.Retry.IsZero() || time.Until(g.Retry) > 150*time.Millisecond {
			t.Fatalf("right after the burst: %+v, want none, retry within ~100 ms", g)
		}
		if n, _ := b.Client.Do(ctx, b.Client.B().Exists().Key(q.k.Leases()).Build()).AsInt64(); n != 0 {
			t.Fatal("a rate limit alone wrote leases")
		}
		if err := q.ReleaseLeases(ctx, nil, 2); err != nil { // two of the burst unused
			t.Fatal(err)
		}
		// The 2 given back, and one more per 100 ms since the burst (a
		// loaded host may take that long), up to the burst.
		if g := acquire(5); g.Granted < 2 || g.Granted > min(3, 2+int(time.Since(burst)/(100*time.Millisecond))) {
			t.Fatalf("%v after the burst, having given 2 back: %+v", time.Since(burst).Round(time.Millisecond), g)
		}
		emptied := time.Now()
		time.Sleep(time.Until(g.Retry) + 120*time.Millisecond)
		// One claim per 100 ms since the bucket emptied, up to the burst:
		// at least one, and no more than the time that passed allows (a
		// loaded host sleeps longer than asked).
		g = acquire(5)
		if most := min(3, int(time.Since(emptied)/(100*time.Millisecond))+1); g.Granted < 1 || g.Granted > most {
			t.Fatalf("%v later: %+v, want 1 to %d", time.Since(emptied).Round(time.Millisecond), g, most)
		}
		if err := q.PauseLimits(ctx, time.Hour); err != nil {
			t.Fatal(err)
		}
		time.Sleep(300 * time.Millisecond)
		if g := acquire(1); g.Granted != 0 || time.Until(g.Retry) < 59*time.Minute {
			t.Fatalf("paused: %+v", g)
		}
		if d, _, _ := q.Limits(ctx); d.Rate != 10 || d.Per != time.Second || d.Burst != 3 || d.PausedTo.IsZero() {
			t.Fatalf("Limits: %+v", d)
		}
	})
}
