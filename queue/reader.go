package queue

import (
	"container/heap"
	"context"
	"time"

	"github.com/dtq-dev/dtq/internal/backoff"
	"github.com/dtq-dev/dtq/internal/delivery"
	"github.com/dtq-dev/dtq/internal/queuestore"
)

// maxBlock bounds one blocking wait for new messages.
const maxBlock = 5 * time.Second

// reader is the state of a subscription's one reader goroutine.
type reader struct {
	s         *Subscription
	reclaim   *delivery.Reclaim // pacing and cursors (one per topic); forced by a hand-back or delay
	useScript bool              // the next fetch must run fetch.lua
	dueAt     time.Time         // the next delayed message is due (zero: none known)
	// lastDirectEmpty: the last plain XREADGROUP found no new entry, so an
	// empty script fetch means there is nothing to claim at all.
	lastDirectEmpty bool
	retry           backoff.Backoff
}

// read is the subscription's one reader. It claims up to the free credit
// (MaxInFlight minus what the subscription holds):
//
//   - with fetch.lua, which claims in priority order across topics, promotes
//     due delayed messages, runs the reclaim pass, recreates a missing group
//     and dead-letters malformed entries;
//   - except that a single-topic subscription always reads new entries with a
//     plain XREADGROUP, which costs Redis a fraction of the same read inside a
//     script (stream entries are expensive to pass through Lua); the script
//     then only promotes, reclaims and says how to wait.
//
// When nothing is claimable it blocks in one XREAD over every topic stream
// and the queue's wake stream, until something new arrives, the next delayed
// message is due, or the next reclaim pass is due.
func (s *Subscription) read(ctx context.Context) {
	defer close(s.readerDone)
	r := &reader{
		s:         s,
		reclaim:   delivery.NewReclaim(s.visibility, len(s.topics)),
		useScript: true,
	}
	for {
		credit, ok := s.waitCredit(ctx)
		if !ok {
			return
		}
		var err error
		if r.scriptDue() {
			err = r.fetchScript(ctx, credit)
		} else {
			err = r.fetchDirect(ctx, credit)
		}
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			s.readerError("fetch", err)
			r.useScript = true
			if r.retry.Sleep(ctx) != nil {
				return
			}
			continue
		}
		r.retry.Reset()
	}
}

func (r *reader) scriptDue() bool {
	now := time.Now()
	return r.useScript || len(r.s.topics) > 1 || r.reclaim.Due(now) ||
		(!r.dueAt.IsZero() && !now.Before(r.dueAt))
}

// fetchScript claims with fetch.lua and, if nothing was claimable, waits.
func (r *reader) fetchScript(ctx context.Context, credit int) error {
	s := r.s
	reclaim := r.reclaim.Due(time.Now())
	req := queuestore.FetchRequest{
		Group:      s.group,
		Consumer:   s.consumer,
		Topics:     s.topics,
		Cursors:    r.reclaim.Cursors,
		Credit:     credit,
		DeadMaxLen: s.q.cfg.DeadLetterMaxLen,
		PromoteMax: promoteMax,
		SkipNew:    len(s.topics) == 1,
	}
	if reclaim {
		req.ReclaimIdle = s.visibility
		s.setReclaiming(true)
	}
	res, err := queuestore.Fetch(ctx, s.q.client, s.q.keys, req)
	if err != nil {
		if reclaim {
			s.setReclaiming(false)
		}
		return err
	}
	r.useScript = false
	r.reclaim.Cursors = res.Cursors
	if reclaim {
		r.reclaim.Began(time.Now())
	}
	r.dueAt = time.Time{}
	if res.NextDue >= 0 {
		r.dueAt = time.Now().Add(res.NextDue)
	}
	if len(res.Entries) > 0 {
		s.deliver(res.Entries)
		return nil
	}
	if reclaim {
		s.setReclaiming(false)
	}
	if req.SkipNew && !r.lastDirectEmpty {
		return nil // read new entries directly before deciding to wait
	}
	timeout := min(maxBlock, r.reclaim.Wait(time.Now()))
	if res.NextDue >= 0 {
		timeout = min(timeout, res.NextDue)
	}
	if timeout < time.Millisecond {
		return nil
	}
	woke, err := s.q.waitForNew(ctx, s.topics, res.Wait, timeout)
	if err != nil {
		return err
	}
	if woke {
		r.reclaim.Force()
	}
	return nil
}

