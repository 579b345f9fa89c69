package batch

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// waitLimit bounds every wait in these tests: reaching it means a deadlock,
// not a slow machine.
const waitLimit = 60 * time.Second

// result is what the test run funcs return for an input. It is injective, so
// a caller that got another caller's result is caught.
func result(in int) int { return in*7 + 3 }

// recorder instruments a run func: concurrent runs, batches and how often
// each input was run, plus contract violations seen inside run.
type recorder struct {
	maxBatch          int
	active, maxActive atomic.Int64

	mu         sync.Mutex
	batches    [][]int
	runs       map[int]int
	violations []string
}

func newRecorder(maxBatch int) *recorder {
	return &recorder{maxBatch: maxBatch, runs: map[int]int{}}
}

func (r *recorder) enter(ctx context.Context, in []int) {
	n := r.active.Add(1)
	for {
		m := r.maxActive.Load()
		if n <= m || r.maxActive.CompareAndSwap(m, n) {
			break
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.batches = append(r.batches, slices.Clone(in))
	for _, v := range in {
		r.runs[v]++
	}
	if len(in) == 0 || len(in) > r.maxBatch {
		r.violations = append(r.violations, fmt.Sprintf("batch of %d inputs, want 1..%d", len(in), r.maxBatch))
	}
	if err := ctx.Err(); err != nil {
		r.violations = append(r.violations, fmt.Sprintf("run called with an ended ctx: %v", err))
	}
}

func (r *recorder) leave() { r.active.Add(-1) }

func (r *recorder) timesRun(in int) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.runs[in]
}

func (r *recorder) allBatches() [][]int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.batches)
}

// check fails t on any violation seen inside run or on more than maxLeaders
// concurrent runs.
func (r *recorder) check(t *testing.T, maxLeaders int) {
	t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, v := range r.violations {
		t.Error(v)
	}
	if got := r.maxActive.Load(); got > int64(maxLeaders) {
		t.Errorf("%d batches ran at once, want at most %d", got, maxLeaders)
	}
}

// gate is a run func that announces each batch on started and returns only
// when the test sends on release (or closes it).
type gate struct {
	rec     *recorder
	started chan []int
	release chan struct{}
	after   chan runInfo
	fail    func(in []int) error
}

// runInfo is what run saw of its ctx once released.
type runInfo struct {
	in          []int
	value       any
	err         error
	hasDeadline bool
}

type ctxKey struct{}

func newGate(maxBatch int) *gate {
	return &gate{
		rec:     newRecorder(maxBatch),
		started: make(chan []int, 1024),
		release: make(chan struct{}),
		after:   make(chan runInfo, 1024),
	}
}

func (g *gate) run(ctx context.Context, in []int) ([]int, error) {
	g.rec.enter(ctx, in)
	defer g.rec.leave()
	g.started <- slices.Clone(in)
	select {
	case <-g.release:
	case <-ctx.Done():
	}
	_, hasDeadline := ctx.Deadline()
	g.after <- runInfo{in: slices.Clone(in), value: ctx.Value(ctxKey{}), err: ctx.Err(), hasDeadline: hasDeadline}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if g.fail != nil {
		if err := g.fail(in); err != nil {
			return nil, err
		}
	}
	out := make([]int, len(in))
	for i, v := range in {
		out[i] = result(v)
	}
	return out, nil
}

// nextBatch returns the next batch the gate saw start.
func (g *gate) nextBatch(t *testing.T) []int {
	t.Helper()
	select {
	case in := <-g.started:
		return in
	case <-time.After(waitLimit):
		t.Fatal("no batch started")
		return nil
	}
}

type reply struct {
	out int
	err error
}

// goDo runs b.Do in a goroutine; the reply arrives on the returned channel.
func goDo(b *Batcher[int, int], ctx context.Context, in int) <-chan reply {
	ch := make(chan reply, 1)
	go func() {
		out, err := b.Do(ctx, in)
		ch <- reply{out, err}
	}()
	return ch
}

func await(t *testing.T, ch <-chan reply) reply {
	t.Helper()
	select {
	case r := <-ch:
		return r
	case <-time.After(waitLimit):
		t.Fatal("Do did not return")
		return reply{}
	}
}

