package store

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/redis/rueidis"
)

// LayoutError reports a namespace whose data was written in a key layout
// this process does not know.
type LayoutError struct {
	Namespace string
	Found     string // the version found
}

func (e *LayoutError) Error() string {
	return fmt.Sprintf("store: namespace %q holds data of layout version %s, but this dtq reads and writes version %s: "+
		"run processes of one version on one namespace (drain and stop the old ones first, or use another namespace)",
		e.Namespace, e.Found, Layout)
}

// CheckLayout makes sure the namespace's data is of this package's Layout:
// it records the layout in a namespace without one, and returns a
// *LayoutError for another version (data of the first layout, which had no
// such record, is recognised by its queue set).
func (s *Store) CheckLayout(ctx context.Context) error {
	c := s.r
	res := c.DoMulti(ctx, c.B().Get().Key(LayoutKey(s.ns)).Build(), c.B().Exists().Key(QueuesKey(s.ns)).Build())
	if done, err := s.layoutRecorded(ctx, res[0]); done {
		return err
	}
	old, err := res[1].AsInt64()
	if err != nil {
		return err
	}
	if old == 1 {
		return s.recheckLayout(ctx)
	}
	err = c.Do(ctx, c.B().Set().Key(LayoutKey(s.ns)).Value(Layout).Nx().Build()).Error()
	if rueidis.IsRedisNil(err) { // another process recorded one first
		return s.CheckLayout(ctx)
	}
	return err
}

// recheckLayout decides a namespace whose queue set exists while its
// layout record did not: the first layout's data — or another process of
// this layout recorded its layout and registered a queue between the two
// reads (a process records the layout before it registers any queue, and
// the two keys are in different Cluster slots: no one read sees both).
// So the record is read again.
func (s *Store) recheckLayout(ctx context.Context) error {
	c := s.r
	if done, err := s.layoutRecorded(ctx, c.Do(ctx, c.B().Get().Key(LayoutKey(s.ns)).Build())); done {
		return err
	}
	return &LayoutError{Namespace: s.ns, Found: "1"}
}

// layoutRecorded reads the answer to a GET of the layout record: done
// when there is one (err: nil for this layout, a *LayoutError for
// another) or the read failed (err); not done when there is none. A
// namespace of layout UpgradesFrom is upgraded to Layout in place (its
// data is Layout's already): processes of the older layout refuse it from
// then on.
func (s *Store) layoutRecorded(ctx context.Context, r rueidis.RedisResult) (done bool, err error) {
	v, err := r.ToString()
	switch {
	case rueidis.IsRedisNil(err):
		return false, nil
	case err != nil:
		return true, err
	case v == UpgradesFrom:
		c := s.r
		return true, c.Do(ctx, c.B().Set().Key(LayoutKey(s.ns)).Value(Layout).Build()).Error()
	case v != Layout:
		return true, &LayoutError{Namespace: s.ns, Found: v}
	}
	return true, nil
}

// RegisterQueue adds name to the namespace's queue set.
func (s *Store) RegisterQueue(ctx context.Context, name string) error {
	c := s.r
	return c.Do(ctx, c.B().Sadd().Key(QueuesKey(s.ns)).Member(name).Build()).Error()
}

// QueueRegistered reports whether name is in the namespace's queue set.
func (s *Store) QueueRegistered(ctx context.Context, name string) (bool, error) {
	c := s.r
	return c.Do(ctx, c.B().Sismember().Key(QueuesKey(s.ns)).Member(name).Build()).AsBool()
}

// QueueNames returns the namespace's queue names, unsorted.
func (s *Store) QueueNames(ctx context.Context) ([]string, error) {
	c := s.r
	return c.Do(ctx, c.B().Smembers().Key(QueuesKey(s.ns)).Build()).AsStrSlice()
}

// Publish sends pubs, one PUBLISH each, on a dedicated connection: not on
// the client's shared one, where a command sent beside a caller's moves
// rueidis from its synchronous path to its pipelining goroutines for good
// (a serial submitter's calls then cost two goroutine hand-offs each).
func (s *Store) Publish(ctx context.Context, pubs []Publication) error {
	if len(pubs) == 0 {
		return nil
	}
	return s.r.Dedicated(func(dc rueidis.DedicatedClient) error {
		cmds := make(rueidis.Commands, len(pubs))
		for i, p := range pubs {
			cmds[i] = s.publishCmd(p)
		}
		for _, r := range dc.DoMulti(ctx, cmds...) {
			if err := r.Error(); err != nil {
				return err
			}
		}
		return nil
	})
}

