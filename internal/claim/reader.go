package claim

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dtq-dev/dtq/internal/backoff"
	"github.com/dtq-dev/dtq/internal/batch"
	"github.com/dtq-dev/dtq/internal/store"
)

// MaxFetch bounds the tasks claimed by one read; a busy reader waits up to
// batchLinger for more free slots to claim them in bigger batches.
const (
	MaxFetch    = 64
	batchLinger = 500 * time.Microsecond
)

// takeMax is the largest busy read that claims and starts in one call
// (take.lua): below it the round trip saved is worth more than the Lua
// reply conversion of the claimed entries' fields (~3 µs of Redis CPU per
// task, measured with dtq bench drain: concurrency 10 drained ~30 % faster
// with it, concurrency 50 took 15-35 % more Redis CPU per task).
const takeMax = 16

// ReaderConfig is what a Go worker's reader of one queue is fixed with.
type ReaderConfig struct {
	Consumer   string        // the worker's id
	Visibility time.Duration // its visibility timeout
	Share      int           // the queue's handler slots (Slots)
	// Replicated: starts wait for replicas (Hooks.Durability), so plain
	// reads never start the entries they claim themselves.
	Replicated bool
	// Held reports whether a run of the worker holds task id
	// (recoverClaims).
	Held func(id string) bool
	// Launch hands the runs a start began to handlers, every one of them
	// (its slot is then the handler's to release); claimed is when the
	// read that claimed them went out.
	Launch func(claims []Claim, claimed time.Time)
}

// RunConfig is what a reader learns at its worker's Start.
type RunConfig struct {
	Types    Types    // the types the worker runs
	TypeList []string // Types, sorted (take.lua's filter)
	// AheadBelow: the handlers' average below which it claims ahead.
	AheadBelow time.Duration
	// Stall, set by tests only, runs when a read returns claims: a worker
	// frozen with the read's reply on its way (SIGSTOP, a long pause).
	Stall func()
	// LoseReply, set by tests only, runs when a read returns claims: true
	// drops the reply as lost with the read in flight (a stop's, when the
	// run's context has ended).
	LoseReply func(context.Context) bool
}

// Reader is a Go worker's claimer of one queue: one goroutine (Run) claims
// tasks while the queue has free slots and starts them, with the cheapest
// read the queue's state allows (fetch), claiming ahead while handlers are
// quick (ahead.go), under the queue's limits (reader_limits.go), following
// the type rule (reader_types.go), and finding again the claims whose
// answer was lost (reader_recover.go).
type Reader struct {
	*Claimer
	rc  ReaderConfig
	run RunConfig

	// reader state (used by Run's goroutine only)
	busy    bool // the last read claimed something: read again without blocking
	planned bool // plain priority-planned reads are possible (the script ran once)
	hot     int  // the band the last read filled its credit from, or -1
	// lostClaims: a claim failed with its call in flight, so Redis may
	// have made it: recoverClaims runs before the next read
	lostClaims bool
	// others and marks follow the reads that brought back only tasks of
	// types the worker does not run (reader_types.go)
	others    Others
	marks     []string
	waitTypes bool

	Slots Slots // the queue's claim slots: its tasks claimed and not yet finished
	// handlers holds one token per handler running (capacity: the
	// queue's share): tasks claimed ahead wait for one (ahead.go)
	handlers chan struct{}
	// handlerAvg is the moving average of its handlers' durations (ns;
	// it starts long: nothing is claimed ahead before quick handlers ran)
	handlerAvg atomic.Int64

	startFailed atomic.Bool    // a start failed: the next read is busy (set by start's goroutine)
	starting    sync.WaitGroup // the starts in flight (start's goroutines)

	leases        heldLeases // held under a queue-wide concurrency limit
	scopeReleases *batch.Batcher[[]string, struct{}]
}

