package queue

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/dtq-dev/dtq/internal/backoff"
	"github.com/dtq-dev/dtq/internal/keys"
	"github.com/dtq-dev/dtq/internal/queuestore"
)

// Message is one delivery of a message to a Subscription. Settle it exactly
// once with Ack, Release, Nak or Term; until then the subscription keeps its
// visibility renewed. Its methods are safe for concurrent use.
type Message struct {
	// Data is the message body, as published.
	Data []byte
	// Key is the message's key, as published (or the random key Put chose).
	Key string
	// Topic is the topic the message was delivered from.
	Topic string
	// ID is the Redis stream entry id of this delivery. It changes when the
	// message is released or redelivered after a Nak with a delay.
	ID string
	// Deliveries counts how many times the message has been delivered,
	// including this time (1 on the first delivery).
	Deliveries int

	h        holder // the subscription or lease that settles it
	priority int
	seq      uint64
	sid      streamID // ID, parsed
	keyed    bool     // Key is in the dedup index (false: a random key)
	fence    int64    // delivery count in the consumer group: who owns it; guarded by its holder (see holder.fence)
	// releasing: a settlement that ends its holding (anything but an
	// extend) was sent: a reclaim of it by its own subscription is a new
	// delivery, not the held message renewed (Subscription.deliver)
	releasing atomic.Bool
	// parked is a reclaim of it by its own subscription that came while it
	// was releasing, guarded by the subscription (see deliver)
	parked   *queuestore.Fetched
	state    msgState  // guarded by its holder's mutex
	index    int       // position in the ready heap, -1 when not there
	deadline time.Time // a leased message's, guarded by its holder
}

type msgState int

const (
	stateReady     msgState = iota // fetched and renewed, not yet handed out
	stateReceived                  // handed out by Receive, renewed
	stateSettled                   // acked, released, nak'd, termed, or handed back
	stateLost                      // reclaimed by someone else
	stateAbandoned                 // no longer renewed after a failed settle
)

// Ack acknowledges the message: it is deleted from Redis, durably once Redis
// has it, and its key is forgotten (or tombstoned, see
// Config.AckTombstoneTTL). Ack of a settled message does nothing and returns
// nil. If this subscription no longer owns the delivery, Ack returns
// ErrNotOwner and changes nothing.
//
// Any other error leaves the outcome unknown; the subscription stops renewing
// the message, so it is delivered again after the visibility timeout unless a
// later Ack succeeds. Ack blocks for one Redis round trip (shared with
// concurrent settlements of the same subscription).
func (m *Message) Ack(ctx context.Context) error {
	return m.settle(ctx, queuestore.SettleItem{Op: opAck})
}

// opAck marks an ack in Message.settle; acks run ack.lua, not settle.lua.
const opAck queuestore.Op = 'a'

// Release moves the message atomically to topic of the same queue, as a new
// delivery at the tail of that topic; the key stays live. topic may be the
// message's own topic (a move to the back of the line). With opts.MaxSize set
// and a different destination holding that many messages, Release waits for
// room until ctx ends (or, with opts.NoWait, answers ErrFull at once),
// keeping the message owned and renewed meanwhile; a release to the same
// topic never waits.
func (m *Message) Release(ctx context.Context, topic string, opts *ReleaseOpts) error {
	var o ReleaseOpts
	if opts != nil {
		o = *opts
	}
	if err := keys.CheckName("topic", topic); err != nil {
		return invalid("topic", "%v", err)
	}
	if o.MaxSize < 0 {
		return invalid("ReleaseOpts.MaxSize", "must not be negative (got %d)", o.MaxSize)
	}
	return m.settleWait(ctx, queuestore.SettleItem{Op: queuestore.OpRelease, Dest: topic, MaxSize: o.MaxSize}, o.NoWait)
}

// ReleaseOpts are the options of Message.Release. A nil *ReleaseOpts means
// all defaults.
type ReleaseOpts struct {
	// MaxSize bounds the destination topic (queued + in flight + delayed).
	// Defaults to 0: unbounded.
	MaxSize int64

	// NoWait makes Release answer ErrFull at once, changing nothing (the
	// message stays held), instead of waiting for room in a full
	// destination. Defaults to false: wait.
	NoWait bool
}

