// Package batch coalesces concurrent calls into batches, so that many
// callers share one Redis round trip and one script call.
//
// There is no background goroutine: the first caller to find a free slot
// becomes a leader and runs batches of whatever is queued; when its own call
// is done it hands the slot to the oldest waiting caller. At most MaxLeaders
// batches run at once. A call that finds the batcher idle runs alone at
// once, on its own goroutine.
package batch

import (
	"context"
	"sync"
	"time"
)

// Func runs one batch. It returns one result per input, in order, or an
// error that fails the whole batch.
type Func[In, Out any] func(ctx context.Context, in []In) ([]Out, error)

// Batcher coalesces calls to one Func. Build it with New.
type Batcher[In, Out any] struct {
	run        Func[In, Out]
	maxBatch   int
	maxLeaders int
	timeout    time.Duration

	mu      sync.Mutex
	queue   []*call[In, Out]
	leaders int
}

type call[In, Out any] struct {
	in   In
	out  Out
	err  error
	done chan struct{} // closed when out/err are set
	lead chan struct{} // receives once if this call must become a leader
	sent bool          // taken into a batch (guarded by Batcher.mu)
	next bool          // chosen as the next leader (guarded by Batcher.mu)
}

// New returns a Batcher running run with at most maxBatch inputs per batch
// and at most maxLeaders batches at once. Each batch runs under the leader's
// context values but not its cancellation, bounded by timeout.
func New[In, Out any](run Func[In, Out], maxBatch, maxLeaders int, timeout time.Duration) *Batcher[In, Out] {
	return &Batcher[In, Out]{run: run, maxBatch: maxBatch, maxLeaders: maxLeaders, timeout: timeout}
}

// Do queues in, waits for its batch and returns its result. If ctx ends
// first, Do returns ctx.Err(); the input may or may not have been run.
func (b *Batcher[In, Out]) Do(ctx context.Context, in In) (Out, error) {
	if err := ctx.Err(); err != nil {
		var zero Out
		return zero, err
	}
	b.mu.Lock()
	if b.leaders == 0 && len(b.queue) == 0 {
		// Idle: a batch of this call alone, run at once as its own leader
		// would (no queue entry, no channel: the price of a caller that
		// submits one at a time).
		b.leaders++
		b.mu.Unlock()
		out, err := b.runBatch(ctx, []In{in})
		b.mu.Lock()
		b.handOff() // to a call queued meanwhile, or the slot is free
		b.mu.Unlock()
		if err != nil {
			var zero Out
			return zero, err
		}
		return out[0], nil
	}
	c := &call[In, Out]{in: in, done: make(chan struct{}), lead: make(chan struct{}, 1)}
	b.queue = append(b.queue, c)
	leading := b.leaders < b.maxLeaders
	if leading {
		b.leaders++
	}
	b.mu.Unlock()
	if leading {
		b.lead(ctx, c)
	}
	for {
		select {
		case <-c.done:
			b.passLead(c)
			return c.out, c.err
		case <-c.lead:
			b.lead(ctx, c)
		case <-ctx.Done():
			b.mu.Lock()
			if !c.sent {
				b.remove(c)
			}
			b.mu.Unlock()
			b.passLead(c) // a hand-off raced with cancellation: pass it on
			var zero Out
			return zero, ctx.Err()
		}
	}
}

// lead runs batches until own is done, then hands the slot on.
func (b *Batcher[In, Out]) lead(ctx context.Context, own *call[In, Out]) {
	for {
		b.mu.Lock()
		if !own.sent && ctx.Err() != nil {
			// The caller gave up before its input was sent: withdraw the
			// input so it never runs, and pass the slot on.
			b.remove(own)
			b.handOff()
			b.mu.Unlock()
			return
		}
		n := min(len(b.queue), b.maxBatch)
		if n == 0 {
			b.leaders--
			b.mu.Unlock()
			return
		}
		batch := make([]*call[In, Out], n)
		copy(batch, b.queue)
		b.queue = append(b.queue[:0], b.queue[n:]...)
		for _, c := range batch {
			c.sent = true
		}
		b.mu.Unlock()

		b.exec(ctx, batch)

		select {
		case <-own.done:
			b.mu.Lock()
			b.handOff()
			b.mu.Unlock()
			return
		default:
		}
	}
}

// handOff gives the caller's leader slot to the oldest queued call, or frees
// it. Called with b.mu held.
func (b *Batcher[In, Out]) handOff() {
	for _, c := range b.queue {
		if !c.next {
			c.next = true
			c.lead <- struct{}{}
			return
		}
	}
	b.leaders--
}

// passLead hands on a leader slot that was handed to c but that c will not
// use. c must no longer be queued, so that no further hand-off can reach it.
func (b *Batcher[In, Out]) passLead(c *call[In, Out]) {
	select {
	case <-c.lead:
		b.mu.Lock()
		b.handOff()
		b.mu.Unlock()
	default:
	}
}

func (b *Batcher[In, Out]) remove(c *call[In, Out]) {
	for i, q := range b.queue {
		if q == c {
			b.queue = append(b.queue[:i], b.queue[i+1:]...)
			return
		}
	}
}

func (b *Batcher[In, Out]) exec(ctx context.Context, batch []*call[In, Out]) {
	in := make([]In, len(batch))
	for i, c := range batch {
		in[i] = c.in
	}
	out, err := b.runBatch(ctx, in)
	for i, c := range batch {
		if err != nil {
			c.err = err
		} else {
			c.out = out[i]
		}
		close(c.done)
	}
}

// runBatch runs one batch under the leader's context values but not its
// cancellation, bounded by the timeout.
func (b *Batcher[In, Out]) runBatch(ctx context.Context, in []In) ([]Out, error) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), b.timeout)
	defer cancel()
	return b.run(ctx, in)
}
