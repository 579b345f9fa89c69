package claim

import (
	"context"
	"time"

	"github.com/dtq-dev/dtq/internal/store"
)

// recoverClaims starts the entries pending for the worker in the queue
// that none of its runs holds: claims whose answer was lost (claimer.go).
// The starts in flight end first (what they hold is theirs).
func (r *Reader) recoverClaims(ctx context.Context) error {
	r.starting.Wait()
	pending, err := r.q.Claimed(ctx, r.rc.Consumer, 2*r.Slots.Total()+MaxFetch)
	if err != nil {
		return err
	}
	var lost []store.Entry
	for _, e := range pending {
		if !r.rc.Held(e.TaskID) {
			lost = append(lost, e)
		}
	}
	if len(lost) == 0 {
		return nil
	}
	n := r.Slots.grab(len(lost))
	for i := n; i < len(lost); i++ {
		lost[i].GiveBack = true // no slot for it: back to its band
	}
	mode, granted := store.Unlimited, n
	if r.Limits.Limited() && n > 0 {
		// Claimed under the limit already: held whatever its room.
		got, m, _, err := r.grant(ctx, "hold", n)
		if err != nil {
			r.Slots.Release(n)
			return err
		}
		mode, granted = m, got
	}
	r.log.Info("claims whose answer was lost found again; starting them", "queue", r.cfg.Queue, "tasks", len(lost))
	// When they were claimed is unknown (before the failed call): taken as
	// a visibility timeout ago, so that each is renewed, fenced, before its
	// handler runs — and not run if another worker took it over meanwhile.
	claimed := time.Now().Add(-r.rc.Visibility)
	r.starting.Go(func() {
		r.start(context.WithoutCancel(ctx), ctx, lost, nil, claimed, n, mode, granted)
	})
	return nil
}

// recoverOnStopWithin bounds the recovery of a read a stop cancelled.
const recoverOnStopWithin = 2 * time.Second
