package store

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/dtq-dev/dtq/internal/redistest"
)

// OrderKey reads a key's line — holder, first waiters in order, count —
// and OrderKeys lists the keys with a task in flight, without the
// sequence field, each with its holder and count.
func TestOrderKeyLines(t *testing.T) {
	t.Parallel()
	redistest.ForEachBackend(t, func(t *testing.T, b *redistest.Backend) {
		ctx := context.Background()
		q := New(b.Client, b.Namespace).Queue("q")
		var items []EnqueueItem
		for i := range 5 {
			items = append(items, EnqueueItem{Type: "t", Payload: fmt.Appendf(nil, "a%d", i), MaxAttempts: 1, Timeout: time.Minute, OrderKey: "acct-a"})
		}
		items = append(items, EnqueueItem{Type: "t", MaxAttempts: 1, Timeout: time.Minute, OrderKey: "acct-b"})
		res, err := q.Enqueue(ctx, EnqueueConfig{}, items)
		if err != nil {
			t.Fatal(err)
		}
		ids := make([]string, len(res))
		for i, r := range res {
			ids[i] = r.ID
		}
		line, err := q.OrderKey(ctx, "acct-a", 3)
		if err != nil {
			t.Fatal(err)
		}
		if line.Holder != ids[0] || !slices.Equal(line.Next, ids[1:4]) || line.Waiting != 4 {
			t.Errorf("line of acct-a: %+v, want holder %s, next %v, 4 waiting", line, ids[0], ids[1:4])
		}
		line, err = q.OrderKey(ctx, "acct-none", 3)
		if err != nil || line.Holder != "" || len(line.Next) != 0 || line.Waiting != 0 {
			t.Errorf("line of a key without tasks: %+v, %v", line, err)
		}
		var got []OrderKeyState
		for cursor := uint64(0); ; {
			ks, next, err := q.OrderKeys(ctx, cursor, 1)
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, ks...)
			if cursor = next; cursor == 0 {
				break
			}
		}
		slices.SortFunc(got, func(a, b OrderKeyState) int { return strings.Compare(a.Key, b.Key) })
		want := []OrderKeyState{{Key: "acct-a", Holder: ids[0], Waiting: 4}, {Key: "acct-b", Holder: ids[5]}}
		if !slices.Equal(got, want) {
			t.Errorf("keys: %+v, want %+v", got, want)
		}
	})
}