// NewReader returns the reader of c's queue for a Go worker. It does no
// I/O.
func NewReader(c *Claimer, cfg ReaderConfig) *Reader {
	r := &Reader{Claimer: c, rc: cfg, handlers: make(chan struct{}, cfg.Share), busy: true, hot: -1}
	// (busy: the first read runs the script, which creates the groups)
	r.handlerAvg.Store(int64(4 * AheadBelow))
	r.Slots.init(cfg.Share, AheadOf(cfg.Share))
	r.leases.releases = batch.New(func(ctx context.Context, names []string) ([]struct{}, error) {
		return make([]struct{}, len(names)), c.q.ReleaseLeases(ctx, names, 0)
	}, 256, 1, 10*time.Second)
	r.scopeReleases = batch.New(func(ctx context.Context, items [][]string) ([]struct{}, error) {
		var names []string
		for _, it := range items {
			names = append(names, it...)
		}
		return make([]struct{}, len(items)), c.q.ReleaseScopeLeases(ctx, names)
	}, 256, 1, 10*time.Second)
	return r
}

// Run claims tasks while the worker has free slots and starts them, until
// ctx ends; it returns once the starts it began have ended.
func (r *Reader) Run(ctx context.Context, rc RunConfig) {
	r.run = rc
	defer r.starting.Wait()
	var retry backoff.Backoff
	share := r.Slots.size
	for {
		if r.lostClaims {
			if err := r.recoverClaims(ctx); err != nil {
				if ctx.Err() != nil {
					return
				}
				r.hooks.RedisError("read", err)
				r.log.Warn("reading this worker's claims failed; retrying", "queue", r.cfg.Queue, "error", err)
				if retry.Sleep(ctx) != nil {
					return
				}
				continue
			}
			r.lostClaims = false
		}
		if !r.waitForTypes(ctx) {
			return
		}
		limit, want := MaxFetch, 1
		if r.busy {
			// Tasks are waiting: gather a few free slots to claim them in
			// one batch.
			want = min(max(1, share/4), MaxFetch)
		} else {
			limit = min(MaxFetch, share) // a blocking read holds its slots while it waits
		}
		r.Slots.hold(!r.aheadAllowed())
		n, ok := r.Slots.acquire(ctx, want, limit, batchLinger)
		if !ok {
			return
		}
		mode := store.Unlimited
		limited := r.Limits.Limited()
		if limited && !r.busy && n > 1 {
			// An idle reader of a limited queue waits for a task with one
			// claim granted: the others stay free for the workers that
			// have work.
			r.Slots.Release(n - 1)
			n = 1
		}
		if limited {
			// A limited queue: claim no more than the limits granted.
			got, m, err := r.acquireLeases(ctx, n)
			mode = m
			if err != nil || got < n {
				r.Slots.Release(n - got)
			}
			if err != nil || got == 0 {
				if ctx.Err() != nil {
					return
				}
				if err != nil {
					r.hooks.RedisError("lease", err)
					r.log.Warn("acquiring concurrency leases failed; retrying", "queue", r.cfg.Queue, "error", err)
					if retry.Sleep(ctx) != nil {
						return
					}
				}
				continue
			}
			n = got
		}
		// Taken before the read goes out: Redis claims its entries later,
		// and a process frozen (SIGSTOP) with the read in flight gets
		// their reply only when it thaws, its claims perhaps taken over.
		claimed := time.Now()
		entries, pre, err := r.fetch(ctx, n)
		if r.run.Stall != nil && len(entries) > 0 {
			r.run.Stall()
		}
		if r.run.LoseReply != nil && err == nil && len(entries) > 0 && r.run.LoseReply(ctx) {
			entries, pre, err = nil, nil, context.Cause(ctx)
		}
		if err != nil {
			r.Slots.Release(n)
			r.giveBack(context.WithoutCancel(ctx), mode, n)
			if ctx.Err() != nil {
				// Stopping: the read, cancelled in flight, may have claimed
				// tasks whose reply it lost (an idle reader's blocking
				// read, their implicit start): they are found and run now,
				// as claims made before the stop — not left RUNNING
				// without a handler until the visibility timeout. (Should
				// that fail, they are; so is a task a read script started:
				// recoverClaims leaves a run of this worker's alone, which
				// may be one whose outcome is on its way.)
				rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), recoverOnStopWithin)
				_ = r.recoverClaims(rctx)
				cancel()
				return
			}
			r.hooks.RedisError("read", err)
			r.log.Warn("reading tasks failed; retrying", "queue", r.cfg.Queue, "error", err)
			r.busy = true
			r.lostClaims = true // (its answer may be what was lost)
			if retry.Sleep(ctx) != nil {
				return
			}
			continue
		}
		retry.Reset()
		r.passOthers(ctx, entries)
		if len(entries) > n { // a blocking read can return more than asked
			for i := range entries[n:] {
				entries[n+i].GiveBack = true
			}
		}
		if len(entries) < n {
			r.Slots.Release(n - len(entries))
			r.giveBack(context.WithoutCancel(ctx), mode, n-len(entries))
		}
		granted := min(n, len(entries))
		if mode == store.Unlimited && r.Limits.Limited() && len(entries) > 0 {
			// A limit was set while this read was out: its claims take
			// leases now, and those beyond the limit go back.
			mode, granted = r.leaseLate(context.WithoutCancel(ctx), entries, pre, granted)
		}
		if len(entries) > 0 {
			// Start this batch while the next read goes out: the reader is
			// bound by round trips, not by work.
			r.starting.Go(func() {
				r.start(context.WithoutCancel(ctx), ctx, entries, pre, claimed, min(n, len(entries)), mode, granted)
			})
		}
	}
}

