// Package backoff computes retry delays: exponential growth with full jitter
// and a cap, so that many clients recovering at once spread out.
package backoff

import (
	"context"
	"math/rand/v2"
	"time"
)

// Defaults of a zero Backoff.
const (
	DefaultBase = 50 * time.Millisecond
	DefaultMax  = 5 * time.Second
)

// Backoff yields successive retry delays. The zero value uses DefaultBase and
// DefaultMax. It is not safe for concurrent use.
type Backoff struct {
	Base, Max time.Duration
	attempt   int
}

// Next returns the next delay: a uniformly random duration in
// [0, min(Max, Base·2^attempt)].
func (b *Backoff) Next() time.Duration {
	base, ceiling := b.Base, b.Max
	if base <= 0 {
		base = DefaultBase
	}
	if ceiling <= 0 {
		ceiling = DefaultMax
	}
	d := ceiling
	if base <= (ceiling-1)>>b.attempt { // base<<attempt < ceiling, without overflow
		d = base << b.attempt
	}
	b.attempt++
	return rand.N(d + 1)
}

// Reset starts the sequence over, after a success.
func (b *Backoff) Reset() { b.attempt = 0 }

// Sleep waits for Next() or until ctx ends, returning ctx.Err() then.
func (b *Backoff) Sleep(ctx context.Context) error {
	t := time.NewTimer(b.Next())
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
