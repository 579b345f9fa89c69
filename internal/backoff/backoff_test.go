package backoff

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"
)

// samples is how many draws a test takes where one draw could be unlucky:
// every statistical check below fails by chance with probability at most
// 2^-samples.
const samples = 200

// never is a delay no test outlives.
const never = 100 * 365 * 24 * time.Hour

// bound is min(Max, Base·2^attempt), with the defaults of a zero field,
// computed without overflow.
func bound(base, ceiling time.Duration, attempt int) time.Duration {
	if base <= 0 {
		base = DefaultBase
	}
	if ceiling <= 0 {
		ceiling = DefaultMax
	}
	d := base
	for range attempt {
		if d > ceiling/2 {
			return ceiling
		}
		d *= 2
	}
	return min(d, ceiling)
}

var configs = []struct{ base, max time.Duration }{
	{0, 0}, // the zero value: DefaultBase and DefaultMax
	{-time.Second, -time.Second},
	{time.Millisecond, 100 * time.Millisecond},
	{3, 10}, // a cap that is not a power-of-two multiple of Base
	{1, 1},
	{time.Hour, time.Minute},            // Base above Max: capped from the start
	{time.Microsecond, time.Hour},       // Base·2^attempt stays under Max past attempt 30
	{20 * time.Second, 5 * time.Minute}, // Base·2^attempt overflows int64 before attempt 30
	{time.Second, 200 * 365 * 24 * time.Hour}, // a cap near the int64 range
}

func TestNextStaysWithinBound(t *testing.T) {
	t.Parallel()
	for _, c := range configs {
		t.Run(fmt.Sprintf("base=%v,max=%v", c.base, c.max), func(t *testing.T) {
			t.Parallel()
			// One sequence, as callers use it.
			b := Backoff{Base: c.base, Max: c.max}
			for attempt := range 100 {
				want := bound(c.base, c.max, attempt)
				if d := b.Next(); d < 0 || d > want {
					t.Fatalf("call %d: Next() = %v, want within [0, %v]", attempt+1, d, want)
				}
			}
			// Many draws at each attempt, so that a bound too loose is caught.
			for attempt := range 100 {
				want := bound(c.base, c.max, attempt)
				for range samples {
					b := Backoff{Base: c.base, Max: c.max, attempt: attempt}
					if d := b.Next(); d < 0 || d > want {
						t.Fatalf("attempt %d: Next() = %v, want within [0, %v]", attempt, d, want)
					}
				}
			}
		})
	}
}

// draws returns the smallest and largest of many Next at attempt.
func draws(base, ceiling time.Duration, attempt int) (lo, hi time.Duration) {
	lo = time.Duration(1<<63 - 1)
	for range samples {
		b := Backoff{Base: base, Max: ceiling, attempt: attempt}
		d := b.Next()
		lo, hi = min(lo, d), max(hi, d)
	}
	return lo, hi
}

func TestNextGrowsThenCaps(t *testing.T) {
	t.Parallel()
	const base, ceiling = time.Millisecond, 64 * time.Millisecond // ceiling = base·2^6
	for attempt := range 12 {
		want := bound(base, ceiling, attempt)
		lo, hi := draws(base, ceiling, attempt)
		// Full jitter: the draws spread over the whole range.
		if hi <= want/2 || lo >= want/2 {
			t.Errorf("attempt %d: draws in [%v, %v], want them spread over [0, %v]", attempt, lo, hi, want)
		}
		if attempt > 0 && attempt <= 6 {
			// The range doubled: some draw lies above the previous bound.
			if prev := bound(base, ceiling, attempt-1); hi <= prev {
				t.Errorf("attempt %d: largest draw %v, want above the previous bound %v", attempt, hi, prev)
			}
		}
	}
	// The zero value uses the documented defaults.
	if _, hi := draws(0, 0, 0); hi <= DefaultBase/2 {
		t.Errorf("zero Backoff: first draws at most %v, want up to DefaultBase %v", hi, DefaultBase)
	}
	if _, hi := draws(0, 0, 50); hi <= DefaultMax/2 {
		t.Errorf("zero Backoff: late draws at most %v, want up to DefaultMax %v", hi, DefaultMax)
	}
}

func TestResetRestartsTheSequence(t *testing.T) {
	t.Parallel()
	const base = time.Millisecond
	b := Backoff{Base: base, Max: time.Hour}
	for range samples {
		for range 20 { // the bound is now far above base
			b.Next()
		}
		b.Reset()
		if d := b.Next(); d > base {
			t.Fatalf("first Next after Reset = %v, want at most Base %v", d, base)
		}
		if d := b.Next(); d > 2*base {
			t.Fatalf("second Next after Reset = %v, want at most 2·Base %v", d, 2*base)
		}
	}
}

func TestSleepReturnsCtxErrWhenCtxEndsFirst(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		ctx  func(context.Context) (context.Context, context.CancelFunc)
		want error
	}{
		{"ended before", func(ctx context.Context) (context.Context, context.CancelFunc) {
			ctx, cancel := context.WithCancel(ctx)
			cancel()
			return ctx, cancel
		}, context.Canceled},
		{"cancelled during", func(ctx context.Context) (context.Context, context.CancelFunc) {
			ctx, cancel := context.WithCancel(ctx)
			go cancel()
			return ctx, cancel
		}, context.Canceled},
		{"deadline", func(ctx context.Context) (context.Context, context.CancelFunc) {
			return context.WithTimeout(ctx, 10*time.Millisecond)
		}, context.DeadlineExceeded},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := tc.ctx(t.Context())
			defer cancel()
			b := Backoff{Base: never, Max: never}
			done := make(chan error, 1)
			go func() { done <- b.Sleep(ctx) }()
			select {
			case err := <-done:
				if !errors.Is(err, tc.want) || err != ctx.Err() {
					t.Fatalf("Sleep = %v, want ctx.Err() = %v", err, tc.want)
				}
			case <-time.After(time.Minute):
				t.Fatal("Sleep did not return when its ctx ended")
			}
		})
	}
}

func TestSleepReturnsNilAfterTheDelay(t *testing.T) {
	t.Parallel()
	b := Backoff{Base: 1, Max: 1}
	for i := range 3 {
		if err := b.Sleep(t.Context()); err != nil {
			t.Fatalf("Sleep = %v, want nil", err)
		}
		if b.attempt != i+1 {
			t.Fatalf("after %d Sleeps attempt = %d, want %d: Sleep must advance the sequence", i+1, b.attempt, i+1)
		}
	}
}
