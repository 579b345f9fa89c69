package dtq

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dtq-dev/dtq/internal/backoff"
	"github.com/dtq-dev/dtq/internal/batch"
	"github.com/dtq-dev/dtq/internal/claim"
	"github.com/dtq-dev/dtq/internal/delivery"
	"github.com/dtq-dev/dtq/internal/scheduler"
	"github.com/dtq-dev/dtq/internal/store"
)

// maxFetch bounds the tasks claimed by one read; a busy reader waits up to
// batchLinger for more free slots to claim them in bigger batches.
const (
	maxFetch    = 64
	batchLinger = 500 * time.Microsecond
)

// takeMax is the largest busy read that claims and starts in one call
// (take.lua): below it the round trip saved is worth more than the Lua
// reply conversion of the claimed entries' fields (~3 µs of Redis CPU per
// task, measured with dtq bench drain: concurrency 10 drained ~30 % faster
// with it, concurrency 50 took 15-35 % more Redis CPU per task).
const takeMax = 16

// finishReq is one outcome queued for recording.
type finishReq struct {
	task *Task
	item store.FinishItem
}

// workerQueue is a worker's state for one of its queues.
type workerQueue struct {
	w        *Worker
	q        *queueState
	finishes *batch.Batcher[finishReq, string]

	// reader state (used by the reader goroutine only)
	reclaim *delivery.Reclaim // pacing and cursors (one per band)
	busy    bool              // the last read claimed something: read again without blocking
	planned bool              // plain priority-planned reads are possible (the script ran once)
	hot     int               // the band the last read filled its credit from, or -1
	slots   pool              // this queue's claim slots: its tasks claimed and not yet finished

	// handlers holds one token per handler running (capacity: the
	// queue's share): tasks claimed ahead wait for one (worker_ahead.go)
	handlers chan struct{}
	// handlerAvg is the moving average of its handlers' durations (ns;
	// it starts long: nothing is claimed ahead before quick handlers ran)
	handlerAvg atomic.Int64

	startFailed atomic.Bool // a start failed: the next read is busy (set by start's goroutine)
	// starting counts the starts in flight (start's goroutines)
	starting sync.WaitGroup
	// lostClaims: a claim failed with its call in flight, so Redis may
	// have made it (reader only): recoverClaims runs before the next read
	lostClaims bool
	// others and marks follow the reads that brought back only tasks of
	// types the worker does not run (reader only, worker_types.go): marks
	// are the bands' ends once such a read saw nothing new; the next
	// such read waits for a task of its types after them
	others    claim.Others
	marks     []string
	waitTypes bool

	limited atomic.Bool // the queue has a limit: claims are granted first
	leases  leases      // held under a concurrency limit

	// scopes are the queue's scoped limits (a task type's, a limit key's;
	// nil for none): a start takes their leases, or holds the task back
	scopes        atomic.Pointer[claim.Scopes]
	scopeReleases *batch.Batcher[[]string, struct{}]
}

// newQueue returns the worker's state for q, with share slots for its
// handlers (and as many more to claim ahead, worker_ahead.go).
func (w *Worker) newQueue(q *queueState, share int) *workerQueue {
	wq := &workerQueue{
		w:        w,
		q:        q,
		handlers: make(chan struct{}, share),
		reclaim:  delivery.NewReclaim(w.cfg.VisibilityTimeout, store.Bands),
		busy:     true, // the first read runs the script, which creates the groups
		hot:      -1,
	}
	wq.handlerAvg.Store(int64(4 * aheadBelow))
	wq.slots.init(share, aheadOf(share))
	wq.leases.releases = newLeaseReleases(wq)
	wq.scopeReleases = newScopeReleases(wq)
	keepSucceeded, keepOthers := w.c.cfg.retentions()
	cfg := store.FinishConfig{Retention: keepOthers, KeepSucceeded: keepSucceeded > 0, IdemWindow: w.c.cfg.IdempotencyWindow,
		Durability: w.c.durability()}
	wq.finishes = batch.New(func(ctx context.Context, items []finishReq) ([]string, error) {
		scriptItems := make([]store.FinishItem, len(items))
		for i, r := range items {
			scriptItems[i] = r.item
		}
		res, err := q.store.Finish(ctx, cfg, w.cfg.ID, scriptItems)
		var nre *store.NotReplicatedError
		if errors.As(err, &nre) {
			// Recorded on the master, not (yet) on enough replicas: an
			// error, so that each outcome is recorded again (a no-op on
			// this master) until the replicas have it — or, after a
			// failover, until the new master has it; meanwhile the tasks
			// stay renewed, and never run again.
			w.log.Warn("task outcomes not acknowledged by enough replicas; recording them again", "queue", q.name, "tasks", len(items), "error", err)
		}
		if err != nil {
			w.c.redisError("finish", err)
			return nil, err
		}
		// One PUBLISH for the batch's events.
		events := make([]string, 0, len(items))
		for i, r := range items {
			if res[i] == "" {
				continue
			}
			errText := ""
			if r.item.Outcome != store.OutcomeOK {
				errText = r.item.Text
			}
			events = append(events, eventLine(r.task, Status(res[i]), errText))
		}
		w.c.publish(q.store.Keys().Events(), events)
		return res, nil
	}, 256, 1, 10*time.Second)
	return wq
}

