package scheduler

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dtq-dev/dtq/internal/redistest"
	"github.com/dtq-dev/dtq/internal/store"
	"github.com/dtq-dev/dtq/internal/taskid"
)

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// putSchedule stores a schedule of q created at base (Unix ms).
func putSchedule(t *testing.T, q *store.Queue, name, cron, missed string, catchUp int, base int64) {
	t.Helper()
	def := store.ScheduleDef{Name: name, Cron: cron, TimeZone: "UTC", Type: "tick", Payload: json.RawMessage(`null`),
		Priority: 5, MaxAtt: 3, TimeoutMs: 60000, Missed: missed, CatchUpMax: catchUp, Created: base, Updated: base}
	if _, err := q.PutSchedule(t.Context(), def, base+1, base, false); err != nil {
		t.Fatal(err)
	}
}

// firedTicks returns, for every task in q's band 5, the tick it was fired
// for, and fails on a task of another schedule.
func firedTicks(t *testing.T, b *redistest.Backend, q *store.Queue, name string) map[int64]int {
	t.Helper()
	c := b.Client
	es, err := c.Do(t.Context(), c.B().Xrange().Key(q.Keys().Band(5)).Start("-").End("+").Build()).AsXRange()
	if err != nil {
		t.Fatal(err)
	}
	ticks := map[int64]int{}
	for _, e := range es {
		_, ulid, err := taskid.Parse(e.FieldValues[store.EntryID])
		if err != nil {
			t.Fatalf("entry %s: %v", e.ID, err)
		}
		h, err := c.Do(t.Context(), c.B().Hmget().Key(q.Keys().Task(ulid)).Field(store.FieldSchedule, store.FieldTick).Build()).AsStrSlice()
		if err != nil || h[0] != name {
			t.Fatalf("task %s: schedule %v (%v), want %s", ulid, h, err, name)
		}
		tick, _ := strconv.ParseInt(h[1], 10, 64)
		ticks[tick]++
	}
	return ticks
}

// Three schedulers race over 1,000 consecutive ticks of @every 1s on a
// fake clock (each sees the clock at its own moment, a tick late or not
// at all): every tick creates exactly one task.
func TestRacingSchedulersFireEachTickOnce(t *testing.T) {
	redistest.ForEachBackend(t, func(t *testing.T, b *redistest.Backend) {
		ctx := context.Background()
		q := store.New(b.Client, b.Namespace).Queue("q")
		base := int64(1_796_000_000_000) // a whole second
		putSchedule(t, q, "every", "@every 1s", "catch_up", 0, base)
		const ticks = 1000
		var clock atomic.Int64
		clock.Store(base)
		var wg sync.WaitGroup
		stop := make(chan struct{})
		for i := range 3 {
			s := &Scheduler{Queue: q, Owner: "s" + strconv.Itoa(i), Log: quiet}
			wg.Go(func() {
				for {
					select {
					case <-stop:
						return
					default:
					}
					if _, err := s.fireSchedulesAt(ctx, clock.Load()); err != nil {
						t.Error(err)
						return
					}
				}
			})
		}
		for i := 1; i <= ticks; i++ {
			clock.Store(base + int64(i)*1000)
			time.Sleep(200 * time.Microsecond)
		}
		// let the schedulers see the last tick (a slow host may take a
		// while: wait for the count, then for the calls still in flight)
		for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
			n, err := b.Client.Do(ctx, b.Client.B().Xlen().Key(q.Keys().Band(5)).Build()).AsInt64()
			if err != nil {
				t.Fatal(err)
			}
			if n >= ticks {
				break
			}
		}
		close(stop)
		wg.Wait()
		got := firedTicks(t, b, q, "every")
		for i := 1; i <= ticks; i++ {
			tick := base + int64(i)*1000
			if got[tick] != 1 {
				t.Errorf("tick %d fired %d tasks, want 1", i, got[tick])
			}
		}
		if len(got) != ticks {
			t.Errorf("%d distinct ticks fired, want %d", len(got), ticks)
		}
	})
}

// After a 10-minute outage of a minutely schedule, skip fires the latest
// missed tick only, catch_up every missed one.
func TestMissedTicksAfterOutage(t *testing.T) {
	redistest.ForEachBackend(t, func(t *testing.T, b *redistest.Backend) {
		base := int64(1_796_000_040_000) // hh:mm:00 UTC
		base -= base % 60000
		after := base + 10*60000 + 30000 // 10 min 30 s later
		for _, c := range []struct {
			missed string
			want   []int64
		}{
			{"skip", []int64{base + 10*60000}},
			{"catch_up", []int64{base + 60000, base + 2*60000, base + 3*60000, base + 4*60000, base + 5*60000,
				base + 6*60000, base + 7*60000, base + 8*60000, base + 9*60000, base + 10*60000}},
		} {
			q := store.New(b.Client, b.Namespace).Queue(c.missed)
			putSchedule(t, q, "minutely", "* * * * *", c.missed, 0, base)
			s := &Scheduler{Queue: q, Owner: "s", Log: quiet}
			wait, err := s.fireSchedulesAt(t.Context(), after)
			if err != nil {
				t.Fatal(err)
			}
			if wait != 30*time.Second {
				t.Errorf("%s: next tick in %v, want 30s", c.missed, wait)
			}
			got := firedTicks(t, b, q, "minutely")
			if len(got) != len(c.want) {
				t.Errorf("%s: fired %d ticks %v, want %d", c.missed, len(got), got, len(c.want))
			}
			for _, tick := range c.want {
				if got[tick] != 1 {
					t.Errorf("%s: tick %s fired %d tasks, want 1", c.missed, time.UnixMilli(tick).UTC(), got[tick])
				}
			}
			// the same moment again fires nothing more
			if _, err := s.fireSchedulesAt(t.Context(), after); err != nil {
				t.Fatal(err)
			}
			if again := firedTicks(t, b, q, "minutely"); len(again) != len(c.want) {
				t.Errorf("%s: a second pass fired again: %v", c.missed, again)
			}
		}
	})
}
