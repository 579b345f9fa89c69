package queue

import (
	"context"
	"encoding/base64"
	"hash/crc32"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/dtq-dev/dtq/internal/delivery"
	"github.com/dtq-dev/dtq/internal/keys"
	"github.com/dtq-dev/dtq/internal/queuestore"
)

// LeaseOpts are the options of Queue.Lease. A nil *LeaseOpts means all
// defaults.
type LeaseOpts struct {
	// Group names the consumer group the leases compete in, with every
	// subscription and lease of that group. Defaults to "dtq".
	Group string

	// Holder names the lease holder in the group (its consumer name), so
	// that operators can tell who holds what. Every lease of a holder is
	// fenced by its own delivery, so holders may share a name: 1-128 bytes
	// of UTF-8 without |, tabs or newlines. Defaults to "lease".
	Holder string

	// VisibilityTimeout is how long a leased message stays invisible to
	// others unless extended; it is also how long others' messages must
	// have gone unrenewed before this call reclaims them. Use the group's
	// one value. Defaults to 30s.
	VisibilityTimeout time.Duration

	// Max is the most messages one call returns, 1 to 256. Defaults to 1.
	Max int

	// Wait is how long the call waits for a first message when none is
	// claimable at once. Defaults to 0: answer at once.
	Wait time.Duration
}

// maxLeaseBatch bounds LeaseOpts.Max.
const maxLeaseBatch = batchMax

// Lease claims up to opts.Max messages of topics (name → priority, as for
// Subscribe) for a holder outside this process, typically over HTTP: each
// returned message carries a token (Message.Token) that Queue.Leased turns
// back into a message to settle, in any process. Nothing renews a leased
// message: its holder extends it (Message.Extend) within the visibility
// timeout, or it is reclaimed by the next subscription or lease of the
// group, and the late holder's settlements answer ErrNotOwner. Each call
// also promotes due delayed messages, reclaims abandoned ones and
// dead-letters malformed entries, as a subscription's fetch does.
//
// With opts.Wait it waits up to that long for a first message; it returns
// no messages and no error when none came.
func (q *Queue) Lease(ctx context.Context, topics map[string]int, opts *LeaseOpts) ([]*Message, error) {
	lh, names, err := q.leaseHolder(topics, opts)
	if err != nil {
		return nil, err
	}
	o := lh.opts
	until := time.Now().Add(o.Wait)
	for {
		req := queuestore.FetchRequest{
			Group:       o.Group,
			Consumer:    o.Holder,
			Topics:      names,
			Cursors:     q.leaseCursors.get(o.Group, names),
			Credit:      o.Max,
			ReclaimIdle: o.VisibilityTimeout,
			DeadMaxLen:  q.cfg.DeadLetterMaxLen,
			PromoteMax:  promoteMax,
		}
		res, err := queuestore.Fetch(ctx, q.client, q.keys, req)
		if err != nil {
			return nil, err
		}
		q.leaseCursors.put(o.Group, names, res.Cursors)
		if len(res.Entries) > 0 {
			return lh.messages(names, res.Entries), nil
		}
		left := time.Until(until)
		if left < time.Millisecond {
			return nil, nil
		}
		// Wake for new entries, hand-backs and delays, the next due
		// delayed message, and the next reclaim pass (paced as a
		// subscription's).
		timeout := min(left, maxBlock, delivery.ReclaimEvery(o.VisibilityTimeout))
		if res.NextDue >= 0 {
			timeout = max(min(timeout, res.NextDue), time.Millisecond)
		}
		if _, err := q.waitForNew(ctx, names, res.Wait, timeout); err != nil {
			return nil, err
		}
	}
}

// leaseHolder checks Lease's arguments and returns the holder of its
// messages, with the topics in priority order.
func (q *Queue) leaseHolder(topics map[string]int, opts *LeaseOpts) (*leased, []string, error) {
	var o LeaseOpts
	if opts != nil {
		o = *opts
	}
	names, _, err := orderTopics(topics)
	if err != nil {
		return nil, nil, err
	}
	if o.Group, err = checkGroup("LeaseOpts.Group", o.Group); err != nil {
		return nil, nil, err
	}
	if o.Holder == "" {
		o.Holder = "lease"
	}
	if !validHolder(o.Holder) {
		return nil, nil, invalid("LeaseOpts.Holder", "must be 1-128 bytes of UTF-8 without |, tabs or newlines (got %q)", o.Holder)
	}
	if o.VisibilityTimeout, err = checkVisibility("LeaseOpts.VisibilityTimeout", o.VisibilityTimeout); err != nil {
		return nil, nil, err
	}
	switch {
	case o.Max < 0 || o.Max > maxLeaseBatch:
		return nil, nil, invalid("LeaseOpts.Max", "must be 1 to %d (got %d)", maxLeaseBatch, o.Max)
	case o.Max == 0:
		o.Max = 1
	}
	if o.Wait < 0 {
		return nil, nil, invalid("LeaseOpts.Wait", "must not be negative (got %v)", o.Wait)
	}
	return q.newLeased(o), names, nil
}