// Subscribe calls fn with every message published on channels until ctx
// ends or the subscription fails (its error is returned), on a dedicated
// connection.
func (s *Store) Subscribe(ctx context.Context, channels []string, fn func(channel, message string)) error {
	return s.r.Dedicated(func(dc rueidis.DedicatedClient) error {
		return dc.Receive(ctx, dc.B().Subscribe().Channel(channels...).Build(), func(m rueidis.PubSubMessage) {
			fn(m.Channel, m.Message)
		})
	})
}

// SubscribeEvents calls fn with the queue and message of every lifecycle
// event published for queues (every queue of the namespace when none are
// given) until ctx ends or the subscription fails, on a dedicated
// connection.
func (s *Store) SubscribeEvents(ctx context.Context, queues []string, fn func(queue, message string)) error {
	handle := func(m rueidis.PubSubMessage) { fn(queueOfChannel(m.Channel), m.Message) }
	return s.r.Dedicated(func(dc rueidis.DedicatedClient) error {
		if len(queues) == 0 {
			pattern := NewKeys(s.ns, "*").Events()
			return dc.Receive(ctx, dc.B().Psubscribe().Pattern(pattern).Build(), handle)
		}
		chans := make([]string, len(queues))
		for i, q := range queues {
			chans[i] = NewKeys(s.ns, q).Events()
		}
		return dc.Receive(ctx, dc.B().Subscribe().Channel(chans...).Build(), handle)
	})
}

// queueOfChannel extracts the queue name from "<ns>:{<queue>}:events".
func queueOfChannel(ch string) string {
	i, j := strings.IndexByte(ch, '{'), strings.IndexByte(ch, '}')
	if i < 0 || j < i {
		return ""
	}
	return ch[i+1 : j]
}

// WorkerRecord is a worker's heartbeat.
type WorkerRecord struct {
	ID, Host          string
	PID               int
	Queues            []string
	Concurrency, Busy int
	Started           int64 // Unix ms
	Heartbeat         int64 // Unix ms
	// Kind is "go" (a dtq.Worker) or "http" (a lease holder); Library
	// what it runs on ("" unknown).
	Kind, Library string
	// State is what the worker says it does (WorkerState: "" for a lease
	// holder); Control what an admin asked of it (WorkerControl, read
	// only).
	State, Control string
}

// Heartbeat records w, to expire after ttl. It returns what an admin
// asked of the worker (its hash's WorkerControl: "" for nothing).
func (s *Store) Heartbeat(ctx context.Context, w WorkerRecord, ttl time.Duration) (string, error) {
	c := s.r
	key := WorkerKey(s.ns, w.ID)
	now := time.Now().UnixMilli()
	cmds := rueidis.Commands{
		c.B().Hset().Key(key).FieldValue().
			FieldValue(WorkerID, w.ID).FieldValue(WorkerHost, w.Host).FieldValue(WorkerPID, itoa(w.PID)).
			FieldValue(WorkerQueues, strings.Join(w.Queues, ",")).FieldValue(WorkerConcurrency, itoa(w.Concurrency)).
			FieldValue(WorkerBusy, itoa(w.Busy)).FieldValue(WorkerStarted, strconv.FormatInt(w.Started, 10)).
			FieldValue(WorkerHeartbeat, strconv.FormatInt(now, 10)).
			FieldValue(WorkerKind, w.Kind).FieldValue(WorkerLibrary, w.Library).FieldValue(WorkerState, w.State).Build(),
		c.B().Pexpire().Key(key).Milliseconds(ttl.Milliseconds()).Build(),
		c.B().Zadd().Key(WorkersKey(s.ns)).ScoreMember().ScoreMember(float64(now+ttl.Milliseconds()), w.ID).Build(),
		c.B().Zremrangebyscore().Key(WorkersKey(s.ns)).Min("-inf").Max(strconv.FormatInt(now, 10)).Build(),
		c.B().Hget().Key(key).Field(WorkerControl).Build(),
	}
	res := c.DoMulti(ctx, cmds...)
	for _, r := range res[:len(res)-1] {
		if err := r.Error(); err != nil {
			return "", err
		}
	}
	control, err := res[len(res)-1].ToString()
	if rueidis.IsRedisNil(err) {
		return "", nil
	}
	return control, err
}

