package api

import (
	"encoding/base64"
	"net/http"
	"strconv"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/dtq-dev/dtq/api/wire"
	"github.com/dtq-dev/dtq/internal/wiretime"
	"github.com/dtq-dev/dtq/queue"
)

// The routes of the reliable message queue (package queue) under
// /api/v1/mq/{queue}: put, lease, settle by lease token, topic counts and
// dead letters. docs/workers.md describes the protocol.

// mqQueues keeps the queue.Queue values of the routes by name.
type mqQueues struct {
	mu sync.Mutex
	m  map[string]*queue.Queue
}

// maxMQQueues bounds the names kept (they come from request paths); past
// it a Queue is built per request, which costs no I/O.
const maxMQQueues = 1024

// mq returns the message queue of the request's {queue}.
func (s *Server) mq(r *http.Request) (*queue.Queue, error) {
	return s.mqNamed(r.PathValue("queue"))
}

// mqNamed returns the message queue name.
func (s *Server) mqNamed(name string) (*queue.Queue, error) {
	s.mqs.mu.Lock()
	defer s.mqs.mu.Unlock()
	if q := s.mqs.m[name]; q != nil {
		return q, nil
	}
	cfg := s.cfg.MessageQueue
	cfg.Namespace = s.c.Namespace()
	cfg.Logger = s.log
	q, err := queue.New(s.redis, name, &cfg)
	if err != nil {
		return nil, err
	}
	if s.mqs.m == nil {
		s.mqs.m = map[string]*queue.Queue{}
	}
	if len(s.mqs.m) < maxMQQueues {
		s.mqs.m[name] = q
	}
	return q, nil
}

// mqPut: POST /api/v1/mq/{queue}/topics/{topic}/messages → 201 published,
// 200 {"published": false} for a live key, 429 topic_full past max_size.
func (s *Server) mqPut(w http.ResponseWriter, r *http.Request) {
	var b wire.MQPut
	if err := readJSON(w, r, s.cfg.MaxBodyBytes, &b); err != nil {
		s.writeErr(w, r, err)
		return
	}
	data, err := messageData(b.Data, b.DataBase64)
	if err != nil {
		s.writeErr(w, r, err)
		return
	}
	opts := queue.PutOpts{NoWait: true}
	if b.Key != nil {
		if *b.Key == "" {
			s.writeErr(w, r, invalidField("key", "must not be empty (leave it out for a random key)"))
			return
		}
		opts.Key = *b.Key
	}
	if given(b.DelaySeconds) {
		if opts.Delay, err = secondsField("delay_seconds", b.DelaySeconds); err != nil {
			s.writeErr(w, r, err)
			return
		}
	}
	if given(b.MaxSize) {
		n, err := intField("max_size", b.MaxSize)
		if err != nil {
			s.writeErr(w, r, err)
			return
		}
		opts.MaxSize = int64(n)
	}
	q, err := s.mq(r)
	if err != nil {
		s.writeErr(w, r, err)
		return
	}
	ok, err := q.Put(r.Context(), r.PathValue("topic"), data, &opts)
	if err != nil {
		s.writeErr(w, r, err)
		return
	}
	if !ok {
		writeJSON(w, http.StatusOK, wire.MQPutAnswer{Published: false, Key: opts.Key})
		return
	}
	writeJSON(w, http.StatusCreated, wire.MQPutAnswer{Published: true, Key: opts.Key})
}

// messageData reads a message body given as text or as base64: exactly one.
func messageData(text, b64 *string) ([]byte, error) {
	switch {
	case text != nil && b64 != nil:
		return nil, invalidField("data", "and data_base64 are two spellings of the body: give one")
	case text != nil:
		return []byte(*text), nil
	case b64 != nil:
		d, err := base64.StdEncoding.DecodeString(*b64)
		if err != nil {
			return nil, invalidField("data_base64", "must be standard base64 (RFC 4648, with padding)")
		}
		return d, nil
	}
	return nil, invalidField("data", "is required (or data_base64): the message body")
}

// Bounds of a lease request over HTTP: those of the engine's leases.
const (
	maxMQLeases = 100
	maxMQTopics = 100 // each costs the lease call's script two keys
	maxMQLease  = 12 * time.Hour
)

// messageLeaseOf is a leased message as the API answers it.
func messageLeaseOf(m *queue.Message) wire.MQLease {
	l := wire.MQLease{Token: m.Token(), Deadline: wiretime.Time(m.Deadline()), Topic: m.Topic, ID: m.ID, Key: m.Key, Deliveries: m.Deliveries}
	l.Data, l.DataBase64 = bodyOf(m.Data)
	return l
}