// wantResult fails t unless r is the successful result for in.
func wantResult(t *testing.T, r reply, in int) {
	t.Helper()
	if r.err != nil || r.out != result(in) {
		t.Errorf("Do(%d) = %d, %v; want %d, nil", in, r.out, r.err, result(in))
	}
}

// waitFor polls cond until it holds; it fails t after waitLimit.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(waitLimit)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not true within %v", what, waitLimit)
		}
		time.Sleep(time.Millisecond)
	}
}

func queued(b *Batcher[int, int]) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.queue)
}

// waitQueued waits until n calls are queued (not yet sent into a batch).
func waitQueued(t *testing.T, b *Batcher[int, int], n int) {
	t.Helper()
	waitFor(t, fmt.Sprintf("%d calls queued", n), func() bool { return queued(b) == n })
}

// checkIdle fails t unless b holds no queued call and no leader slot: every
// slot taken was given back.
func checkIdle(t *testing.T, b *Batcher[int, int]) {
	t.Helper()
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.queue) != 0 || b.leaders != 0 {
		t.Errorf("idle batcher has %d queued calls and %d leaders, want 0 and 0", len(b.queue), b.leaders)
	}
}

// waitGroup waits for wg, failing t after waitLimit (a deadlock).
func waitGroup(t *testing.T, wg *sync.WaitGroup) {
	t.Helper()
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(waitLimit):
		t.Fatal("callers still blocked: deadlock")
	}
}

func TestDoManyCallersGetTheirOwnResults(t *testing.T) {
	t.Parallel()
	const goroutines, calls, maxBatch, maxLeaders = 200, 50, 16, 3
	rec := newRecorder(maxBatch)
	b := New(func(ctx context.Context, in []int) ([]int, error) {
		rec.enter(ctx, in)
		defer rec.leave()
		runtime.Gosched() // let more callers pile up and leaders overlap
		out := make([]int, len(in))
		for i, v := range in {
			out[i] = result(v)
		}
		return out, nil
	}, maxBatch, maxLeaders, time.Minute)

	errs := make(chan error, goroutines)
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Go(func() {
			for i := range calls {
				in := g*calls + i
				out, err := b.Do(t.Context(), in)
				if err != nil || out != result(in) {
					errs <- fmt.Errorf("Do(%d) = %d, %v; want %d, nil", in, out, err, result(in))
					return
				}
			}
		})
	}
	waitGroup(t, &wg)
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	rec.check(t, maxLeaders)
	for in := range goroutines * calls {
		if n := rec.timesRun(in); n != 1 {
			t.Errorf("input %d ran %d times, want once", in, n)
		}
	}
	checkIdle(t, b)
	t.Logf("%d calls in %d batches, at most %d at once", goroutines*calls, len(rec.allBatches()), rec.maxActive.Load())
}

func TestDoFillsBatchesUpToMaxBatchInArrivalOrder(t *testing.T) {
	t.Parallel()
	g := newGate(4)
	b := New(g.run, 4, 1, time.Minute)
	replies := []<-chan reply{goDo(b, t.Context(), 0)}
	if got := g.nextBatch(t); !slices.Equal(got, []int{0}) {
		t.Fatalf("first batch = %v, want [0]", got)
	}
	for i := 1; i <= 10; i++ { // queue 1..10 in this order behind the busy leader
		replies = append(replies, goDo(b, t.Context(), i))
		waitQueued(t, b, i)
	}
	close(g.release)
	for _, want := range [][]int{{1, 2, 3, 4}, {5, 6, 7, 8}, {9, 10}} {
		if got := g.nextBatch(t); !slices.Equal(got, want) {
			t.Fatalf("batch = %v, want %v", got, want)
		}
	}
	for in, ch := range replies {
		wantResult(t, await(t, ch), in)
	}
	g.rec.check(t, 1)
	checkIdle(t, b)
}