// fetch claims up to n entries: exactly, in priority order, with read.lua
// when the queue is busy or a reclaim pass is due; otherwise with one
// blocking XREADGROUP over the bands, which wakes as soon as a task arrives.
// Entries a busy read started already have their outcome in pre (nil when
// none did).
func (r *Reader) fetch(ctx context.Context, n int) (entries []store.Entry, pre []store.Started, err error) {
	sq := r.q
	if r.startFailed.Swap(false) {
		r.busy = true
	}
	reclaimDue := r.ReclaimDue(time.Now())
	implicit := r.implicitStarts()
	if r.busy && !reclaimDue && r.planned && r.hot >= 0 && (n > takeMax || implicit) {
		// Still busy from one band: read the bands from 9 down to it in one
		// plain XREADGROUP (a higher band that filled meanwhile is read
		// first; anything beyond n is given back by the caller), and start
		// what it can as implicit first runs.
		entries, pre, err := r.readBands(ctx, n, 0, r.hot, implicit)
		if err != nil || len(entries) < n {
			r.hot = -1 // next time, plan from the counts
		}
		return entries, pre, err
	}
	if r.busy && !reclaimDue && r.planned && r.hot >= 0 && !r.Limits.Scoped() {
		// The same for a small batch, claimed and started in one call: a
		// round trip saved where round trips are the limit. (Not under
		// scoped limits: take.lua starts without asking them.)
		entries, pre, missing, err := sq.Take(ctx, r.startConfig(), n, r.hot)
		var nre *store.NotReplicatedError
		if errors.As(err, &nre) {
			r.notReplicated(len(entries), err)
			err = nil
		}
		if missing {
			r.planned = false // the script path recreates a missing group
		}
		if err != nil || len(entries) < n {
			r.hot = -1 // next time, plan from the counts
		}
		return entries, pre, err
	}
	if r.busy && !reclaimDue && r.planned {
		// Planned from the counts, and started as implicit first runs
		// where it can, as readBands does: a queue that keeps draining to
		// empty plans often, and start.lua would start each of its claims.
		paused, entries, st, err := sq.ReadPlanned(ctx, r.rc.Consumer, n, implicit)
		if err != nil {
			r.planned = false // the script path recreates a missing group
			return entries, nil, err
		}
		if paused {
			return nil, nil, r.waitResume(ctx)
		}
		r.busy = len(entries) > 0
		r.hot = -1
		if len(entries) == n && entries[0].Band == entries[len(entries)-1].Band {
			r.hot = entries[0].Band
		}
		if implicit && len(entries) > 0 && r.implicitStarts() { // (a limit set meanwhile holds them)
			GiveBackOthers(entries, r.run.Types)
			pre = store.StartImplicit(entries, st)
		}
		return entries, pre, nil
	}
	if r.busy || reclaimDue {
		res, err := r.Read(ctx, r.rc.Consumer, n, r.rc.Visibility, !r.planned)
		if err != nil {
			return nil, nil, err
		}
		if res.Paused {
			r.busy = true
			return nil, nil, r.waitResume(ctx)
		}
		r.planned = true // the groups exist: plain reads work
		r.busy = len(res.Entries) > 0
		return res.Entries, nil, nil
	}
	wait := max(r.ReclaimWait(time.Now()), time.Millisecond)
	entries, pre, err = r.readBands(ctx, n, wait, 0, implicit)
	if err != nil || !r.planned { // a missing group: the script's turn
		return nil, nil, err
	}
	r.busy = len(entries) > 0
	return entries, pre, nil
}

