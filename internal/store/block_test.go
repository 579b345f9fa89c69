package store

import (
	"context"
	"testing"
	"time"

	"github.com/dtq-dev/dtq/internal/redistest"
)

// A wait of under a millisecond — what is left of a lease poll's — ends
// at once on an empty queue: its BLOCK is rounded up to 1 ms, never the 0
// that waits forever (a CI run hung 13 minutes in TestOrderKeyLeases on
// it). ReadBands and WaitWakeup both.
func TestSubMillisecondBlockEnds(t *testing.T) {
	t.Parallel()
	redistest.ForEachBackend(t, func(t *testing.T, b *redistest.Backend) {
		q := New(b.Client, b.Namespace).Queue("q")
		ensureGroups(t, q)
		for name, wait := range map[string]func(ctx context.Context) error{
			"ReadBands": func(ctx context.Context) error {
				_, _, err := q.ReadBands(ctx, "w", 10, 500*time.Microsecond, 0)
				return err
			},
			"WaitWakeup": func(ctx context.Context) error { return q.WaitWakeup(ctx, "$", 500*time.Microsecond) },
		} {
			done := make(chan error, 1)
			go func() { done <- wait(context.Background()) }()
			select {
			case err := <-done:
				if err != nil {
					t.Fatalf("%s: %v", name, err)
				}
			case <-time.After(10 * time.Second):
				t.Fatalf("%s of 0.5 ms still waiting after 10 s: it blocks forever", name)
			}
		}
	})
}
