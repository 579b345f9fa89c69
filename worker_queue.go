package dtq

import (
	"context"
	"errors"
	"time"

	"github.com/dtq-dev/dtq/internal/backoff"
	"github.com/dtq-dev/dtq/internal/batch"
	"github.com/dtq-dev/dtq/internal/keys"
	"github.com/dtq-dev/dtq/internal/scheduler"
	"github.com/dtq-dev/dtq/internal/taskscript"
	"github.com/redis/rueidis"
)

// maxFetch bounds the tasks claimed by one read; a busy reader waits up to
// batchLinger for more free slots to claim them in bigger batches.
const (
	maxFetch    = 64
	batchLinger = 500 * time.Microsecond
)

// finishReq is one outcome queued for recording.
type finishReq struct {
	task *Task
	item taskscript.FinishItem
}

// workerQueue is a worker's state for one of its queues.
type workerQueue struct {
	w        *Worker
	q        *queueState
	finishes *batch.Batcher[finishReq, string]

	// reader state (used by the reader goroutine only)
	cursors      [keys.Bands]string
	lastReclaim  time.Time
	reclaimEvery time.Duration
	busy         bool // the last read claimed something: read again without blocking
	planned      bool // plain priority-planned reads are possible (the script ran once)
	hot          int  // the band the last read filled its credit from, or -1
}

func (w *Worker) newQueue(q *queueState) *workerQueue {
	wq := &workerQueue{
		w:            w,
		q:            q,
		reclaimEvery: min(max(w.cfg.VisibilityTimeout/4, 10*time.Millisecond), time.Second),
		busy:         true, // the first read runs the script, which creates the groups
		hot:          -1,
	}
	cfg := taskscript.FinishConfig{
		Group: w.group, Retention: w.c.cfg.Retention, IdemWindow: w.c.cfg.IdempotencyWindow,
		DLQMaxLen: w.c.cfg.DeadLetterMaxLen, Durability: w.c.durability(),
	}
	wq.finishes = batch.New(func(ctx context.Context, items []finishReq) ([]string, error) {
		scriptItems := make([]taskscript.FinishItem, len(items))
		for i, r := range items {
			scriptItems[i] = r.item
		}
		res, err := taskscript.Finish(ctx, w.c.redis, q.keys, cfg, w.cfg.ID, scriptItems)
		var nre *taskscript.NotReplicatedError
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
			if r.item.Outcome != taskscript.OutcomeOK {
				errText = r.item.Text
			}
			events = append(events, eventLine(r.task, Status(res[i]), errText))
		}
		w.c.publish(q.keys.Events(), events)
		return res, nil
	}, 256, 1, 10*time.Second)
	return wq
}

// read is the queue's reader: it claims tasks while the worker has free
// slots and starts them.
func (wq *workerQueue) read(ctx context.Context) {
	var retry backoff.Backoff
	w := wq.w
	share := max(1, w.cfg.Concurrency/len(w.queues))
	for {
		limit, want := maxFetch, 1
		if wq.busy {
			// Tasks are waiting: gather a few free slots to claim them in
			// one batch.
			want = min(max(1, share/4), maxFetch)
		} else {
			limit = min(maxFetch, share) // a blocking read holds its slots while it waits
		}
		n, ok := w.slots.acquire(ctx, want, limit, batchLinger)
		if !ok {
			return
		}
		entries, err := wq.fetch(ctx, n)
		if err != nil {
			w.slots.release(n)
			if ctx.Err() != nil {
				return
			}
			w.c.redisError("read", err)
			w.log.Warn("reading tasks failed; retrying", "queue", wq.q.name, "error", err)
			wq.busy = true
			if retry.Sleep(ctx) != nil {
				return
			}
			continue
		}
		retry.Reset()
		if len(entries) > n { // a blocking read can return more than asked
			for i := range entries[n:] {
				entries[n+i].GiveBack = true
			}
		}
		if len(entries) < n {
			w.slots.release(n - len(entries))
		}
		if len(entries) > 0 {
			// Start this batch while the next read goes out: the reader is
			// bound by round trips, not by work.
			w.readers.Go(func() { wq.start(context.WithoutCancel(ctx), entries, n) })
		}
	}
}

