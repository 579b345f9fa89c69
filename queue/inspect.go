package queue

import (
	"context"
	"strconv"

	"github.com/dtq-dev/dtq/conn"
	"github.com/dtq-dev/dtq/internal/keys"
	"github.com/dtq-dev/dtq/internal/queuestore"
	"github.com/dtq-dev/dtq/internal/redisconn"
)

// TopicStats counts the messages of one topic.
type TopicStats struct {
	Queued   int64 // in the stream, not delivered to anyone
	InFlight int64 // delivered and not settled (pending in the group)
	Delayed  int64 // parked until due (PutOpts.Delay, Message.Nak with a delay)
}

// Stats returns the counts of topic in group ("" = the default group). The
// counts are read in one round trip but not atomically.
func (q *Queue) Stats(ctx context.Context, topic, group string) (TopicStats, error) {
	if err := keys.CheckName("topic", topic); err != nil {
		return TopicStats{}, invalid("topic", "%v", err)
	}
	if group == "" {
		group = "dtq"
	}
	if err := keys.CheckName("group", group); err != nil {
		return TopicStats{}, invalid("group", "%v", err)
	}
	length, pending, parked, err := queuestore.TopicCounts(ctx, q.client, q.keys.Stream(topic), group, q.keys.Delayed(topic))
	if err != nil {
		return TopicStats{}, err
	}
	st := TopicStats{InFlight: pending, Delayed: parked}
	st.Queued = length - st.InFlight
	return st, nil
}

// DeadLetter is one entry of the queue's dead-letter stream.
type DeadLetter struct {
	ID         string // entry id in the dead-letter stream
	Topic      string // topic the message came from
	MessageID  string // its entry id in that topic
	Key        string // empty for a malformed entry
	Data       []byte // empty for a malformed entry
	Deliveries int
	Reason     string
}

// DeadLetters returns up to count dead letters, newest first.
func (q *Queue) DeadLetters(ctx context.Context, count int64) ([]DeadLetter, error) {
	entries, err := queuestore.Newest(ctx, q.client, q.keys.Dead(), count)
	if err != nil {
		return nil, err
	}
	out := make([]DeadLetter, len(entries))
	for i, e := range entries {
		f := e.Fields
		n, _ := strconv.Atoi(f["deliveries"])
		out[i] = DeadLetter{
			ID: e.ID, Topic: f["topic"], MessageID: f["id"], Key: f["key"], Data: []byte(f["data"]),
			Deliveries: n, Reason: f["reason"],
		}
	}
	return out, nil
}

// Malformed returns how many malformed stream entries (missing the key or
// data field, written by something other than this package) the queue has
// moved to its dead-letter stream.
func (q *Queue) Malformed(ctx context.Context) (int64, error) {
	return queuestore.Counter(ctx, q.client, q.keys.Stats(), "malformed")
}

// register enters topic in the queue's topic set and the queue in the
// namespace's queue set, once per Queue value and topic: the first Put of
// a topic costs one more round trip, later ones nothing. It is best
// effort: a failure is logged and the next Put of the topic tries again
// (the Put itself retries or fails on its own terms).
func (q *Queue) register(ctx context.Context, topic string) {
	if _, ok := q.registered.Load(topic); ok {
		return
	}
	if err := queuestore.Register(ctx, q.client, keys.Queues(q.cfg.Namespace), q.name, q.keys.Topics(), topic); err != nil {
		q.log.Warn("could not list the topic (Queue.Topics)", attrTopic, topic, attrError, err)
		return
	}
	q.registered.Store(topic, true)
}

// Topics returns the names of the queue's topics, sorted: every topic a
// message was put to (Put; a topic that only Message.Release moved
// messages to is not listed), for as long as the queue's keys exist.
func (q *Queue) Topics(ctx context.Context) ([]string, error) {
	return queuestore.Members(ctx, q.client, q.keys.Topics())
}

// Queues returns the names of the queues of namespace cfg.Namespace (nil
// cfg: the default namespace) that a message was put to, sorted.
func Queues(ctx context.Context, redis *conn.Redis, cfg *Config) ([]string, error) {
	client := redisconn.Client(redis)
	if client == nil {
		return nil, invalid("client", "must not be nil")
	}
	c, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	return queuestore.Members(ctx, client, keys.Queues(c.Namespace))
}