func TestDoRunsAtMostMaxLeadersBatchesAtOnce(t *testing.T) {
	t.Parallel()
	const maxLeaders = 2
	g := newGate(100)
	b := New(g.run, 100, maxLeaders, time.Minute)
	var replies []<-chan reply
	for in := range maxLeaders { // each becomes a leader blocked in run
		replies = append(replies, goDo(b, t.Context(), in))
		if got := g.nextBatch(t); !slices.Equal(got, []int{in}) {
			t.Fatalf("batch = %v, want [%d]", got, in)
		}
	}
	for in := maxLeaders; in < maxLeaders+10; in++ {
		replies = append(replies, goDo(b, t.Context(), in))
	}
	// With every slot taken, the other callers must wait in the queue
	// rather than start batches of their own.
	waitFor(t, "10 calls queued", func() bool {
		if n := g.rec.active.Load(); n > maxLeaders {
			t.Fatalf("%d batches running, want at most %d", n, maxLeaders)
		}
		return queued(b) == 10
	})
	if n := g.rec.active.Load(); n != maxLeaders {
		t.Fatalf("%d batches running, want %d", n, maxLeaders)
	}
	close(g.release)
	for in, ch := range replies {
		wantResult(t, await(t, ch), in)
	}
	g.rec.check(t, maxLeaders)
	checkIdle(t, b)
}

func TestDoRunErrorReachesEveryCallerOfTheBatch(t *testing.T) {
	t.Parallel()
	errPoison := errors.New("poison")
	g := newGate(10)
	g.fail = func(in []int) error {
		if slices.Contains(in, 3) {
			return fmt.Errorf("run: %w", errPoison)
		}
		return nil
	}
	b := New(g.run, 10, 1, time.Minute)
	first := goDo(b, t.Context(), 0)
	g.nextBatch(t)
	var replies []<-chan reply
	for in := 1; in <= 5; in++ {
		replies = append(replies, goDo(b, t.Context(), in))
		waitQueued(t, b, in)
	}
	close(g.release)
	wantResult(t, await(t, first), 0)
	if got := g.nextBatch(t); !slices.Equal(got, []int{1, 2, 3, 4, 5}) {
		t.Fatalf("batch = %v, want [1 2 3 4 5]", got)
	}
	for i, ch := range replies {
		r := await(t, ch)
		if !errors.Is(r.err, errPoison) || r.out != 0 {
			t.Errorf("Do(%d) = %d, %v; want 0 and the batch's error", i+1, r.out, r.err)
		}
	}
	// A failed batch leaves the batcher usable.
	wantResult(t, await(t, goDo(b, t.Context(), 6)), 6)
	checkIdle(t, b)
}

func TestDoCancelledWhileQueuedIsNeverRun(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		ctx  func(context.Context) (context.Context, context.CancelFunc)
		want error
	}{
		{"cancel", context.WithCancel, context.Canceled},
		{"deadline", func(ctx context.Context) (context.Context, context.CancelFunc) {
			return context.WithTimeout(ctx, time.Millisecond)
		}, context.DeadlineExceeded},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			g := newGate(10)
			b := New(g.run, 10, 1, time.Minute)
			leader := goDo(b, t.Context(), 0)
			g.nextBatch(t) // the leader is busy until released
			other := goDo(b, t.Context(), 2)
			waitQueued(t, b, 1)

			ctx, cancel := tc.ctx(t.Context())
			defer cancel()
			gone := goDo(b, ctx, 1)
			if tc.want == context.Canceled {
				waitQueued(t, b, 2)
				cancel()
			}
			r := await(t, gone)
			if !errors.Is(r.err, tc.want) || r.err != ctx.Err() || r.out != 0 {
				t.Fatalf("cancelled Do = %d, %v; want 0, %v", r.out, r.err, tc.want)
			}
			if n := queued(b); n != 1 {
				t.Fatalf("%d calls queued after the cancelled one returned, want 1", n)
			}

			close(g.release)
			wantResult(t, await(t, leader), 0)
			wantResult(t, await(t, other), 2)
			if n := g.rec.timesRun(1); n != 0 {
				t.Errorf("cancelled input ran %d times, want never", n)
			}
			if got := g.rec.allBatches(); !slices.EqualFunc(got, [][]int{{0}, {2}}, slices.Equal) {
				t.Errorf("batches = %v, want [[0] [2]]", got)
			}
			checkIdle(t, b)
		})
	}
}

