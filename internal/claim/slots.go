package claim

import (
	"context"
	"sync"
	"time"
)

// Slots counts a reader's free claim slots: size for the handlers that
// may run at once, and extra for tasks claimed ahead while they run (held
// back unless the reader allows them: hold). A slot is taken by a claim
// and released when its task's outcome is recorded (or its claim comes to
// nothing).
type Slots struct {
	mu      sync.Mutex
	free    int
	size    int // slots for handlers
	extra   int // slots for claims ahead
	held    int // slots not to be acquired now (extra, or 0)
	changed chan struct{}
}

func (p *Slots) init(n, extra int) {
	p.free, p.size, p.extra, p.held, p.changed = n+extra, n, extra, extra, make(chan struct{})
}

// Total is how many tasks the reader may hold claimed at once.
func (p *Slots) Total() int { return p.size + p.extra }

// hold sets whether the extra slots are held back.
func (p *Slots) hold(back bool) {
	p.mu.Lock()
	p.held = 0
	if back {
		p.held = p.extra
	}
	p.mu.Unlock()
}

// acquire waits for at least one free slot and takes up to max of them.
// With want > 1 it waits up to linger longer for want slots, so that busy
// readers claim in bigger batches (fewer, cheaper script calls).
func (p *Slots) acquire(ctx context.Context, want, max int, linger time.Duration) (int, bool) {
	var deadline time.Time
	var timer *time.Timer
	defer func() {
		if timer != nil {
			timer.Stop()
		}
	}()
	for {
		p.mu.Lock()
		avail := p.free - p.held
		if avail >= want || (avail > 0 && !deadline.IsZero() && !time.Now().Before(deadline)) {
			n := min(avail, max)
			p.free -= n
			p.mu.Unlock()
			return n, true
		}
		var wake <-chan time.Time
		if avail > 0 {
			if deadline.IsZero() {
				deadline = time.Now().Add(linger)
				timer = time.NewTimer(linger)
			}
			wake = timer.C
		}
		ch := p.changed
		p.mu.Unlock()
		select {
		case <-ch:
		case <-wake:
		case <-ctx.Done():
			return 0, false
		}
	}
}

// grab takes up to n free slots, held back or not, without waiting.
func (p *Slots) grab(n int) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	n = max(0, min(n, p.free))
	p.free -= n
	return n
}

// Release frees n slots.
func (p *Slots) Release(n int) {
	if n <= 0 {
		return
	}
	p.mu.Lock()
	p.free += n
	close(p.changed)
	p.changed = make(chan struct{})
	p.mu.Unlock()
}