// Token names a leased message (see Queue.Lease) for Queue.Leased: its
// queue, group, holder, visibility timeout, topic, delivery and key. It is "" for a message
// received by a Subscription, which settles its own messages.
func (m *Message) Token() string {
	lh, ok := m.h.(*leased)
	if !ok {
		return ""
	}
	keyed := "0"
	if m.keyed {
		keyed = "1"
	}
	raw := strings.Join([]string{tokenVersion, lh.q.name, lh.opts.Group, lh.opts.Holder,
		strconv.FormatInt(lh.opts.VisibilityTimeout.Milliseconds(), 10), m.Topic, m.ID,
		strconv.FormatInt(m.fence, 10), strconv.Itoa(m.Deliveries), keyed, m.Key}, "|")
	return base64.RawURLEncoding.EncodeToString([]byte(checksum(raw) + "|" + raw))
}

// Deadline is when a leased message is reclaimable unless extended: the
// lease's (or its last Extend's) time plus the visibility timeout, on this
// process's clock. It is zero for a message received by a Subscription.
func (m *Message) Deadline() time.Time {
	lh, ok := m.h.(*leased)
	if !ok {
		return time.Time{}
	}
	lh.mu.Lock()
	defer lh.mu.Unlock()
	return m.deadline
}

func validHolder(h string) bool {
	return h != "" && len(h) <= 128 && utf8.ValidString(h) && !strings.ContainsAny(h, "|\n\t")
}

// tokenVersion starts every lease token (after its checksum).
const tokenVersion = "M1"

// checksum catches a token damaged on its way (cut, mistyped): a token
// that names another delivery's key would forget that key when acked.
func checksum(s string) string {
	return strconv.FormatUint(uint64(crc32.ChecksumIEEE([]byte(s))), 36)
}

// Leased returns the message a token of Queue.Lease names, to settle it:
// Ack, Release, Nak, Term and Extend act as on a received message, fenced
// by the delivery the token names (ErrNotOwner once it was reclaimed or
// settled). Its Data is nil. A token that is not one of this queue's is an
// ErrInvalid; Leased does no I/O.
func (q *Queue) Leased(token string) (*Message, error) {
	bad := func(why string) (*Message, error) {
		return nil, invalid("token", "is not a lease token of this queue (%s)", why)
	}
	raw, err := base64.RawURLEncoding.DecodeString(token)
	if err != nil {
		return bad("not base64url")
	}
	sum, rest, _ := strings.Cut(string(raw), "|")
	if sum != checksum(rest) {
		return bad("damaged")
	}
	f := strings.SplitN(rest, "|", 11)
	if len(f) != 11 || f[0] != tokenVersion {
		return bad("unknown format")
	}
	if f[1] != q.name {
		return bad("another queue's")
	}
	f = f[1:] // from here on, as Token wrote them after the queue's name
	group, holder, topic, id, key := f[1], f[2], f[4], f[5], f[9]
	vt, err0 := strconv.ParseInt(f[3], 10, 64)
	fence, err1 := strconv.ParseInt(f[6], 10, 64)
	deliveries, err2 := strconv.Atoi(f[7])
	_, idOK := parseID(id)
	switch {
	case !keys.ValidName(group) || !validHolder(holder) || !keys.ValidName(topic):
		return bad("bad name")
	case err0 != nil || time.Duration(vt)*time.Millisecond < delivery.MinVisibility:
		return bad("bad visibility timeout")
	case !idOK || err1 != nil || fence < 1 || err2 != nil || deliveries < 1:
		return bad("bad delivery")
	case f[8] != "0" && f[8] != "1", key == "", len(key) > MaxKeyBytes, !utf8.ValidString(key):
		return bad("bad key")
	}
	lh := q.newLeased(LeaseOpts{Group: group, Holder: holder, VisibilityTimeout: time.Duration(vt) * time.Millisecond})
	return lh.message(topic, id, fence, deliveries, key, f[8] == "1", nil), nil
}

