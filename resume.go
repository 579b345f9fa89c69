package dtq

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/dtq-dev/dtq/internal/backoff"
	"github.com/dtq-dev/dtq/internal/store"
)

// A claim or a start whose answer is lost — the connection failed with the
// call in flight, Redis killed after it wrote the call but before its
// reply — may have happened. Left alone, its tasks would stay claimed,
// unrenewed, and be taken over a visibility timeout later as from a lost
// worker: a crash recorded (counted toward MaxCrashes) for a run whose
// handler never started, and the task late by that timeout. So Go workers
// (worker_resume.go) and lease calls (lease_resume.go) find them again
// (CONTRACT 3.3.1b): a start is asked again as resumed (askAgain); a claim
// is found among the entries pending for its consumer. No run is recorded
// as crashed unless a handler could have started.

// askAgain sends again, through start, a start of entries of queue that
// failed with err, the entries marked resumed (store.Entry.Resumed: a run
// of the caller's the task holds goes on, else the entry starts as
// claimed), waiting at most maxWait between tries, until Redis answers or
// wait ends; then it returns nil and the last error.
func askAgain(wait context.Context, log *slog.Logger, c *engine, queue string, entries []store.Entry, maxWait time.Duration,
	err error, start func() ([]store.Started, error)) ([]store.Started, error) {
	for i := range entries {
		entries[i].Resumed = true
	}
	retry := backoff.Backoff{Max: maxWait}
	for {
		c.redisError("start", err)
		log.Warn("starting tasks failed; asking again", logQueue, queue, "tasks", len(entries), "error", err)
		if retry.Sleep(wait) != nil {
			return nil, err
		}
		started, serr := start()
		var nre *store.NotReplicatedError
		if serr == nil || errors.As(serr, &nre) {
			return started, serr
		}
		err = serr
	}
}