// implicitStarts reports whether this queue's plain reads start the
// entries of the common case themselves, as implicit first runs
// (store.StartImplicit): no limit to ask first, no replicas to wait for.
func (r *Reader) implicitStarts() bool {
	return !r.Limits.Scoped() && !r.Limits.Limited() && !r.rc.Replicated
}

// readBands claims up to n new entries (per band) with one plain
// XREADGROUP over bands 9 down to low; with block > 0 it waits up to that
// long for the first. With implicit it starts those it can (pre, as
// store.StartImplicit; nil otherwise). A missing group makes the next read
// use the script.
func (r *Reader) readBands(ctx context.Context, n int, block time.Duration, low int, implicit bool) ([]store.Entry, []store.Started, error) {
	sq := r.q
	var entries []store.Entry
	var missing bool
	var err error
	var pre []store.Started
	if implicit {
		var st store.ReadState
		entries, st, missing, err = sq.ReadBandsState(ctx, r.rc.Consumer, n, block, low)
		// Asked again: a limit set during a blocking read holds its entries.
		if err == nil && len(entries) > 0 && r.implicitStarts() {
			for i := n; i < len(entries); i++ {
				entries[i].GiveBack = true // beyond n (up to n per band): start.lua gives them back
			}
			GiveBackOthers(entries, r.run.Types)
			pre = store.StartImplicit(entries, st)
		}
	} else {
		entries, missing, err = sq.ReadBands(ctx, r.rc.Consumer, n, block, low)
	}
	if err != nil || missing {
		r.busy, r.planned = true, false // the script recreates a missing group
	}
	return entries, pre, err
}

// waitResume blocks until the queue may have been resumed (or a second).
func (r *Reader) waitResume(ctx context.Context) error {
	return r.q.WaitWakeup(ctx, "$", time.Second)
}

// start runs start.lua for entries claimed at claimed and launches the
// started tasks; slots is how many slots the caller holds for them, granted
// how many claims the queue's limits gave them (with mode). A start whose
// answer is lost is asked again until stop ends.
func (r *Reader) start(ctx, stop context.Context, entries []store.Entry, pre []store.Started, claimed time.Time, slots, mode, granted int) {
	GiveBackOthers(entries, r.run.Types)
	for i := range entries {
		entries[i].Scopes = r.Limits.ScopesOf(&entries[i])
	}
	started, err := r.Claimer.start(ctx, stop, r.startConfig(), entries, pre, min(time.Second, r.rc.Visibility/4))
	var nre *store.NotReplicatedError
	if errors.As(err, &nre) {
		r.notReplicated(len(entries), err)
		err = nil
	}
	if err != nil && started != nil {
		// Stopped before Redis answered for the rest: those take.lua
		// started run; the rest stay claimed until reclaimed.
		r.log.Warn("starting tasks failed", "queue", r.cfg.Queue, "error", err)
		for i := range started {
			if started[i].Code == store.Unstarted {
				started[i].Code = store.Skipped
			}
		}
		err = nil
	}
	if err != nil {
		// Stopped before Redis answered: the entries stay claimed; reclaim
		// passes hand them on after the visibility timeout.
		r.hooks.RedisError("start", err)
		r.log.Warn("starting tasks failed", "queue", r.cfg.Queue, "error", err)
		r.Slots.Release(min(slots, len(entries)))
		r.giveBack(ctx, mode, granted)
		r.startFailed.Store(true)
		return
	}
	claims := r.settle(entries, started)
	if mode == store.Leased {
		for i := range claims {
			claims[i].Limit = r.rc.Consumer // (its lease is one of those held)
		}
	}
	if len(claims) > 0 {
		r.rc.Launch(claims, claimed)
	}
	r.Slots.Release(min(slots, len(entries)) - len(claims))
	r.giveBack(ctx, mode, granted-len(claims))
}

// startConfig is what start.lua and take.lua need of this worker.
func (r *Reader) startConfig() store.StartConfig {
	return store.StartConfig{Worker: r.rc.Consumer, MaxCrashes: r.cfg.MaxCrashes, Retention: r.cfg.Retention,
		Durability: r.hooks.Durability(), LeaseTTL: r.rc.Visibility, Types: r.run.TypeList}
}