// fetch claims up to n entries: exactly, in priority order, with read.lua
// when the queue is busy or a reclaim pass is due; otherwise with one
// blocking XREADGROUP over the bands, which wakes as soon as a task arrives.
func (wq *workerQueue) fetch(ctx context.Context, n int) ([]taskscript.Entry, error) {
	w, c, k := wq.w, wq.w.c.redis, wq.q.keys
	reclaimDue := time.Since(wq.lastReclaim) >= wq.reclaimEvery
	if wq.busy && !reclaimDue && wq.planned && wq.hot >= 0 {
		// Still busy from one band: read the bands from 9 down to it in one
		// plain XREADGROUP (a higher band that filled meanwhile is read
		// first; anything beyond n is given back by the caller).
		entries, err := wq.readBands(ctx, n, 0, wq.hot)
		if err != nil || len(entries) < n {
			wq.hot = -1 // next time, plan from the counts
		}
		return entries, err
	}
	if wq.busy && !reclaimDue && wq.planned {
		paused, entries, err := taskscript.ReadPlanned(ctx, c, k, w.group, w.cfg.ID, n)
		if err != nil {
			wq.planned = false // the script path recreates a missing group
			return entries, err
		}
		if paused {
			return nil, wq.waitResume(ctx)
		}
		wq.busy = len(entries) > 0
		wq.hot = -1
		if len(entries) == n && entries[0].Band == entries[len(entries)-1].Band {
			wq.hot = entries[0].Band
		}
		return entries, nil
	}
	if wq.busy || reclaimDue {
		req := taskscript.ReadRequest{Group: w.group, Consumer: w.cfg.ID, Credit: n, Cursors: wq.cursors, EnsureGroups: !wq.planned}
		if reclaimDue {
			req.ReclaimIdle = w.cfg.VisibilityTimeout
		}
		res, err := taskscript.Read(ctx, c, k, req)
		if err != nil {
			return nil, err
		}
		wq.cursors = res.Cursors
		if reclaimDue {
			wq.lastReclaim = time.Now()
			if o := w.c.cfg.Observer; o != nil {
				wq.reportReclaims(o, res.Entries)
			}
		}
		if res.Paused {
			wq.busy = true
			return nil, wq.waitResume(ctx)
		}
		wq.planned = true // the groups exist: plain reads work
		wq.busy = len(res.Entries) > 0
		return res.Entries, nil
	}
	wait := max(wq.reclaimEvery-time.Since(wq.lastReclaim), time.Millisecond)
	entries, err := wq.readBands(ctx, n, wait, 0)
	if err != nil || !wq.planned { // a missing group: the script's turn
		return nil, err
	}
	wq.busy = len(entries) > 0
	return entries, nil
}

// readBands claims up to n new entries (per band) with one plain
// XREADGROUP over bands 9 down to low; with block > 0 it waits up to that
// long for the first. A missing group makes the next read use the script.
func (wq *workerQueue) readBands(ctx context.Context, n int, block time.Duration, low int) ([]taskscript.Entry, error) {
	w, c, k := wq.w, wq.w.c.redis, wq.q.keys
	bandKeys := taskscript.BandKeys(k)[:keys.Bands-low]
	ids := make([]string, len(bandKeys))
	for i := range ids {
		ids[i] = ">"
	}
	b := c.B().Xreadgroup().Group(w.group, w.cfg.ID).Count(int64(n))
	var cmd rueidis.Completed
	if block > 0 {
		cmd = b.Block(block.Milliseconds()).Streams().Key(bandKeys...).Id(ids...).Build()
	} else {
		cmd = b.Streams().Key(bandKeys...).Id(ids...).Build()
	}
	streams, err := c.Do(ctx, cmd).AsXRead()
	if rueidis.IsRedisNil(err) {
		return nil, nil
	}
	if err != nil {
		wq.busy, wq.planned = true, false // the script recreates a missing group
		if isNoGroup(err) {
			return nil, nil
		}
		return nil, err
	}
	entries, bad := taskscript.ParseBlockingRead(k, streams)
	for _, b := range bad { // not task entries: drop them
		c.Do(ctx, c.B().Xack().Key(k.Band(b.Band)).Group(w.group).Id(b.EntryID).Build())
		c.Do(ctx, c.B().Xdel().Key(k.Band(b.Band)).Id(b.EntryID).Build())
	}
	return entries, nil
}