// fetchDirect claims new entries of the subscription's one topic with a
// plain XREADGROUP. When there are none, the next fetch runs the script,
// which knows how to wait.
func (r *reader) fetchDirect(ctx context.Context, credit int) error {
	s := r.s
	entries, missing, err := queuestore.ReadNew(ctx, s.q.client, s.group, s.consumer, s.q.keys.Stream(s.topics[0]), credit)
	if err != nil {
		return err
	}
	if missing {
		r.useScript = true // the script recreates the group
		return nil
	}
	r.lastDirectEmpty = len(entries) == 0
	if len(entries) == 0 {
		r.useScript = true // the script says how to wait
		return nil
	}
	fetched := make([]queuestore.Fetched, 0, len(entries))
	var malformed []queuestore.SettleItem
	for _, e := range entries {
		key, keyed := e.Fields["k"]
		kok := keyed
		if !keyed {
			key, kok = e.Fields["r"]
		}
		data, dok := e.Fields["d"]
		if !kok || !dok {
			malformed = append(malformed, queuestore.SettleItem{Op: queuestore.OpMalformed, Topic: s.topics[0], ID: e.ID, Fence: 1})
			continue
		}
		f := queuestore.Fetched{ID: e.ID, Fence: 1, Key: key, Data: []byte(data), Keyed: keyed}
		if n, ok := e.Fields["n"]; ok {
			f.Prior = parseCount(n)
		}
		fetched = append(fetched, f)
	}
	// Dead-letter malformed entries first: once the others are delivered,
	// a receiver may look at the dead letters.
	if len(malformed) > 0 {
		if _, err := queuestore.Settle(ctx, s.q.client, s.q.keys, s.settleCfg, malformed); err != nil {
			// Left pending: reclaimed and dead-lettered by a later reclaim
			// pass. The good entries are delivered all the same.
			s.q.log.Warn("dead-lettering malformed entries failed", attrError, err)
		}
	}
	if len(fetched) > 0 {
		s.deliver(fetched)
	}
	return nil
}

func parseCount(s string) int64 {
	var n int64
	for _, c := range []byte(s) {
		if c < '0' || c > '9' {
			return 0
		}
		n = n*10 + int64(c-'0')
	}
	return n
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
// stream of topics or the wake stream, or timeout passes. It reports whether the
// wake stream moved (messages were handed back or delayed).
func (q *Queue) waitForNew(ctx context.Context, topics []string, w *queuestore.Wait, timeout time.Duration) (bool, error) {
	wake := q.keys.Wake()
	ks := make([]string, 0, 1+len(topics))
	ks = append(ks, wake)
	for _, t := range topics {
		ks = append(ks, q.keys.Stream(t))
	}
	ids := append([]string{w.WakeID}, w.StreamIDs...)
	moved, err := queuestore.WaitNew(ctx, q.client, ks, ids, timeout)
	if err != nil {
		return false, err
	}
	return moved[wake], nil
}

// setReclaiming says whether a fetch with a reclaim pass is in flight.
func (s *Subscription) setReclaiming(on bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.reclaiming = on
	if !on {
		s.notify()
	}
}

// deliver adds fetched entries to the ready heap and the held set, and ends
// the reclaim pass in flight, if any.
//
// An entry the subscription already holds was reclaimed by its own reclaim
// pass: it held the entry past the visibility timeout without a renewal
// reaching Redis (the process paused, and the reader ran before the renewer
// when both were due). The entry never left this consumer, so the held
// message takes the new delivery's fence and stays valid; nothing is
// delivered twice. While a settlement that ends its holding is on its way
// (an ack, a nak, a hand-back) the reclaim waits on the message (parked):
// the settlement answered "not owner" came after the reclaim and is sent
// again under its fence (lose); one that went through came first — a
// hand-back makes the entry claimable at once — and the parked entry is
// its redelivery, delivered when the holding ends (dropLocked).
func (s *Subscription) deliver(entries []queuestore.Fetched) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.reclaiming = false
	var own map[entryRef]*Message
	for _, e := range entries {
		if e.Fence > 1 { // a reclaim: maybe of a message held here
			if own == nil {
				own = make(map[entryRef]*Message, len(s.held))
				for m := range s.held {
					own[entryRef{m.Topic, m.ID}] = m
				}
			}
			if m := own[entryRef{s.topics[e.Topic], e.ID}]; m != nil {
				if m.releasing.Load() {
					m.parked = &e
				} else {
					m.fence = e.Fence
				}
				continue
			}
		}
		s.addLocked(e)
	}
	s.notify()
}

// addLocked makes a fetched entry a held message, ready to be received.
// Called with s.mu held.
func (s *Subscription) addLocked(e queuestore.Fetched) {
	sid, _ := parseID(e.ID)
	m := &Message{
		Data:       e.Data,
		Key:        e.Key,
		Topic:      s.topics[e.Topic],
		ID:         e.ID,
		Deliveries: int(e.Prior + e.Fence),
		sid:        sid,
		keyed:      e.Keyed,
		h:          s,
		priority:   s.priority[e.Topic],
		seq:        s.seq,
		fence:      e.Fence,
		state:      stateReady,
	}
	s.seq++
	heap.Push(&s.ready, m)
	s.held[m] = struct{}{}
}

// entryRef names a stream entry of the subscription: topic and id.
type entryRef struct{ topic, id string }

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