// leased holds the messages of one Lease call (or one Leased token): it
// settles them with direct script calls and renews nothing.
type leased struct {
	q    *Queue
	opts LeaseOpts
	cfg  queuestore.SettleConfig

	mu sync.Mutex // guards the state and deadline of its messages
}

func (q *Queue) newLeased(o LeaseOpts) *leased {
	return &leased{
		q:    q,
		opts: o,
		cfg: queuestore.SettleConfig{
			Group:        o.Group,
			Consumer:     o.Holder,
			TombstoneTTL: q.cfg.AckTombstoneTTL,
			WaiterTTL:    waiterTTL,
			DeadMaxLen:   q.cfg.DeadLetterMaxLen,
			RoomCap:      roomCap,
		},
	}
}

func (lh *leased) messages(names []string, entries []queuestore.Fetched) []*Message {
	out := make([]*Message, len(entries))
	for i, e := range entries {
		out[i] = lh.message(names[e.Topic], e.ID, e.Fence, int(e.Prior+e.Fence), e.Key, e.Keyed, e.Data)
	}
	return out
}

func (lh *leased) message(topic, id string, fence int64, deliveries int, key string, keyed bool, data []byte) *Message {
	sid, _ := parseID(id)
	return &Message{Data: data, Key: key, Topic: topic, ID: id, Deliveries: deliveries,
		h: lh, sid: sid, keyed: keyed, fence: fence, state: stateReceived, index: -1,
		deadline: time.Now().Add(lh.opts.VisibilityTimeout)}
}

func (lh *leased) queue() *Queue { return lh.q }

func (lh *leased) state(m *Message) msgState {
	lh.mu.Lock()
	defer lh.mu.Unlock()
	return m.state
}

func (lh *leased) drop(m *Message, to msgState) {
	lh.mu.Lock()
	defer lh.mu.Unlock()
	if m.state != stateSettled && m.state != stateLost {
		m.state = to
	}
}

// fence is m's delivery, which never changes: nothing reclaims a leased
// message for its own lease.
func (lh *leased) fence(m *Message) int64 { return m.fence }

func (lh *leased) lose(m *Message, _ int64) bool {
	lh.drop(m, stateLost)
	return true
}

func (lh *leased) run(ctx context.Context, m *Message, it queuestore.SettleItem) (queuestore.SettleResult, error) {
	q := lh.q
	if it.Op == opAck {
		ok, err := queuestore.Ack(ctx, q.client, q.keys, lh.cfg, m.Topic, []queuestore.AckItem{m.ackItem(it.Fence)}, nil)
		if err != nil {
			return queuestore.SettleResult{}, err
		}
		if !ok[0] {
			return queuestore.SettleResult{Status: queuestore.NotOwner}, nil
		}
		return queuestore.SettleResult{Status: queuestore.Done}, nil
	}
	start := time.Now()
	res, err := queuestore.Settle(ctx, q.client, q.keys, lh.cfg, []queuestore.SettleItem{it})
	if err != nil {
		return queuestore.SettleResult{}, err
	}
	if it.Op == queuestore.OpExtend && res[0].Status == queuestore.Done {
		lh.mu.Lock()
		m.deadline = start.Add(lh.opts.VisibilityTimeout)
		lh.mu.Unlock()
	}
	return res[0], nil
}

// cursorCache keeps the reclaim cursors of Lease calls per group and
// topic, so that successive calls walk a group's pending entries instead
// of rereading its first ones. It forgets everything past maxCursors
// entries (names come from callers, over HTTP from anyone).
type cursorCache struct {
	mu sync.Mutex
	m  map[string]string
}

const maxCursors = 10_000

func (c *cursorCache) get(group string, topics []string) []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]string, len(topics))
	for i, t := range topics {
		out[i] = "0-0"
		if v, ok := c.m[group+"\x00"+t]; ok {
			out[i] = v
		}
	}
	return out
}

func (c *cursorCache) put(group string, topics, cursors []string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil || len(c.m) > maxCursors {
		c.m = map[string]string{}
	}
	for i, t := range topics {
		c.m[group+"\x00"+t] = cursors[i]
	}
}
