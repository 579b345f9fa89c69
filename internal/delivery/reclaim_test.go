package delivery

import (
	"testing"
	"time"
)

func TestReclaimEveryBounds(t *testing.T) {
	for _, c := range []struct{ vis, want time.Duration }{
		{20 * time.Millisecond, 10 * time.Millisecond},
		{100 * time.Millisecond, 25 * time.Millisecond},
		{2 * time.Second, 500 * time.Millisecond},
		{30 * time.Second, time.Second},
	} {
		if got := ReclaimEvery(c.vis); got != c.want {
			t.Errorf("ReclaimEvery(%v) = %v, want %v", c.vis, got, c.want)
		}
	}
}

func TestReclaimPacing(t *testing.T) {
	r := NewReclaim(400*time.Millisecond, 3)
	if len(r.Cursors) != 3 || r.Cursors[2] != "0-0" {
		t.Fatalf("cursors = %q, want three 0-0", r.Cursors)
	}
	t0 := time.Unix(1000, 0)
	if !r.Due(t0) || r.Wait(t0) != 0 {
		t.Fatal("the first pass is not due at once")
	}
	r.Began(t0)
	if r.Due(t0.Add(99 * time.Millisecond)) {
		t.Fatal("a pass is due before Every (100ms) passed")
	}
	if got := r.Wait(t0.Add(40 * time.Millisecond)); got != 60*time.Millisecond {
		t.Fatalf("Wait 40ms after a pass = %v, want 60ms", got)
	}
	if !r.Due(t0.Add(100 * time.Millisecond)) {
		t.Fatal("no pass due once Every passed")
	}
	r.Force()
	if !r.Due(t0.Add(time.Millisecond)) || r.Wait(t0.Add(time.Millisecond)) != 0 {
		t.Fatal("Force did not make a pass due")
	}
	r.Began(t0.Add(time.Millisecond))
	if r.Due(t0.Add(2 * time.Millisecond)) {
		t.Fatal("a forced pass stays due after it began")
	}
}
