package queue

import (
	"context"
	"slices"
	"time"

	"github.com/dtq-dev/dtq/internal/queuestore"
)

// renew keeps every message the subscription holds (ready or received)
// visible only to it, every VisibilityTimeout/4. Renewal is fenced: a
// message another subscription reclaimed is marked lost, never taken back.
// When parent ends, it closes the subscription.
func (s *Subscription) renew(ctx, parent context.Context) {
	defer close(s.renewerDone)
	t := time.NewTicker(s.visibility / 4)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-parent.Done():
			go s.Close(context.WithoutCancel(parent))
			return
		case <-t.C:
			s.renewHeld(ctx)
		}
	}
}

func (s *Subscription) renewHeld(ctx context.Context) {
	all := func(*Message) bool { return true }
	for chunk := range slices.Chunk(s.heldFenced(all), batchMax) {
		items := make([]queuestore.SettleItem, len(chunk))
		for i, f := range chunk {
			items[i] = queuestore.SettleItem{Op: queuestore.OpExtend, Topic: f.m.Topic, ID: f.m.ID, Fence: f.fence}
		}
		cctx, cancel := context.WithTimeout(ctx, callTimeout)
		res, err := queuestore.Settle(cctx, s.q.client, s.q.keys, s.settleCfg, items)
		cancel()
		if err != nil {
			if ctx.Err() == nil {
				s.q.log.Warn("could not renew message visibility; retrying next tick", attrError, err)
			}
			return
		}
		for i, f := range chunk {
			if res[i].Status == queuestore.NotOwner {
				s.lose(f.m, f.fence) // unless our own reclaim pass took it over
			}
		}
	}
}