// Nak gives the message back for another delivery after delay. With delay 0
// it stays at its place in its topic and becomes claimable by any
// subscription at once; with a positive delay it is parked and delivered
// again once the delay has passed on the Redis server's clock. Either way
// the next delivery counts one more in Deliveries.
func (m *Message) Nak(ctx context.Context, delay time.Duration) error {
	if delay < 0 {
		return invalid("delay", "must not be negative (got %v)", delay)
	}
	if delay == 0 {
		return m.settle(ctx, queuestore.SettleItem{Op: queuestore.OpHandBack})
	}
	return m.settle(ctx, queuestore.SettleItem{Op: queuestore.OpNak, Delay: roundUpMs(delay)})
}

// Term moves the message to the queue's dead-letter stream with reason and
// settles it: it is never delivered again. Its key is forgotten (or
// tombstoned) as for Ack.
func (m *Message) Term(ctx context.Context, reason string) error {
	return m.settle(ctx, queuestore.SettleItem{Op: queuestore.OpTerm, Reason: reason})
}

// Extend renews the message's visibility now. The subscription renews every
// message it holds on its own; Extend is for a handler that wants to be sure
// before a long step. It returns ErrNotOwner if the message was reclaimed by
// another subscription, and never takes a message back from one.
func (m *Message) Extend(ctx context.Context) error {
	return m.settle(ctx, queuestore.SettleItem{Op: queuestore.OpExtend})
}

// holder is what a message's settlements go through: the Subscription
// that received it (batched calls, renewal) or a lease (direct calls, no
// renewal: the holder over HTTP extends it).
type holder interface {
	queue() *Queue
	// state reads m's state.
	state(m *Message) msgState
	// fence reads m's fence: the delivery a settlement of m must name.
	fence(m *Message) int64
	// run sends one settlement of m (an ack when it.Op is opAck), fenced
	// by it.Fence.
	run(ctx context.Context, m *Message, it queuestore.SettleItem) (queuestore.SettleResult, error)
	// drop ends the holding of m with state to, unless m is settled or
	// lost already.
	drop(m *Message, to msgState)
	// lose handles a settlement of m fenced by fence that Redis answered
	// "not owner": it drops m as lost and returns true, or returns false
	// when the holder still owns m under a newer fence (a subscription
	// that reclaimed its own message), to be tried again with that one.
	lose(m *Message, fence int64) bool
}

// settle runs one fenced action for m, waiting for room when a release's
// destination is full (or answering ErrFull at once with noWait).
func (m *Message) settle(ctx context.Context, it queuestore.SettleItem) error {
	return m.settleWait(ctx, it, false)
}

func (m *Message) settleWait(ctx context.Context, it queuestore.SettleItem, noWait bool) error {
	h := m.h
	switch h.state(m) {
	case stateSettled:
		return nil
	case stateLost:
		return ErrNotOwner
	}

	it.Topic, it.ID = m.Topic, m.ID
	if it.Op != queuestore.OpExtend {
		m.releasing.Store(true)
	}
	var retry backoff.Backoff
	for {
		it.Fence = h.fence(m)
		res, err := h.run(ctx, m, it)
		if err != nil && notSent(err) && ctx.Err() == nil {
			// Redis unreachable: nothing was sent; the message stays held.
			if err := retry.Sleep(ctx); err == nil {
				continue
			}
		}
		if err != nil {
			if it.Op != queuestore.OpExtend {
				h.drop(m, stateAbandoned)
			}
			return err
		}
		switch res.Status {
		case queuestore.NotOwner:
			if !h.lose(m, it.Fence) {
				continue // still ours, under the fence of our own reclaim
			}
			return ErrNotOwner
		case queuestore.Done:
			if it.Op != queuestore.OpExtend {
				h.drop(m, stateSettled)
			}
			return nil
		}
		if noWait {
			return ErrFull // DestFull: nothing changed, the message is still held
		}
		// DestFull: the message stays held and renewed while we wait.
		if err := h.queue().waitRoom(ctx, it.Dest); err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			if err := retry.Sleep(ctx); err != nil {
				return err
			}
		}
	}
}
