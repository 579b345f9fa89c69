package queue

import (
	"cmp"
	"container/heap"
	"context"
	"crypto/rand"
	"fmt"
	"os"
	"slices"
	"sync"
	"time"

	"github.com/dtq-dev/dtq/internal/batch"
	"github.com/dtq-dev/dtq/internal/delivery"
	"github.com/dtq-dev/dtq/internal/keys"
	"github.com/dtq-dev/dtq/internal/queuestore"
)

// SubscribeOpts are the options of Queue.Subscribe. A nil *SubscribeOpts
// means all defaults.
type SubscribeOpts struct {
	// VisibilityTimeout is how long a message held by a subscription that
	// stopped renewing it (a crash, a lost connection) stays invisible
	// before another subscription reclaims it. The subscription renews
	// every held message every VisibilityTimeout/4, and reclaims others'
	// abandoned messages idle for at least VisibilityTimeout. Subscriptions
	// of one group should use the same value. Defaults to 30s.
	VisibilityTimeout time.Duration

	// MaxInFlight bounds the messages the subscription holds at once:
	// fetched but not yet received, plus received but not yet settled.
	// Defaults to 16.
	MaxInFlight int

	// Group names the consumer group: subscriptions in one group compete
	// for messages, each delivered to one of them. Defaults to "dtq".
	Group string
}

// Subscription receives messages from some topics of a queue, competing with
// every other subscription of its group. It uses a constant number of
// goroutines and one multi-topic reader whatever the number of topics.
// Build it with Queue.Subscribe; stop it with Close or Drain.
type Subscription struct {
	q           *Queue
	topics      []string // priority order: lowest number first, then name
	priority    []int    // per topic index
	group       string
	consumer    string
	visibility  time.Duration
	maxInFlight int
	settleCfg   queuestore.SettleConfig
	settles     *batch.Batcher[queuestore.SettleItem, queuestore.SettleResult]
	acks        *batch.Batcher[ackRequest, bool]

	mu       sync.Mutex
	ready    readyHeap             // fetched, renewed, not handed out
	held     map[*Message]struct{} // every unsettled message: ready or received
	seq      uint64
	changed  chan struct{} // closed and replaced when ready, held or closed change
	closed   bool
	fetching bool  // false once Drain or Close began
	err      error // a reader error not yet reported by Receive
	// reclaiming: a fetch with a reclaim pass is in flight. It may claim a
	// message the subscription holds (see deliver), raising that message's
	// fence, which a settlement answered "not owner" meanwhile must wait for.
	reclaiming bool

	stopReader  context.CancelFunc
	stopRenewer context.CancelFunc
	readerDone  chan struct{}
	renewerDone chan struct{}
	closeMu     sync.Mutex // serialises Close
}

// Subscribe starts a subscription to topics, a map from topic name to
// priority: among messages ready at once, a lower number is delivered
// first; each topic is FIFO. The subscription runs until Close, Drain, or
// the end of ctx (which hands its messages back as Close does).
//
// Subscribe does no I/O; Redis errors surface from Receive.
func (q *Queue) Subscribe(ctx context.Context, topics map[string]int, opts *SubscribeOpts) (*Subscription, error) {
	var o SubscribeOpts
	if opts != nil {
		o = *opts
	}
	names, priority, err := orderTopics(topics)
	if err != nil {
		return nil, err
	}
	if o.VisibilityTimeout, err = checkVisibility("SubscribeOpts.VisibilityTimeout", o.VisibilityTimeout); err != nil {
		return nil, err
	}
	switch {
	case o.MaxInFlight < 0:
		return nil, invalid("SubscribeOpts.MaxInFlight", "must not be negative (got %d)", o.MaxInFlight)
	case o.MaxInFlight == 0:
		o.MaxInFlight = 16
	}
	if o.Group, err = checkGroup("SubscribeOpts.Group", o.Group); err != nil {
		return nil, err
	}

	s := &Subscription{
		q:           q,
		group:       o.Group,
		consumer:    consumerName(),
		visibility:  o.VisibilityTimeout,
		maxInFlight: o.MaxInFlight,
		held:        map[*Message]struct{}{},
		changed:     make(chan struct{}),
		fetching:    true,
	}
	s.topics, s.priority = names, priority
	s.settleCfg = queuestore.SettleConfig{
		Group:        s.group,
		Consumer:     s.consumer,
		TombstoneTTL: q.cfg.AckTombstoneTTL,
		WaiterTTL:    waiterTTL,
		DeadMaxLen:   q.cfg.DeadLetterMaxLen,
		RoomCap:      roomCap,
	}
	s.settles = batch.New(s.runSettles, batchMax, settleLeads, callTimeout)
	s.acks = batch.New(s.runAcks, batchMax, hotLeads, callTimeout)

	base := context.WithoutCancel(ctx)
	readCtx, stopReader := context.WithCancel(base)
	renewCtx, stopRenewer := context.WithCancel(base)
	s.stopReader, s.stopRenewer = stopReader, stopRenewer
	s.readerDone, s.renewerDone = make(chan struct{}), make(chan struct{})
	go s.read(readCtx)
	go s.renew(renewCtx, ctx)
	return s, nil
}