// waitResume blocks until the queue may have been resumed (or a second).
func (wq *workerQueue) waitResume(ctx context.Context) error {
	c := wq.w.c.redis
	cmd := c.B().Xread().Count(1).Block(1000).Streams().Key(wq.q.keys.Wakeup()).Id("$").Build()
	err := c.Do(ctx, cmd).Error()
	if rueidis.IsRedisNil(err) {
		return nil
	}
	return err
}

// start runs start.lua for claimed entries and launches the started tasks;
// slots is how many slots the caller holds for them.
func (wq *workerQueue) start(ctx context.Context, entries []taskscript.Entry, slots int) {
	w := wq.w
	cfg := taskscript.StartConfig{Group: w.group, Worker: w.cfg.ID, MaxCrashes: w.cfg.MaxCrashes, DLQMaxLen: w.c.cfg.DeadLetterMaxLen,
		Retention: w.c.cfg.Retention, Durability: w.c.durability()}
	started, err := taskscript.Start(ctx, w.c.redis, wq.q.keys, cfg, entries)
	var nre *taskscript.NotReplicatedError
	if errors.As(err, &nre) {
		// Started on the master, not (yet) on enough replicas: run them;
		// a failover before replication would run these tasks again.
		w.log.Warn("task starts not acknowledged by enough replicas", "queue", wq.q.name, "tasks", len(entries), "error", err)
		w.c.redisError("start", err)
		err = nil
	}
	if err != nil {
		// The entries stay claimed; reclaim passes hand them on after the
		// visibility timeout.
		w.c.redisError("start", err)
		w.log.Warn("starting tasks failed", "queue", wq.q.name, "error", err)
		w.slots.release(min(slots, len(entries)))
		wq.busy = true
		return
	}
	launched := 0
	var events []string
	obs := w.c.cfg.Observer
	for i, s := range started {
		e := entries[i]
		switch s.Code {
		case taskscript.Died:
			w.log.Warn("task dead: its workers were lost more than MaxCrashes times",
				logTaskID, e.TaskID, logQueue, wq.q.name, logTaskType, s.Type)
			if obs != nil {
				obs.TaskEnded(wq.q.name, s.Type, OutcomeDead)
			}
		case taskscript.Withdrawn:
			w.log.Info("task cancelled while its worker was lost; it is not started again",
				logTaskID, e.TaskID, logQueue, wq.q.name, logTaskType, s.Type)
			if obs != nil {
				obs.TaskEnded(wq.q.name, s.Type, OutcomeCancelled)
			}
		}
		if s.Code != taskscript.Began || e.GiveBack {
			continue
		}
		t := &Task{
			ID: e.TaskID, Queue: wq.q.name, Type: s.Type, Payload: s.Payload, Priority: s.Priority,
			Status: StatusRunning, Attempt: s.Attempt, MaxAttempts: s.MaxAttempts, Crashes: s.Crashes,
			Timeout: s.Timeout, CreatedAt: time.UnixMilli(s.Created).UTC(), Worker: w.cfg.ID,
			run: s.Run, band: e.Band, entry: e.EntryID, idem: s.IdemHash, started: s.Started,
		}
		events = append(events, eventLine(t, StatusRunning, ""))
		if obs != nil {
			obs.TaskStarted(wq.q.name, t.Type, pickup(e.EntryID, s.Started))
		}
		w.launch(wq, t)
		launched++
	}
	w.c.publish(wq.q.keys.Events(), events)
	w.slots.release(min(slots, len(entries)) - launched)
}

// reportReclaims reports the entries of a read that were taken over from
// lost workers.
func (wq *workerQueue) reportReclaims(o Observer, entries []taskscript.Entry) {
	n := 0
	for _, e := range entries {
		if e.Reclaimed {
			n++
		}
	}
	if n > 0 {
		o.TasksReclaimed(wq.q.name, n)
	}
}

func isNoGroup(err error) bool {
	rerr, ok := rueidis.IsRedisErr(err)
	return ok && len(rerr.Error()) >= 7 && rerr.Error()[:7] == "NOGROUP"
}

// schedule runs the queue's scheduler until ctx ends.
func (wq *workerQueue) schedule(ctx context.Context) {
	s := &scheduler.Scheduler{
		Redis: wq.w.c.redis, Keys: wq.q.keys, Owner: wq.w.cfg.ID, Retention: wq.w.c.cfg.Retention,
		Log: wq.w.log.With("component", "scheduler", "queue", wq.q.name),
	}
	s.Run(ctx)
}
