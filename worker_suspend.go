package dtq

import (
	"errors"
	"time"

	"github.com/dtq-dev/dtq/internal/backoff"
	"github.com/dtq-dev/dtq/internal/store"
	"github.com/dtq-dev/dtq/internal/taskid"
)

// suspend ends an execution that suspended (Sleep, WaitFor): the task
// waits SCHEDULED (suspend.lua), retried as finish is while Redis cannot
// be reached. It returns the status recorded ("" for none) and the item
// recorded: one whose cancellation was requested meanwhile is recorded
// CANCELLED instead (finish), as any run's.
func (w *Worker) suspend(ex *execution, item store.FinishItem) (string, store.FinishItem) {
	t, s := ex.task, ex.steps.suspended()
	_, ulid, err := taskid.Parse(t.ID)
	if err != nil {
		return "", item
	}
	f := store.Fence{Run: t.run, Band: t.band, EntryID: t.entry, Worker: w.cfg.ID, Started: t.started}
	ctx := w.recordBase
	retry := backoff.Backoff{Max: min(backoff.DefaultMax, w.cfg.VisibilityTimeout/4)}
	for {
		code, due, err := ex.queue.q.store.Suspend(ctx, w.c.durability(), ulid, f, s.kind, s.name, time.Until(s.until))
		var nre *store.NotReplicatedError
		if errors.As(err, &nre) && code != store.SuspendStale {
			// Written on the master, not (yet) on enough replicas; asked
			// again it would find the run ended: it stands as written.
			ex.logger(w.log).Warn("task suspension not acknowledged by enough replicas", logTaskID, t.ID, "error", err)
			err = nil
		}
		if err == nil {
			switch code {
			case store.Suspended:
				ex.logger(w.log).Debug("task suspended", logTaskID, t.ID, logQueue, t.Queue, logTaskType, t.Type,
					"for", s.kind, "name", s.name, "until", msTime(due))
				w.c.publish(ex.queue.q.store.Keys().Events(), []string{suspendLine(t, s, due)})
				return string(StatusScheduled), item
			case store.SuspendCancelled:
				ex.steps.resume()
				item.Outcome, item.Text = store.OutcomeCancel, "cancelled"
				return w.finish(ex, item), item
			}
			ex.logger(w.log).Info("task outcome rejected: another execution owns it now",
				logTaskID, t.ID, logQueue, t.Queue, logTaskType, t.Type)
			return "", item
		}
		w.c.redisError("suspend", err)
		if w.waitRetry(ctx, &retry) != nil {
			ex.logger(w.log).Warn("suspending the task failed until the end of the stop's grace period; it will run again",
				logTaskID, t.ID, logQueue, t.Queue, logTaskType, t.Type, "error", err)
			return "", item
		}
	}
}
