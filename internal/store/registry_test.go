package store

import (
	"errors"
	"testing"

	"github.com/dtq-dev/dtq/internal/redistest"
)

// The second read of a namespace whose queue set was seen without a layout
// record: a record written meanwhile by a process of this layout is no
// first-layout data (two processes meeting a fresh namespace at once).
func TestRecheckLayout(t *testing.T) {
	t.Parallel()
	redistest.ForEachBackend(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		c := b.Client
		for _, tc := range []struct {
			layout string // "" for none
			found  string // the LayoutError's, "" for none
		}{{Layout, ""}, {"", "1"}, {"9", "9"}} {
			ns := b.Namespace + "-" + tc.found
			s := New(c, ns)
			if err := c.Do(ctx, c.B().Sadd().Key(QueuesKey(ns)).Member("q").Build()).Error(); err != nil {
				t.Fatal(err)
			}
			if tc.layout != "" {
				if err := c.Do(ctx, c.B().Set().Key(LayoutKey(ns)).Value(tc.layout).Build()).Error(); err != nil {
					t.Fatal(err)
				}
			}
			err := s.recheckLayout(ctx)
			var le *LayoutError
			switch {
			case tc.found == "" && err != nil:
				t.Errorf("layout %q recorded meanwhile: %v, want none", tc.layout, err)
			case tc.found != "" && (!errors.As(err, &le) || le.Found != tc.found):
				t.Errorf("layout %q: %v, want a LayoutError of version %s", tc.layout, err, tc.found)
			}
		}
	})
}

// A namespace of the layout this one upgrades from is upgraded in place:
// accepted, and recorded as this layout (a process of the older one then
// refuses it).
func TestLayoutUpgradedInPlace(t *testing.T) {
	t.Parallel()
	redistest.ForEachBackend(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		c := b.Client
		if err := c.Do(ctx, c.B().Set().Key(LayoutKey(b.Namespace)).Value(UpgradesFrom).Build()).Error(); err != nil {
			t.Fatal(err)
		}
		if err := New(c, b.Namespace).CheckLayout(ctx); err != nil {
			t.Fatalf("layout %s: %v, want it upgraded", UpgradesFrom, err)
		}
		if v, err := c.Do(ctx, c.B().Get().Key(LayoutKey(b.Namespace)).Build()).ToString(); err != nil || v != Layout {
			t.Fatalf("layout record %q %v, want %s", v, err, Layout)
		}
	})
}