func TestDoCancelledBeforeCallIsNeverRun(t *testing.T) {
	t.Parallel()
	t.Run("idle batcher", func(t *testing.T) {
		t.Parallel()
		// The caller finds a free slot and becomes the leader, but its
		// input must not be sent once its ctx has ended.
		g := newGate(10)
		close(g.release)
		b := New(g.run, 10, 1, time.Minute)
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		for range 20 { // Do's final select is random when several cases are ready
			if out, err := b.Do(ctx, 1); !errors.Is(err, context.Canceled) || out != 0 {
				t.Fatalf("Do with an ended ctx = %d, %v; want 0, %v", out, err, context.Canceled)
			}
		}
		if n := g.rec.timesRun(1); n != 0 {
			t.Errorf("input of an ended ctx ran %d times, want never", n)
		}
		checkIdle(t, b)
		wantResult(t, await(t, goDo(b, t.Context(), 2)), 2)
	})
	t.Run("busy batcher", func(t *testing.T) {
		t.Parallel()
		g := newGate(10)
		b := New(g.run, 10, 1, time.Minute)
		leader := goDo(b, t.Context(), 0)
		g.nextBatch(t)
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		if r := await(t, goDo(b, ctx, 1)); !errors.Is(r.err, context.Canceled) {
			t.Fatalf("Do with an ended ctx = %d, %v; want %v", r.out, r.err, context.Canceled)
		}
		close(g.release)
		wantResult(t, await(t, leader), 0)
		wantResult(t, await(t, goDo(b, t.Context(), 2)), 2)
		if n := g.rec.timesRun(1); n != 0 {
			t.Errorf("input of an ended ctx ran %d times, want never", n)
		}
		checkIdle(t, b)
	})
}

func TestDoLeaderCancellationDoesNotCancelItsBatch(t *testing.T) {
	t.Parallel()
	g := newGate(10)
	b := New(g.run, 10, 1, time.Minute)
	first := goDo(b, t.Context(), 0)
	g.nextBatch(t)

	// 1 is queued first, so it is handed the slot next and leads the batch
	// [1 2 3] for the callers queued behind it.
	ctx, cancel := context.WithCancel(context.WithValue(t.Context(), ctxKey{}, "leader 1"))
	defer cancel()
	leader := goDo(b, ctx, 1)
	waitQueued(t, b, 1)
	others := []<-chan reply{goDo(b, t.Context(), 2)}
	waitQueued(t, b, 2)
	others = append(others, goDo(b, t.Context(), 3))
	waitQueued(t, b, 3)

	g.release <- struct{}{}
	wantResult(t, await(t, first), 0)
	<-g.after
	if got := g.nextBatch(t); !slices.Equal(got, []int{1, 2, 3}) {
		t.Fatalf("batch = %v, want [1 2 3]", got)
	}
	cancel() // while the batch runs
	var info runInfo
	select {
	case g.release <- struct{}{}:
		info = <-g.after
	case info = <-g.after: // run saw its ctx end before it was released
	}
	if info.err != nil {
		t.Errorf("batch ctx ended with its leader's ctx: %v", info.err)
	}
	if info.value != "leader 1" {
		t.Errorf("batch ctx value = %v, want the leader's value %q", info.value, "leader 1")
	}
	if !info.hasDeadline {
		t.Error("batch ctx has no deadline, want the batch timeout")
	}
	wantResult(t, await(t, others[0]), 2)
	wantResult(t, await(t, others[1]), 3)
	// The leader's own input was sent before it gave up, so either outcome
	// is allowed for it.
	if r := await(t, leader); r.err != nil && !errors.Is(r.err, context.Canceled) {
		t.Errorf("cancelled leader got %v, want its result or %v", r.err, context.Canceled)
	} else if r.err == nil && r.out != result(1) {
		t.Errorf("cancelled leader got %d, want %d", r.out, result(1))
	}
	g.rec.check(t, 1)
	checkIdle(t, b)
}