// TouchWorker refreshes worker id's heartbeat, leaving the rest of its
// record as its last Heartbeat wrote it; a worker no longer registered (it
// expired) is not listed again by it (its partial record expires too).
func (s *Store) TouchWorker(ctx context.Context, id string, ttl time.Duration) error {
	c := s.r
	key := WorkerKey(s.ns, id)
	now := time.Now().UnixMilli()
	for _, r := range c.DoMulti(ctx,
		c.B().Hset().Key(key).FieldValue().FieldValue(WorkerHeartbeat, strconv.FormatInt(now, 10)).Build(),
		c.B().Pexpire().Key(key).Milliseconds(ttl.Milliseconds()).Build(),
		c.B().Zadd().Key(WorkersKey(s.ns)).Xx().ScoreMember().ScoreMember(float64(now+ttl.Milliseconds()), id).Build()) {
		if err := r.Error(); err != nil {
			return err
		}
	}
	return nil
}

// Deregister removes worker id from the registry.
func (s *Store) Deregister(ctx context.Context, id string) error {
	c := s.r
	for _, r := range c.DoMulti(ctx, c.B().Del().Key(WorkerKey(s.ns, id)).Build(),
		c.B().Zrem().Key(WorkersKey(s.ns)).Member(id).Build()) {
		if err := r.Error(); err != nil {
			return err
		}
	}
	return nil
}

// Workers returns the workers whose heartbeat has not expired.
func (s *Store) Workers(ctx context.Context) ([]WorkerRecord, error) {
	c := s.r
	now := strconv.FormatInt(time.Now().UnixMilli(), 10)
	ids, err := c.Do(ctx, c.B().Zrangebyscore().Key(WorkersKey(s.ns)).Min(now).Max("+inf").Build()).AsStrSlice()
	if err != nil || len(ids) == 0 {
		return nil, err
	}
	cmds := make(rueidis.Commands, len(ids))
	for i, id := range ids {
		cmds[i] = c.B().Hgetall().Key(WorkerKey(s.ns, id)).Build()
	}
	var out []WorkerRecord
	for _, r := range c.DoMulti(ctx, cmds...) {
		h, err := r.AsStrMap()
		if err != nil {
			return nil, err
		}
		if len(h) == 0 {
			continue
		}
		var queues []string
		if h[WorkerQueues] != "" {
			queues = strings.Split(h[WorkerQueues], ",")
		}
		out = append(out, WorkerRecord{ID: h[WorkerID], Host: h[WorkerHost], PID: atoi(h[WorkerPID]), Queues: queues,
			Concurrency: atoi(h[WorkerConcurrency]), Busy: atoi(h[WorkerBusy]),
			Started: atoi64(h[WorkerStarted]), Heartbeat: atoi64(h[WorkerHeartbeat]), Kind: h[WorkerKind], Library: h[WorkerLibrary],
			State: h[WorkerState], Control: h[WorkerControl]})
	}
	return out, nil
}

// AuditRecord is one admin action.
type AuditRecord struct {
	EntryID                       string
	At                            int64 // Unix ms
	Action, Queue, TaskID, Detail string
}

// Audit appends an admin action to the capped audit stream.
func (s *Store) Audit(ctx context.Context, maxLen int64, a AuditRecord) error {
	c := s.r
	return c.Do(ctx, c.B().Xadd().Key(AuditKey(s.ns)).Maxlen().Almost().Threshold(strconv.FormatInt(maxLen, 10)).Id("*").
		FieldValue().FieldValue(AuditAction, a.Action).FieldValue(AuditQueue, a.Queue).FieldValue(AuditTask, a.TaskID).
		FieldValue(AuditDetail, a.Detail).Build()).Error()
}

// ReadAudit returns up to limit admin actions, newest first.
func (s *Store) ReadAudit(ctx context.Context, limit int) ([]AuditRecord, error) {
	c := s.r
	es, err := c.Do(ctx, c.B().Xrevrange().Key(AuditKey(s.ns)).End("+").Start("-").Count(int64(limit)).Build()).AsXRange()
	if err != nil {
		return nil, err
	}
	out := make([]AuditRecord, len(es))
	for i, e := range es {
		f := e.FieldValues
		out[i] = AuditRecord{EntryID: e.ID, At: entryMs(e.ID), Action: f[AuditAction], Queue: f[AuditQueue], TaskID: f[AuditTask], Detail: f[AuditDetail]}
	}
	return out, nil
}
