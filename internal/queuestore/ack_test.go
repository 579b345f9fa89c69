package queuestore_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/dtq-dev/dtq/internal/keys"
	"github.com/dtq-dev/dtq/internal/queuestore"
	"github.com/dtq-dev/dtq/internal/redistest"
	"github.com/redis/rueidis"
)

const group = "g"

// pending publishes n keyed messages to topic "a" and claims them all for
// consumer "c" (delivery count 1), returning their ids.
func pending(t *testing.T, b *redistest.Backend, q keys.Queue, n int) []string {
	t.Helper()
	ctx := t.Context()
	msgs := make([]queuestore.PutMessage, n)
	for i := range msgs {
		msgs[i] = queuestore.PutMessage{Topic: "a", Key: fmt.Sprintf("k%02d", i), Data: []byte("x"), Nonce: "p1"}
	}
	if _, err := queuestore.Put(ctx, b.Client, q, time.Second, msgs); err != nil {
		t.Fatal(err)
	}
	res, err := queuestore.Fetch(ctx, b.Client, q, queuestore.FetchRequest{
		Group: group, Consumer: "c", Topics: []string{"a"}, Cursors: []string{"0-0"},
		Credit: n, DeadMaxLen: 10, PromoteMax: 10,
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Entries) != n {
		t.Fatalf("fetched %d, want %d", len(res.Entries), n)
	}
	ids := make([]string, n)
	for i, e := range res.Entries {
		ids[i] = e.ID
	}
	return ids
}

// steal gives entry id to consumer to with delivery count 2, as a reclaim
// does (by another subscription, or by the holder's own reclaim pass).
func steal(t *testing.T, c rueidis.Client, q keys.Queue, id, to string) {
	t.Helper()
	cmd := c.B().Xclaim().Key(q.Stream("a")).Group(group).Consumer(to).MinIdleTime("0").Id(id).Retrycount(2).Justid().Build()
	if err := c.Do(t.Context(), cmd).Error(); err != nil {
		t.Fatal(err)
	}
}

func owner(t *testing.T, c rueidis.Client, q keys.Queue, id string) string {
	t.Helper()
	res, err := c.Do(t.Context(), c.B().Xpending().Key(q.Stream("a")).Group(group).Start(id).End(id).Count(1).Build()).ToArray()
	if err != nil {
		t.Fatal(err)
	}
	if len(res) == 0 {
		return ""
	}
	e, _ := res[0].ToArray()
	name, _ := e[1].ToString()
	return name
}

// ack.lua fences every ack, with per-item XPENDING or with one range
// XPENDING (also when the range reply is truncated): an ack of an entry
// another consumer reclaimed is refused and leaves it alone.
func TestAckFencesEachItem(t *testing.T) {
	t.Parallel()
	cfg := queuestore.SettleConfig{Group: group, Consumer: "c", WaiterTTL: time.Second, RoomCap: 8}
	cases := []struct {
		name  string
		fence func(ids []string) *queuestore.FenceRange
	}{
		{"per item", func([]string) *queuestore.FenceRange { return nil }},
		{"range", func(ids []string) *queuestore.FenceRange {
			return &queuestore.FenceRange{First: ids[0], Last: ids[len(ids)-1], Count: len(ids)}
		}},
		{"truncated range", func(ids []string) *queuestore.FenceRange {
			return &queuestore.FenceRange{First: ids[0], Last: ids[len(ids)-1], Count: 2}
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			redistest.ForEachBackend(t, func(t *testing.T, b *redistest.Backend) {
				q := keys.NewQueue(b.Namespace, "q")
				ids := pending(t, b, q, 6)
				steal(t, b.Client, q, ids[1], "d")
				steal(t, b.Client, q, ids[4], "d")
				steal(t, b.Client, q, ids[3], "c") // redelivered to the same consumer
				items := make([]queuestore.AckItem, len(ids))
				for i, id := range ids {
					items[i] = queuestore.AckItem{ID: id, Fence: 1, Key: fmt.Sprintf("k%02d", i)}
				}
				got, err := queuestore.Ack(context.Background(), b.Client, q, cfg, "a", items, tc.fence(ids))
				if err != nil {
					t.Fatal(err)
				}
				want := []bool{true, false, true, false, false, true}
				if fmt.Sprint(got) != fmt.Sprint(want) {
					t.Fatalf("acked %v, want %v", got, want)
				}
				for _, i := range []int{1, 4} {
					if o := owner(t, b.Client, q, ids[i]); o != "d" {
						t.Fatalf("entry %d owned by %q after a refused ack, want d", i, o)
					}
				}
				if o := owner(t, b.Client, q, ids[3]); o != "c" {
					t.Fatalf("entry 3 owned by %q after a refused ack, want c (its newer delivery)", o)
				}
				for _, i := range []int{0, 2, 5} {
					if o := owner(t, b.Client, q, ids[i]); o != "" {
						t.Fatalf("acked entry %d still pending for %q", i, o)
					}
				}
				// The refused acks kept their keys live; the others freed theirs.
				live, err := b.Client.Do(t.Context(), b.Client.B().Hkeys().Key(q.Dedup()).Build()).AsStrSlice()
				if err != nil {
					t.Fatal(err)
				}
				slices.Sort(live)
				if fmt.Sprint(live) != "[k01 k03 k04]" {
					t.Fatalf("live keys %v, want k01 k03 k04", live)
				}
			})
		})
	}
}