func TestDoBatchTimeout(t *testing.T) {
	t.Parallel()
	b := New(func(ctx context.Context, in []int) ([]int, error) {
		<-ctx.Done() // a batch that never finishes by itself
		return nil, fmt.Errorf("run: %w", ctx.Err())
	}, 10, 1, 10*time.Millisecond)
	// The caller's ctx has no deadline: only the batch timeout can end run.
	if r := await(t, goDo(b, t.Context(), 1)); !errors.Is(r.err, context.DeadlineExceeded) {
		t.Fatalf("Do = %d, %v; want %v", r.out, r.err, context.DeadlineExceeded)
	}
	checkIdle(t, b)
}

// TestDoCancelledNextLeaderPassesTheSlotOn covers a hand-off that races with
// the chosen caller's cancellation: the slot must reach the next caller.
func TestDoCancelledNextLeaderPassesTheSlotOn(t *testing.T) {
	t.Parallel()
	g := newGate(10)
	close(g.release)
	b := New(g.run, 10, 1, time.Minute)
	b.mu.Lock()
	b.leaders = 1 // the test holds the only slot, as a busy leader would
	b.mu.Unlock()

	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	next := goDo(b, ctx, 1)
	waitQueued(t, b, 1)
	after := goDo(b, t.Context(), 2)
	waitQueued(t, b, 2)

	b.mu.Lock()
	cancel()    // 1 gives up ...
	b.handOff() // ... just as the test's slot is handed to it, the oldest caller
	b.mu.Unlock()

	if r := await(t, next); !errors.Is(r.err, context.Canceled) {
		t.Fatalf("cancelled Do = %d, %v; want %v", r.out, r.err, context.Canceled)
	}
	wantResult(t, await(t, after), 2)
	if n := g.rec.timesRun(1); n != 0 {
		t.Errorf("cancelled input ran %d times, want never", n)
	}
	checkIdle(t, b)
}

// TestDoSlotHandedToACompletedCallIsPassedOn forces an interleaving the
// scheduler produces only now and then with several leaders: a leader hands
// its slot to the oldest queued call, and another leader then runs that call
// before its caller has looked at the hand-off. The caller returns with its
// result; the slot it was handed must not be lost with it, or after
// maxLeaders such losses every Do blocks forever.
func TestDoSlotHandedToACompletedCallIsPassedOn(t *testing.T) {
	t.Parallel()
	for _, cancelled := range []bool{false, true} {
		t.Run(fmt.Sprintf("cancelled=%v", cancelled), func(t *testing.T) {
			t.Parallel()
			// Do's select picks at random among ready cases: repeat so that
			// every order is taken.
			for range 64 {
				g := newGate(1)
				b := New(g.run, 1, 2, time.Minute)
				// An older call sits in the queue, so the caller below leads a
				// batch of it while its own call stays queued.
				older := &call[int, int]{in: -1, done: make(chan struct{}), lead: make(chan struct{}, 1)}
				b.mu.Lock()
				b.queue = append(b.queue, older)
				b.mu.Unlock()

				ctx, cancel := context.WithCancel(t.Context())
				r := goDo(b, ctx, 1)
				if got := g.nextBatch(t); !slices.Equal(got, []int{-1}) {
					t.Fatalf("batch = %v, want [-1]", got)
				}
				b.mu.Lock()
				c := b.queue[0]
				b.leaders++ // a second leader ...
				b.handOff() // ... hands its slot to the oldest queued call, c,
				b.queue = b.queue[1:]
				c.sent = true // ... and a leader takes c into a batch
				b.mu.Unlock()
				c.out = result(c.in) // ... that completes.
				close(c.done)
				if cancelled {
					cancel()
				}
				g.release <- struct{}{} // the caller finishes the batch it leads

				rep := await(t, r)
				if !cancelled || rep.err == nil {
					wantResult(t, rep, 1)
				} else if !errors.Is(rep.err, context.Canceled) {
					t.Fatalf("Do = %v, want its result or %v", rep.err, context.Canceled)
				}
				<-older.done
				if older.err != nil || older.out != result(-1) {
					t.Fatalf("older call = %d, %v; want %d, nil", older.out, older.err, result(-1))
				}
				cancel()
				checkIdle(t, b)
				if t.Failed() {
					return
				}
			}
		})
	}
}