// orderTopics checks topics (name → priority) and returns their names in
// priority order (lowest number first, then name) with their priorities.
func orderTopics(topics map[string]int) ([]string, []int, error) {
	if len(topics) == 0 {
		return nil, nil, invalid("topics", "must name at least one topic")
	}
	names := make([]string, 0, len(topics))
	for t := range topics {
		if err := keys.CheckName("topic", t); err != nil {
			return nil, nil, invalid("topics", "%v", err)
		}
		names = append(names, t)
	}
	slices.SortFunc(names, func(a, b string) int {
		return cmp.Or(cmp.Compare(topics[a], topics[b]), cmp.Compare(a, b))
	})
	priority := make([]int, len(names))
	for i, t := range names {
		priority[i] = topics[t]
	}
	return names, priority, nil
}

// checkVisibility checks the visibility timeout d of field: 0 for the
// default (30 s), else at least delivery.MinVisibility.
func checkVisibility(field string, d time.Duration) (time.Duration, error) {
	switch {
	case d < 0:
		return 0, invalid(field, "must be positive (got %v)", d)
	case d == 0:
		return 30 * time.Second, nil
	case d < delivery.MinVisibility:
		return 0, invalid(field, "must be at least %v (got %v)", delivery.MinVisibility, d)
	}
	return d, nil
}

// checkGroup checks the consumer group name g of field ("" for "dtq").
func checkGroup(field, g string) (string, error) {
	if g == "" {
		return "dtq", nil
	}
	if err := keys.CheckName("group", g); err != nil {
		return "", invalid(field, "%v", err)
	}
	return g, nil
}

// consumerName names a subscription in its consumer group: host, pid and a
// random suffix, so that operators can tell who holds what.
func consumerName() string {
	host, _ := os.Hostname()
	return fmt.Sprintf("%s-%d-%s", host, os.Getpid(), rand.Text()[:10])
}

func (s *Subscription) queue() *Queue { return s.q }

func (s *Subscription) state(m *Message) msgState {
	s.mu.Lock()
	defer s.mu.Unlock()
	return m.state
}

func (s *Subscription) fence(m *Message) int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return m.fence
}

// lose drops m as lost after Redis answered "not owner" to a settlement
// fenced by fence, unless the subscription's own reclaim pass took m over
// (a newer fence, see deliver): then m is still held and lose returns
// false. It first waits for a reclaim pass in flight, which may be the one
// that took m over before that settlement ran.
func (s *Subscription) lose(m *Message, fence int64) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for s.reclaiming && m.fence == fence && m.parked == nil {
		changed := s.changed
		s.mu.Unlock()
		<-changed
		s.mu.Lock()
	}
	if p := m.parked; p != nil {
		// Our own reclaim pass took it before the settlement ran.
		m.fence, m.parked = p.Fence, nil
		return false
	}
	if m.fence != fence {
		return false
	}
	s.dropLocked(m, stateLost)
	return true
}

func (s *Subscription) run(ctx context.Context, m *Message, it queuestore.SettleItem) (queuestore.SettleResult, error) {
	if it.Op == opAck {
		return s.ack(ctx, m, it.Fence)
	}
	return s.settles.Do(ctx, it)
}

func (s *Subscription) runSettles(ctx context.Context, items []queuestore.SettleItem) ([]queuestore.SettleResult, error) {
	return queuestore.Settle(ctx, s.q.client, s.q.keys, s.settleCfg, items)
}

// Receive returns the next message, highest priority first, blocking until
// one is available, ctx ends, or the subscription is closed (ErrClosed).
// It also returns, once, a Redis error the subscription could not recover
// from by retrying (for example a topic key holding the wrong type); the
// subscription keeps retrying in the background.
func (s *Subscription) Receive(ctx context.Context) (*Message, error) {
	msgs, err := s.Fetch(ctx, 1)
	if err != nil {
		return nil, err
	}
	return msgs[0], nil
}

