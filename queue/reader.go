package queue

import (
	"container/heap"
	"context"
	"time"

	"github.com/dtq-dev/dtq/internal/backoff"
	"github.com/dtq-dev/dtq/internal/scripts"
	"github.com/redis/rueidis"
)

// maxBlock bounds one blocking wait for new messages.
const maxBlock = 5 * time.Second

// read is the subscription's one reader: it claims up to the free credit
// (MaxInFlight minus what it holds) with fetch.lua, and when nothing is
// claimable it blocks in one XREAD over every topic stream and the queue's
// wake stream, until something new arrives, the next delayed message is
// due, or the next reclaim pass is due.
func (s *Subscription) read(ctx context.Context) {
	defer close(s.readerDone)
	reclaimEvery := min(max(s.visibility/4, 10*time.Millisecond), time.Second)
	cursors := make([]string, len(s.topics))
	for i := range cursors {
		cursors[i] = "0-0"
	}
	var lastReclaim time.Time
	forceReclaim := true
	var retry backoff.Backoff
	for {
		credit, ok := s.waitCredit(ctx)
		if !ok {
			return
		}
		reclaim := forceReclaim || time.Since(lastReclaim) >= reclaimEvery
		req := scripts.FetchRequest{
			Group:      s.group,
			Consumer:   s.consumer,
			Topics:     s.topics,
			Cursors:    cursors,
			Credit:     credit,
			DeadMaxLen: s.q.cfg.DeadLetterMaxLen,
			PromoteMax: promoteMax,
		}
		if reclaim {
			req.ReclaimIdle = s.visibility
		}
		res, err := scripts.Fetch(ctx, s.q.client, s.q.keys, req)
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			s.readerError("fetch", err)
			if retry.Sleep(ctx) != nil {
				return
			}
			continue
		}
		retry.Reset()
		cursors = res.Cursors
		if reclaim {
			lastReclaim, forceReclaim = time.Now(), false
		}
		if len(res.Entries) > 0 {
			s.deliver(res.Entries)
			continue
		}
		timeout := min(maxBlock, reclaimEvery-time.Since(lastReclaim))
		if res.Wait.NextDue >= 0 {
			timeout = min(timeout, res.Wait.NextDue)
		}
		if timeout < time.Millisecond {
			continue
		}
		woke, err := s.waitForNew(ctx, res.Wait, timeout)
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			s.readerError("wait", err)
			if retry.Sleep(ctx) != nil {
				return
			}
			continue
		}
		forceReclaim = forceReclaim || woke
	}
}

// waitCredit blocks until the subscription may hold more messages and
// returns how many, or false when it should stop fetching.
func (s *Subscription) waitCredit(ctx context.Context) (int, bool) {
	for {
		s.mu.Lock()
		if !s.fetching {
			s.mu.Unlock()
			return 0, false
		}
		credit, changed := s.maxInFlight-len(s.held), s.changed
		s.mu.Unlock()
		if credit > 0 {
			return credit, true
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return 0, false
		}
	}
}

// waitForNew blocks in XREAD until an entry newer than w's ids arrives in a
// topic stream or the wake stream, or timeout passes. It reports whether the
// wake stream moved (messages were handed back or delayed).
func (s *Subscription) waitForNew(ctx context.Context, w *scripts.Wait, timeout time.Duration) (bool, error) {
	wake := s.q.keys.Wake()
	ks := make([]string, 0, 1+len(s.topics))
	ks = append(ks, wake)
	for _, t := range s.topics {
		ks = append(ks, s.q.keys.Stream(t))
	}
	ids := append([]string{w.WakeID}, w.StreamIDs...)
	c := s.q.client
	cmd := c.B().Xread().Count(1).Block(timeout.Milliseconds()).Streams().Key(ks...).Id(ids...).Build()
	res, err := c.Do(ctx, cmd).AsXRead()
	if rueidis.IsRedisNil(err) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	_, woke := res[wake]
	return woke, nil
}

// deliver adds fetched entries to the ready heap and the held set.
func (s *Subscription) deliver(entries []scripts.Fetched) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, e := range entries {
		m := &Message{
			Data:       e.Data,
			Key:        e.Key,
			Topic:      s.topics[e.Topic],
			ID:         e.ID,
			Deliveries: int(e.Prior + e.Fence),
			sub:        s,
			priority:   s.priority[e.Topic],
			seq:        s.seq,
			fence:      e.Fence,
			state:      stateReady,
		}
		s.seq++
		heap.Push(&s.ready, m)
		s.held[m] = struct{}{}
	}
	s.notify()
}

// readerError logs err and, unless it is one that retrying fixes, keeps it
// for the next Receive to report.
func (s *Subscription) readerError(op string, err error) {
	s.q.log.Warn("subscription "+op+" failed; retrying", attrError, err)
	if transient(err) {
		return
	}
	s.mu.Lock()
	s.err = err
	s.notify()
	s.mu.Unlock()
}
