package queue

import (
	"context"
	"sync"

	"github.com/dtq-dev/dtq/internal/queuestore"
)

// ackRequest is one ack queued in a subscription's ack batcher.
type ackRequest struct {
	topic string
	item  queuestore.AckItem
}

// ack acknowledges m's delivery fence through the subscription's ack
// batcher.
func (s *Subscription) ack(ctx context.Context, m *Message, fence int64) (queuestore.SettleResult, error) {
	ok, err := s.acks.Do(ctx, ackRequest{topic: m.Topic, item: m.ackItem(fence)})
	if err != nil {
		return queuestore.SettleResult{}, err
	}
	if !ok {
		return queuestore.SettleResult{Status: queuestore.NotOwner}, nil
	}
	return queuestore.SettleResult{Status: queuestore.Done}, nil
}

// ackItem is m's ack for ack.lua: its delivery (fence), and its key when
// that is in the dedup index.
func (m *Message) ackItem(fence int64) queuestore.AckItem {
	it := queuestore.AckItem{ID: m.ID, Fence: fence}
	if m.keyed {
		it.Key = m.Key
	}
	return it
}

// runAcks runs one ack.lua call per topic of the batch, concurrently.
func (s *Subscription) runAcks(ctx context.Context, reqs []ackRequest) ([]bool, error) {
	type group struct {
		items []queuestore.AckItem
		index []int
	}
	groups := map[string]*group{}
	var order []string
	for i, r := range reqs {
		g := groups[r.topic]
		if g == nil {
			g = &group{}
			groups[r.topic] = g
			order = append(order, r.topic)
		}
		g.items = append(g.items, r.item)
		g.index = append(g.index, i)
	}
	out := make([]bool, len(reqs))
	run := func(topic string) error {
		g := groups[topic]
		res, err := queuestore.Ack(ctx, s.q.client, s.q.keys, s.settleCfg, topic, g.items, s.fenceRange(topic, g.items))
		if err != nil {
			return err
		}
		for k, i := range g.index {
			out[i] = res[k]
		}
		return nil
	}
	if len(order) == 1 {
		return out, run(order[0])
	}
	errs := make([]error, len(order))
	var wg sync.WaitGroup
	for i, topic := range order {
		wg.Go(func() { errs[i] = run(topic) })
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// fenceRange decides whether acks of topic are fenced by one XPENDING over
// their id range: it pays when the subscription holds at most three times as
// many entries of the topic in that range as there are acks (reading the
// range costs Redis about a third of one XPENDING per ack).
func (s *Subscription) fenceRange(topic string, items []queuestore.AckItem) *queuestore.FenceRange {
	if len(items) < 2 {
		return nil
	}
	var first, last streamID
	var r queuestore.FenceRange
	for i, it := range items {
		id, ok := parseID(it.ID)
		if !ok {
			return nil
		}
		if i == 0 || id.less(first) {
			first, r.First = id, it.ID
		}
		if i == 0 || last.less(id) {
			last, r.Last = id, it.ID
		}
	}
	s.mu.Lock()
	held := 0
	for m := range s.held {
		if m.Topic == topic && !m.sid.less(first) && !last.less(m.sid) {
			held++
		}
	}
	s.mu.Unlock()
	if held > 3*len(items) {
		return nil
	}
	r.Count = max(held, len(items))
	return &r
}