// Fetch returns between 1 and max messages, highest priority first, blocking
// until at least one is available, ctx ends, or the subscription is closed
// (ErrClosed).
func (s *Subscription) Fetch(ctx context.Context, max int) ([]*Message, error) {
	if max < 1 {
		return nil, invalid("max", "must be at least 1 (got %d)", max)
	}
	for {
		s.mu.Lock()
		if s.ready.Len() > 0 {
			n := min(max, s.ready.Len())
			out := make([]*Message, n)
			for i := range out {
				m := heap.Pop(&s.ready).(*Message)
				m.state = stateReceived
				out[i] = m
			}
			s.mu.Unlock()
			return out, nil
		}
		if s.closed || !s.fetching {
			s.mu.Unlock()
			return nil, ErrClosed
		}
		if err := s.err; err != nil {
			s.err = nil
			s.mu.Unlock()
			return nil, err
		}
		changed := s.changed
		s.mu.Unlock()
		select {
		case <-changed:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// Close stops the subscription at once: it stops fetching and makes every
// message it holds and has not settled — received or not — immediately
// claimable by other subscriptions (same entry, same place in its topic).
// A received message can still be settled afterwards if no one has claimed
// it in between. Close waits for the hand-back until ctx ends; messages not
// handed back by then are reclaimed after the visibility timeout. Closing a
// closed subscription does nothing.
func (s *Subscription) Close(ctx context.Context) error {
	s.closeMu.Lock()
	defer s.closeMu.Unlock()
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed, s.fetching = true, false
	s.notify()
	s.mu.Unlock()
	s.stopReader()
	s.stopRenewer()
	<-s.readerDone
	<-s.renewerDone
	return s.handBack(ctx, func(*Message) bool { return true })
}

// Drain stops fetching, hands back at once the messages fetched but not yet
// received, and waits until every received message is settled or ctx ends;
// then it closes the subscription as Close does.
func (s *Subscription) Drain(ctx context.Context) error {
	s.mu.Lock()
	s.fetching = false
	s.notify()
	s.mu.Unlock()
	s.stopReader()
	<-s.readerDone
	err := s.handBack(ctx, func(m *Message) bool { return m.state == stateReady })
	for err == nil {
		s.mu.Lock()
		n, changed := len(s.held), s.changed
		s.mu.Unlock()
		if n == 0 {
			break
		}
		select {
		case <-changed:
		case <-ctx.Done():
			err = ctx.Err()
		}
	}
	if cerr := s.Close(context.WithoutCancel(ctx)); err == nil {
		err = cerr
	}
	return err
}

// fenced is a held message and its fence when it was read.
type fenced struct {
	m     *Message
	fence int64
}

// heldFenced returns the held messages matching pick with their fences.
func (s *Subscription) heldFenced(pick func(*Message) bool) []fenced {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]fenced, 0, len(s.held))
	for m := range s.held {
		if pick(m) {
			out = append(out, fenced{m, m.fence})
		}
	}
	return out
}

// handBack makes the held messages matching pick claimable by anyone now.
func (s *Subscription) handBack(ctx context.Context, pick func(*Message) bool) error {
	var firstErr error
	for chunk := range slices.Chunk(s.heldFenced(pick), batchMax) {
		items := make([]queuestore.SettleItem, len(chunk))
		for i, f := range chunk {
			f.m.releasing.Store(true)
			items[i] = queuestore.SettleItem{Op: queuestore.OpHandBack, Topic: f.m.Topic, ID: f.m.ID, Fence: f.fence}
		}
		res, err := queuestore.Settle(ctx, s.q.client, s.q.keys, s.settleCfg, items)
		for i, f := range chunk {
			switch {
			case err != nil:
				s.drop(f.m, stateAbandoned)
			case res[i].Status == queuestore.NotOwner:
				s.lose(f.m, f.fence)
			default:
				// Handed back: no longer held, but a received message may
				// still be settled if no one claims it first.
				s.drop(f.m, stateAbandoned)
			}
		}
		if err != nil && firstErr == nil {
			firstErr = fmt.Errorf("queue: hand back %d messages: %w", len(chunk), err)
		}
	}
	return firstErr
}

// drop stops holding m (no more renewal, credit back to the reader) and sets
// its final state, unless it is already settled or lost.
func (s *Subscription) drop(m *Message, to msgState) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.dropLocked(m, to)
}

// dropLocked is drop, called with s.mu held.
func (s *Subscription) dropLocked(m *Message, to msgState) {
	if m.state == stateSettled || m.state == stateLost {
		return
	}
	if m.state == stateReady && m.index >= 0 {
		heap.Remove(&s.ready, m.index)
	}
	m.state = to
	delete(s.held, m)
	if p := m.parked; p != nil {
		// Reclaimed by our own reclaim pass once its settlement had made it
		// claimable (a hand-back): the entry's redelivery.
		m.parked = nil
		s.addLocked(*p)
	}
	s.notify()
}

// notify wakes everyone waiting on a change. Called with s.mu held.
func (s *Subscription) notify() {
	close(s.changed)
	s.changed = make(chan struct{})
}

// readyHeap orders fetched messages by priority, then fetch order.
type readyHeap []*Message

func (h readyHeap) Len() int { return len(h) }
func (h readyHeap) Less(i, j int) bool {
	if h[i].priority != h[j].priority {
		return h[i].priority < h[j].priority
	}
	return h[i].seq < h[j].seq
}
func (h readyHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].index, h[j].index = i, j
}
func (h *readyHeap) Push(x any) {
	m := x.(*Message)
	m.index = len(*h)
	*h = append(*h, m)
}
func (h *readyHeap) Pop() any {
	old := *h
	m := old[len(old)-1]
	old[len(old)-1] = nil
	*h = old[:len(old)-1]
	m.index = -1
	return m
}