// bodyOf spells a message body for an answer: as text when it is valid
// UTF-8 (else nil), and always as standard base64.
func bodyOf(data []byte) (*string, string) {
	b64 := base64.StdEncoding.EncodeToString(data)
	if !utf8.Valid(data) {
		return nil, b64
	}
	text := string(data)
	return &text, b64
}

// mqLeases: POST /api/v1/mq/{queue}/leases → 200 {"leases": […]} (none
// after the wait).
func (s *Server) mqLeases(w http.ResponseWriter, r *http.Request) {
	var b wire.MQLeaseRequest
	if err := readJSON(w, r, s.cfg.MaxBodyBytes, &b); err != nil {
		s.writeErr(w, r, err)
		return
	}
	if b.Worker == nil {
		s.writeErr(w, r, invalidField("worker", "is required: a name for the lease holder"))
		return
	}
	if len(b.Topics) == 0 {
		s.writeErr(w, r, invalidField("topics", "is required: the topics to lease from, highest priority first"))
		return
	}
	if len(b.Topics) > maxMQTopics {
		s.writeErr(w, r, invalidField("topics", sprintf("names %d topics, over the limit of %d", len(b.Topics), maxMQTopics)))
		return
	}
	topics := make(map[string]int, len(b.Topics))
	for i, t := range b.Topics {
		if _, dup := topics[t]; dup {
			s.writeErr(w, r, invalidField("topics", sprintf("names %q twice", t)))
			return
		}
		topics[t] = i
	}
	opts := queue.LeaseOpts{Holder: *b.Worker}
	if b.Group != nil {
		if *b.Group == "" {
			s.writeErr(w, r, invalidField("group", `must not be empty (leave it out for "dtq")`))
			return
		}
		opts.Group = *b.Group
	}
	lw, err := readLeaseWindow(b.Max, b.WaitSeconds, b.LeaseSeconds)
	if err != nil {
		s.writeErr(w, r, err)
		return
	}
	if lw.max < 0 || lw.max > maxMQLeases {
		s.writeErr(w, r, invalidField("max", sprintf("must be 1 to %d (got %d)", maxMQLeases, lw.max)))
		return
	}
	if lw.lease > maxMQLease {
		s.writeErr(w, r, invalidField("lease_seconds", sprintf("must be at most %v (got %s)", maxMQLease.Seconds(), shorten(b.LeaseSeconds))))
		return
	}
	opts.Max, opts.Wait, opts.VisibilityTimeout = lw.max, lw.wait, lw.lease
	q, err := s.mq(r)
	if err != nil {
		s.writeErr(w, r, err)
		return
	}
	ms, err := q.Lease(r.Context(), topics, &opts)
	if err != nil {
		s.writeErr(w, r, err)
		return
	}
	out := wire.MQLeaseList{Leases: make([]wire.MQLease, len(ms))}
	for i, m := range ms {
		out.Leases[i] = messageLeaseOf(m)
	}
	writeJSON(w, http.StatusOK, out)
}

// mqLeased returns the message the request's {lease} token names.
func (s *Server) mqLeased(r *http.Request) (*queue.Message, error) {
	q, err := s.mq(r)
	if err != nil {
		return nil, err
	}
	return q.Leased(r.PathValue("lease"))
}

// mqAck: POST /api/v1/mq/{queue}/leases/{lease}/ack → 200, 409 lease_lost.
func (s *Server) mqAck(w http.ResponseWriter, r *http.Request) {
	s.mqSettle(w, r, "ack", func(m *queue.Message) error { return m.Ack(r.Context()) })
}

