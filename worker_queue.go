package dtq

import (
	"context"
	"errors"
	"time"

	"github.com/dtq-dev/dtq/internal/batch"
	"github.com/dtq-dev/dtq/internal/claim"
	"github.com/dtq-dev/dtq/internal/scheduler"
	"github.com/dtq-dev/dtq/internal/store"
)

// finishReq is one outcome queued for recording.
type finishReq struct {
	task *Task
	item store.FinishItem
}

// workerQueue is a worker's state for one of its queues: its claimer
// (internal/claim.Reader: slots, reads, limits, claiming ahead) and the
// batcher of its outcomes.
type workerQueue struct {
	w        *Worker
	q        *queueState
	reader   *claim.Reader
	finishes *batch.Batcher[finishReq, string]
}

// newQueue returns the worker's state for q, with share slots for its
// handlers (and as many more to claim ahead, internal/claim).
func (w *Worker) newQueue(q *queueState, share int) *workerQueue {
	wq := &workerQueue{w: w, q: q}
	c := w.c.newClaimer(q, w.cfg.VisibilityTimeout, w.cfg.MaxCrashes, nil)
	wq.reader = claim.NewReader(c, claim.ReaderConfig{Consumer: w.cfg.ID, Visibility: w.cfg.VisibilityTimeout, Share: share,
		Replicated: w.c.cfg.DurableReplicas > 0, Held: w.holds, Launch: wq.launch})
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

// holds reports whether a run of w holds task id.
func (w *Worker) holds(id string) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	_, held := w.running[id]
	return held
}

// launch runs the tasks of claims (the reader's hand-over), claimed by a
// read that went out at claimed.
func (wq *workerQueue) launch(claims []claim.Claim, claimed time.Time) {
	w := wq.w
	obs := w.c.obs
	for i := range claims {
		c := &claims[i]
		t := startedTask(c, w.cfg.ID)
		t.scopes, t.leased, t.claimed = c.Entry.Scopes, c.Leased, claimed
		t.born = c.Entry.BornSpec()
		if obs.on() {
			obs.started(TaskRef{ID: t.ID, Queue: wq.q.name, Type: t.Type}, pickup(c.Entry.EntryID, c.Started.Started))
		}
		w.launch(wq, t, c.Limit != "")
	}
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