// read is the queue's reader: it claims tasks while the worker has free
// slots and starts them.
func (wq *workerQueue) read(ctx context.Context) {
	var retry backoff.Backoff
	w := wq.w
	share := wq.slots.size
	for {
		if wq.lostClaims {
			if err := wq.recoverClaims(ctx); err != nil {
				if ctx.Err() != nil {
					return
				}
				w.c.redisError("read", err)
				w.log.Warn("reading this worker's claims failed; retrying", "queue", wq.q.name, "error", err)
				if retry.Sleep(ctx) != nil {
					return
				}
				continue
			}
			wq.lostClaims = false
		}
		if !wq.waitForTypes(ctx) {
			return
		}
		limit, want := maxFetch, 1
		if wq.busy {
			// Tasks are waiting: gather a few free slots to claim them in
			// one batch.
			want = min(max(1, share/4), maxFetch)
		} else {
			limit = min(maxFetch, share) // a blocking read holds its slots while it waits
		}
		wq.slots.hold(!wq.aheadAllowed())
		n, ok := wq.slots.acquire(ctx, want, limit, batchLinger)
		if !ok {
			return
		}
		mode := store.Unlimited
		if wq.limited.Load() && !wq.busy && n > 1 {
			// An idle reader of a limited queue waits for a task with one
			// claim granted: the others stay free for the workers that
			// have work.
			wq.slots.release(n - 1)
			n = 1
		}
		if wq.limited.Load() {
			// A limited queue: claim no more than the limits granted.
			got, m, err := wq.acquireLeases(ctx, n)
			mode = m
			if err != nil || got < n {
				wq.slots.release(n - got)
			}
			if err != nil || got == 0 {
				if ctx.Err() != nil {
					return
				}
				if err != nil {
					w.c.redisError("lease", err)
					w.log.Warn("acquiring concurrency leases failed; retrying", "queue", wq.q.name, "error", err)
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
		entries, pre, err := wq.fetch(ctx, n)
		if w.stallClaims != nil && len(entries) > 0 {
			w.stallClaims()
		}
		if err != nil {
			wq.slots.release(n)
			wq.giveBack(context.WithoutCancel(ctx), mode, n)
			if ctx.Err() != nil {
				return
			}
			w.c.redisError("read", err)
			w.log.Warn("reading tasks failed; retrying", "queue", wq.q.name, "error", err)
			wq.busy = true
			wq.lostClaims = true // (its answer may be what was lost)
			if retry.Sleep(ctx) != nil {
				return
			}
			continue
		}
		retry.Reset()
		wq.passOthers(ctx, entries)
		if len(entries) > n { // a blocking read can return more than asked
			for i := range entries[n:] {
				entries[n+i].GiveBack = true
			}
		}
		if len(entries) < n {
			wq.slots.release(n - len(entries))
			wq.giveBack(context.WithoutCancel(ctx), mode, n-len(entries))
		}
		granted := min(n, len(entries))
		if mode == store.Unlimited && wq.limited.Load() && len(entries) > 0 {
			// A limit was set while this read was out: its claims take
			// leases now, and those beyond the limit go back.
			mode, granted = wq.leaseLate(context.WithoutCancel(ctx), entries, pre, granted)
		}
		if len(entries) > 0 {
			// Start this batch while the next read goes out: the reader is
			// bound by round trips, not by work.
			wq.starting.Add(1)
			w.readers.Go(func() {
				defer wq.starting.Done()
				wq.start(context.WithoutCancel(ctx), ctx, entries, pre, claimed, min(n, len(entries)), mode, granted)
			})
		}
	}
}

// fetch claims up to n entries: exactly, in priority order, with read.lua
// when the queue is busy or a reclaim pass is due; otherwise with one
// blocking XREADGROUP over the bands, which wakes as soon as a task arrives.
// Entries a busy read started already have their outcome in pre (nil when
// none did).
func (wq *workerQueue) fetch(ctx context.Context, n int) (entries []store.Entry, pre []store.Started, err error) {
	w, sq := wq.w, wq.q.store
	if wq.startFailed.Swap(false) {
		wq.busy = true
	}
	reclaimDue := wq.reclaim.Due(time.Now())
	implicit := wq.implicitStarts()
	if wq.busy && !reclaimDue && wq.planned && wq.hot >= 0 && (n > takeMax || implicit) {
		// Still busy from one band: read the bands from 9 down to it in one
		// plain XREADGROUP (a higher band that filled meanwhile is read
		// first; anything beyond n is given back by the caller), and start
		// what it can as implicit first runs.
		entries, pre, err := wq.readBands(ctx, n, 0, wq.hot, implicit)
		if err != nil || len(entries) < n {
			wq.hot = -1 // next time, plan from the counts
		}
		return entries, pre, err
	}
	if wq.busy && !reclaimDue && wq.planned && wq.hot >= 0 && wq.scopes.Load() == nil {
		// The same for a small batch, claimed and started in one call: a
		// round trip saved where round trips are the limit. (Not under
		// scoped limits: take.lua starts without asking them.)
		entries, pre, missing, err := sq.Take(ctx, wq.startConfig(), n, wq.hot)
		var nre *store.NotReplicatedError
		if errors.As(err, &nre) {
			wq.notReplicated(len(entries), err)
			err = nil
		}
		if missing {
			wq.planned = false // the script path recreates a missing group
		}
		if err != nil || len(entries) < n {
			wq.hot = -1 // next time, plan from the counts
		}
		return entries, pre, err
	}
	if wq.busy && !reclaimDue && wq.planned {
		// Planned from the counts, and started as implicit first runs
		// where it can, as readBands does: a queue that keeps draining to
		// empty plans often, and start.lua would start each of its claims.
		paused, entries, st, err := sq.ReadPlanned(ctx, w.cfg.ID, n, implicit)
		if err != nil {
			wq.planned = false // the script path recreates a missing group
			return entries, nil, err
		}
		if paused {
			return nil, nil, wq.waitResume(ctx)
		}
		wq.busy = len(entries) > 0
		wq.hot = -1
		if len(entries) == n && entries[0].Band == entries[len(entries)-1].Band {
			wq.hot = entries[0].Band
		}
		if implicit && len(entries) > 0 && wq.implicitStarts() { // (a limit set meanwhile holds them)
			claim.GiveBackOthers(entries, w.types)
			pre = store.StartImplicit(entries, st)
		}
		return entries, pre, nil
	}
	if wq.busy || reclaimDue {
		req := store.ReadRequest{Consumer: w.cfg.ID, Credit: n, Cursors: wq.reclaim.Cursors, EnsureGroups: !wq.planned}
		if reclaimDue {
			req.ReclaimIdle = w.cfg.VisibilityTimeout
		}
		res, err := sq.Read(ctx, req)
		if err != nil {
			return nil, nil, err
		}
		wq.reclaim.Cursors = res.Cursors
		if reclaimDue {
			wq.reclaim.Began(time.Now())
			wq.reportReclaims(res.Entries)
		}
		if res.Paused {
			wq.busy = true
			return nil, nil, wq.waitResume(ctx)
		}
		wq.planned = true // the groups exist: plain reads work
		wq.busy = len(res.Entries) > 0
		return res.Entries, nil, nil
	}
	wait := max(wq.reclaim.Wait(time.Now()), time.Millisecond)
	entries, pre, err = wq.readBands(ctx, n, wait, 0, implicit)
	if err != nil || !wq.planned { // a missing group: the script's turn
		return nil, nil, err
	}
	wq.busy = len(entries) > 0
	return entries, pre, nil
}

// implicitStarts reports whether this queue's plain reads start the
// entries of the common case themselves, as implicit first runs
// (store.StartImplicit): no limit to ask first, no replicas to wait for.
func (wq *workerQueue) implicitStarts() bool {
	return wq.scopes.Load() == nil && !wq.limited.Load() && wq.w.c.cfg.DurableReplicas == 0
}

// readBands claims up to n new entries (per band) with one plain
// XREADGROUP over bands 9 down to low; with block > 0 it waits up to that
// long for the first. With implicit it starts those it can (pre, as
// store.StartImplicit; nil otherwise). A missing group makes the next read
// use the script.
func (wq *workerQueue) readBands(ctx context.Context, n int, block time.Duration, low int, implicit bool) ([]store.Entry, []store.Started, error) {
	sq := wq.q.store
	var entries []store.Entry
	var missing bool
	var err error
	var pre []store.Started
	if implicit {
		var st store.ReadState
		entries, st, missing, err = sq.ReadBandsState(ctx, wq.w.cfg.ID, n, block, low)
		// Asked again: a limit set during a blocking read holds its entries.
		if err == nil && len(entries) > 0 && wq.implicitStarts() {
			for i := n; i < len(entries); i++ {
				entries[i].GiveBack = true // beyond n (up to n per band): start.lua gives them back
			}
			claim.GiveBackOthers(entries, wq.w.types)
			pre = store.StartImplicit(entries, st)
		}
	} else {
		entries, missing, err = sq.ReadBands(ctx, wq.w.cfg.ID, n, block, low)
	}
	if err != nil || missing {
		wq.busy, wq.planned = true, false // the script recreates a missing group
	}
	return entries, pre, err
}

// waitResume blocks until the queue may have been resumed (or a second).
func (wq *workerQueue) waitResume(ctx context.Context) error {
	return wq.q.store.WaitWakeup(ctx, "$", time.Second)
}

// start runs start.lua for entries claimed at claimed and launches the
// started tasks; slots is how many slots the caller holds for them, granted
// how many claims the queue's limits gave them (with mode). A start whose
// answer is lost is asked again (resumeStarts) until stop ends.
func (wq *workerQueue) start(ctx, stop context.Context, entries []store.Entry, pre []store.Started, claimed time.Time, slots, mode, granted int) {
	w := wq.w
	claim.GiveBackOthers(entries, w.types)
	for i := range entries {
		entries[i].Scopes = wq.scopesFor(&entries[i])
	}
	started, err := wq.startRest(ctx, entries, pre)
	var nre *store.NotReplicatedError
	if err != nil && !errors.As(err, &nre) {
		started, err = wq.resumeStarts(ctx, stop, entries, started, err)
	}
	if errors.As(err, &nre) {
		wq.notReplicated(len(entries), err)
		err = nil
	}
	if err != nil && started != nil {
		// Stopped before Redis answered for the rest: those take.lua
		// started run; the rest stay claimed until reclaimed.
		w.log.Warn("starting tasks failed", "queue", wq.q.name, "error", err)
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
		w.c.redisError("start", err)
		w.log.Warn("starting tasks failed", "queue", wq.q.name, "error", err)
		wq.slots.release(min(slots, len(entries)))
		wq.giveBack(ctx, mode, granted)
		wq.startFailed.Store(true)
		return
	}
	launched := 0
	var events []string
	obs := w.c.obs
	for i, s := range started {
		e := entries[i]
		typ := ""
		if e.Spec != nil {
			typ = e.Spec.Type
		}
		switch s.Code {
		case store.Died:
			if e.Malformed {
				w.log.Warn("malformed band entry dead-lettered", logTaskID, e.TaskID, logQueue, wq.q.name, "entry", e.EntryID)
			} else {
				w.log.Warn("task dead: its workers were lost more than MaxCrashes times",
					logTaskID, e.TaskID, logQueue, wq.q.name, logTaskType, typ)
			}
			obs.ended(TaskRef{ID: e.TaskID, Queue: wq.q.name, Type: typ}, OutcomeDead)
		case store.Parked, store.Deferred:
			obs.throttled(wq.q.name, 1)
		case store.Withdrawn:
			w.log.Info("task cancelled while its worker was lost; it is not started again",
				logTaskID, e.TaskID, logQueue, wq.q.name, logTaskType, typ)
			obs.ended(TaskRef{ID: e.TaskID, Queue: wq.q.name, Type: typ}, OutcomeCancelled)
		}
		if s.Code != store.Began || e.GiveBack || e.Spec == nil {
			continue
		}
		t := w.c.startedTask(wq.q.name, &e, s, w.cfg.ID)
		t.scopes, t.leased, t.claimed = e.Scopes, wq.leasedScopes(e.Scopes), claimed
		if e.Born {
			t.born = e.Spec
		}
		events = append(events, eventLine(t, StatusRunning, ""))
		if obs.on() {
			obs.started(TaskRef{ID: t.ID, Queue: wq.q.name, Type: t.Type}, pickup(e.EntryID, s.Started))
		}
		w.launch(wq, t, mode == store.Leased)
		launched++
	}
	w.c.publish(wq.q.store.Keys().Events(), events)
	wq.slots.release(min(slots, len(entries)) - launched)
	wq.giveBack(ctx, mode, granted-launched)
}

// startRest starts with start.lua the entries that pre (the outcomes of a
// take.lua call; nil: none) did not start, and returns every entry's
// outcome. On an error, pre comes back as it was (nil: none started).
func (wq *workerQueue) startRest(ctx context.Context, entries []store.Entry, pre []store.Started) ([]store.Started, error) {
	if pre == nil {
		return wq.q.store.Start(ctx, wq.startConfig(), entries)
	}
	var rest []store.Entry
	var at []int
	for i, s := range pre {
		if s.Code == store.Unstarted {
			rest = append(rest, entries[i])
			at = append(at, i)
		}
	}
	if len(rest) == 0 {
		return pre, nil
	}
	started, err := wq.q.store.Start(ctx, wq.startConfig(), rest)
	var nre *store.NotReplicatedError
	if err != nil && !errors.As(err, &nre) {
		return pre, err
	}
	for j, i := range at {
		pre[i] = started[j]
	}
	return pre, err
}

// startConfig is what start.lua and take.lua need of this worker.
func (wq *workerQueue) startConfig() store.StartConfig {
	w := wq.w
	return store.StartConfig{Worker: w.cfg.ID, MaxCrashes: w.cfg.MaxCrashes, Retention: w.c.keepOthers(),
		Durability: w.c.durability(), LeaseTTL: w.cfg.VisibilityTimeout, Types: w.typeList}
}

// notReplicated reports starts the replicas did not acknowledge in time:
// started on the master, they run (a failover before replication would run
// these tasks again).
func (wq *workerQueue) notReplicated(tasks int, err error) {
	w := wq.w
	w.log.Warn("task starts not acknowledged by enough replicas", "queue", wq.q.name, "tasks", tasks, "error", err)
	w.c.redisError("start", err)
}

// reportReclaims reports the entries of a read that were taken over from
// lost workers.
func (wq *workerQueue) reportReclaims(entries []store.Entry) {
	obs := wq.w.c.obs
	if !obs.on() {
		return
	}
	var refs []TaskRef
	for _, e := range entries {
		if e.Reclaimed {
			ref := TaskRef{ID: e.TaskID, Queue: wq.q.name}
			if e.Spec != nil {
				ref.Type = e.Spec.Type
			}
			refs = append(refs, ref)
		}
	}
	obs.reclaimed(wq.q.name, refs)
}

// schedule runs the queue's scheduler until ctx ends.
func (wq *workerQueue) schedule(ctx context.Context) {
	c := wq.w.c.cfg
	s := &scheduler.Scheduler{
		Queue: wq.q.store, Owner: wq.w.cfg.ID, Retention: wq.w.c.keepOthers(), MaxFinished: c.MaxFinished, MaxDead: c.DeadLetterMaxLen,
		Log: wq.w.log.With("component", "scheduler", "queue", wq.q.name), TraceTick: wq.w.c.traceTick(wq.q.name),
	}
	s.Run(ctx)
}