// mqExtend: POST …/extend → 200 with the new deadline, 409 lease_lost.
func (s *Server) mqExtend(w http.ResponseWriter, r *http.Request) {
	m, err := s.mqLeased(r)
	if err == nil {
		err = m.Extend(r.Context())
	}
	if err != nil {
		s.writeErr(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, wire.MQExtended{Token: r.PathValue("lease"), Deadline: wiretime.Time(m.Deadline())})
}

// mqRelease: POST …/release {"topic", "max_size"} → 200, 409 lease_lost,
// 429 topic_full (the lease stays its holder's).
func (s *Server) mqRelease(w http.ResponseWriter, r *http.Request) {
	var b wire.MQRelease
	if err := readJSON(w, r, s.cfg.MaxBodyBytes, &b); err != nil {
		s.writeErr(w, r, err)
		return
	}
	if b.Topic == nil {
		s.writeErr(w, r, invalidField("topic", "is required: the topic to move the message to"))
		return
	}
	opts := queue.ReleaseOpts{NoWait: true}
	if given(b.MaxSize) {
		n, err := intField("max_size", b.MaxSize)
		if err != nil {
			s.writeErr(w, r, err)
			return
		}
		opts.MaxSize = int64(n)
	}
	s.mqSettle(w, r, "release", func(m *queue.Message) error { return m.Release(r.Context(), *b.Topic, &opts) })
}

// mqNak: POST …/nak [{"delay_seconds"}] → 200, 409 lease_lost.
func (s *Server) mqNak(w http.ResponseWriter, r *http.Request) {
	var b wire.MQNak
	if err := readOptionalJSON(w, r, s.cfg.MaxBodyBytes, &b); err != nil {
		s.writeErr(w, r, err)
		return
	}
	var delay time.Duration
	if given(b.DelaySeconds) {
		var err error
		if delay, err = secondsField("delay_seconds", b.DelaySeconds); err != nil {
			s.writeErr(w, r, err)
			return
		}
		if delay < 0 {
			s.writeErr(w, r, invalidField("delay_seconds", sprintf("must not be negative (got %s)", shorten(b.DelaySeconds))))
			return
		}
	}
	s.mqSettle(w, r, "nak", func(m *queue.Message) error { return m.Nak(r.Context(), delay) })
}

// mqTerm: POST …/term [{"reason"}] → 200, 409 lease_lost.
func (s *Server) mqTerm(w http.ResponseWriter, r *http.Request) {
	var b wire.MQTerm
	if err := readOptionalJSON(w, r, s.cfg.MaxBodyBytes, &b); err != nil {
		s.writeErr(w, r, err)
		return
	}
	reason := ""
	if b.Reason != nil {
		reason = *b.Reason
	}
	s.mqSettle(w, r, "term", func(m *queue.Message) error { return m.Term(r.Context(), reason) })
}

// mqSettle settles the request's lease with act and answers.
func (s *Server) mqSettle(w http.ResponseWriter, r *http.Request, what string, act func(*queue.Message) error) {
	m, err := s.mqLeased(r)
	if err == nil {
		err = act(m)
	}
	if err != nil {
		s.writeErr(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, wire.MQSettled{Token: r.PathValue("lease"), Settled: what})
}

// mqTopic: GET /api/v1/mq/{queue}/topics/{topic}[?group=] → 200 counts.
func (s *Server) mqTopic(w http.ResponseWriter, r *http.Request) {
	group, ok := s.mqGroup(w, r)
	if !ok {
		return
	}
	q, err := s.mq(r)
	if err != nil {
		s.writeErr(w, r, err)
		return
	}
	topic := r.PathValue("topic")
	st, err := q.Stats(r.Context(), topic, group)
	if err != nil {
		s.writeErr(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, wire.MQTopic{Topic: topic, Group: group, Queued: st.Queued, InFlight: st.InFlight, Delayed: st.Delayed})
}

// mqDead: GET /api/v1/mq/{queue}/dead[?limit=] → 200 the newest dead
// letters (limit 1-1000, 100 by default).
func (s *Server) mqDead(w http.ResponseWriter, r *http.Request) {
	limit := 100
	if v := r.URL.Query().Get("limit"); v != "" || r.URL.Query().Has("limit") {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 1000 {
			s.writeErr(w, r, invalidField("limit", sprintf("must be an integer from 1 to 1000 (got %q)", v)))
			return
		}
		limit = n
	}
	q, err := s.mq(r)
	if err != nil {
		s.writeErr(w, r, err)
		return
	}
	dead, err := q.DeadLetters(r.Context(), int64(limit))
	if err != nil {
		s.writeErr(w, r, err)
		return
	}
	out := wire.MQDeadList{Dead: make([]wire.MQDead, len(dead))}
	for i, d := range dead {
		dm := wire.MQDead{ID: d.ID, Topic: d.Topic, MessageID: d.MessageID, Key: d.Key, Deliveries: d.Deliveries, Reason: d.Reason}
		dm.Data, dm.DataBase64 = bodyOf(d.Data)
		out.Dead[i] = dm
	}
	writeJSON(w, http.StatusOK, out)
}

// mqGroup is a read's consumer group: ?group=, "dtq" when left out; an
// empty one is answered 400 (ok false).
func (s *Server) mqGroup(w http.ResponseWriter, r *http.Request) (group string, ok bool) {
	if !r.URL.Query().Has("group") {
		return "dtq", true
	}
	group = r.URL.Query().Get("group")
	if group == "" {
		s.writeErr(w, r, invalidField("group", `must not be empty (leave it out for "dtq")`))
		return "", false
	}
	return group, true
}