// TestDoSurvivesRandomCancellation runs many callers that cancel at random
// moments while others keep calling, then checks that every call returned,
// no input ran twice, every slot was given back and the batcher still works.
func TestDoSurvivesRandomCancellation(t *testing.T) {
	t.Parallel()
	const goroutines, calls, maxBatch, maxLeaders = 64, 200, 8, 3
	rec := newRecorder(maxBatch)
	b := New(func(ctx context.Context, in []int) ([]int, error) {
		rec.enter(ctx, in)
		defer rec.leave()
		runtime.Gosched()
		out := make([]int, len(in))
		for i, v := range in {
			out[i] = result(v)
		}
		return out, nil
	}, maxBatch, maxLeaders, time.Minute)

	var cancelled, succeeded atomic.Int64
	errs := make(chan error, goroutines)
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Go(func() {
			for i := range calls {
				in := g*calls + i
				ctx, cancel := context.WithCancel(t.Context())
				mode := rand.IntN(3)
				switch mode {
				case 1: // ended before the call
					cancel()
				case 2: // ends at some point during the call
					go func() {
						for range rand.IntN(4) {
							runtime.Gosched()
						}
						cancel()
					}()
				}
				out, err := b.Do(ctx, in)
				cancel()
				switch {
				case err == nil && out == result(in):
					succeeded.Add(1)
				case err != nil && mode != 0 && errors.Is(err, context.Canceled) && out == 0:
					cancelled.Add(1)
				default:
					errs <- fmt.Errorf("Do(%d) (mode %d) = %d, %v; want %d or %v", in, mode, out, err, result(in), context.Canceled)
					return
				}
				if err == nil && rec.timesRun(in) != 1 {
					errs <- fmt.Errorf("Do(%d) succeeded but its input ran %d times", in, rec.timesRun(in))
					return
				}
			}
		})
	}
	waitGroup(t, &wg)
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	rec.check(t, maxLeaders)
	for in := range goroutines * calls {
		if n := rec.timesRun(in); n > 1 {
			t.Errorf("input %d ran %d times, want at most once", in, n)
		}
	}
	checkIdle(t, b)
	wantResult(t, await(t, goDo(b, t.Context(), -1)), -1)
	t.Logf("%d succeeded, %d cancelled", succeeded.Load(), cancelled.Load())
}

// An idle batcher runs a lone call at once, on the caller's goroutine; the
// calls that arrive while it runs queue up, and the lone call's end hands
// its slot to them: they run together in the next batch.
func TestDoIdleCallRunsAloneAndHandsTheSlotOn(t *testing.T) {
	var mu sync.Mutex
	var batches [][]int
	entered, release := make(chan struct{}), make(chan struct{})
	var first atomic.Bool
	b := New(func(ctx context.Context, in []int) ([]int, error) {
		mu.Lock()
		batches = append(batches, slices.Clone(in))
		mu.Unlock()
		if first.CompareAndSwap(false, true) {
			close(entered)
			<-release
		}
		out := make([]int, len(in))
		for i, v := range in {
			out[i] = result(v)
		}
		return out, nil
	}, 8, 1, waitLimit)
	done := make(chan int, 4)
	go func() { v, _ := b.Do(context.Background(), 0); done <- v }()
	<-entered
	for i := 1; i <= 3; i++ {
		go func() { v, _ := b.Do(context.Background(), i); done <- v }()
	}
	deadline := time.Now().Add(waitLimit)
	for {
		b.mu.Lock()
		queued := len(b.queue)
		b.mu.Unlock()
		if queued == 3 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d calls queued behind the lone one, want 3", queued)
		}
		runtime.Gosched()
	}
	close(release)
	got := map[int]bool{}
	for range 4 {
		select {
		case v := <-done:
			got[v] = true
		case <-time.After(waitLimit):
			t.Fatal("a call queued behind the lone one never ran: its slot was not handed on")
		}
	}
	for i := 0; i <= 3; i++ {
		if !got[result(i)] {
			t.Errorf("call %d: no result", i)
		}
	}
	if len(batches) != 2 || len(batches[0]) != 1 || len(batches[1]) != 3 {
		t.Errorf("batches %v, want [0] alone, then the three queued together", batches)
	}
}
