package queue_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/dtq-dev/dtq/internal/keys"
	"github.com/dtq-dev/dtq/internal/redistest"
	"github.com/dtq-dev/dtq/queue"
)

// receiveKeys receives until every key in want has arrived, acking all.
func receiveKeys(t *testing.T, e *env, s *queue.Subscription, d time.Duration, want ...string) {
	t.Helper()
	left := map[string]bool{}
	for _, k := range want {
		left[k] = true
	}
	deadline := time.Now().Add(d)
	for len(left) > 0 {
		m := e.receive(s, time.Until(deadline))
		delete(left, m.Key)
		m.Ack(t.Context()) // may be ErrNotOwner for a stale duplicate
	}
}

// Docket bug 5: a destroyed consumer group is recreated and the
// subscription keeps delivering, including what it held at the time.
func TestGroupDestroyedUnderLiveSubscription(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		q := e.queue("q", nil)
		s := e.subscribe(q, map[string]int{"a": 0}, &queue.SubscribeOpts{VisibilityTimeout: 200 * time.Millisecond})
		e.put(q, "a", "held", &queue.PutOpts{Key: "held"})
		e.receive(s, 5*time.Second) // held, never settled
		stream := keys.NewQueue(e.Namespace, "q").Stream("a")
		c := e.Client
		if err := redistest.Do(t.Context(), c, "XGROUP", "DESTROY", stream, "dtq").Error(); err != nil {
			t.Fatal(err)
		}
		e.put(q, "a", "after", &queue.PutOpts{Key: "after"})
		receiveKeys(t, e, s, 10*time.Second, "after", "held")
	})
}

// Docket bug 5: the topic stream deleted (or expired) under a live
// subscription is recreated with its group.
func TestStreamDeletedUnderLiveSubscription(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		q := e.queue("q", nil)
		s := e.subscribe(q, map[string]int{"a": 0, "b": 1}, nil)
		e.put(q, "a", "first", &queue.PutOpts{Key: "first"})
		e.ack(e.receive(s, 5*time.Second))
		stream := keys.NewQueue(e.Namespace, "q").Stream("a")
		if err := redistest.Do(t.Context(), e.Client, "DEL", stream).Error(); err != nil {
			t.Fatal(err)
		}
		e.put(q, "a", "second", &queue.PutOpts{Key: "second"})
		receiveKeys(t, e, s, 10*time.Second, "second")
	})
}

// Docket parity 18: an error retrying cannot fix (a topic key of the wrong
// type) is reported by Receive, and the subscription recovers once it is
// fixed.
func TestReceiveReportsUnrecoverableErrors(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		q := e.queue("q", nil)
		stream := keys.NewQueue(e.Namespace, "q").Stream("a")
		c := e.Client
		if err := redistest.Do(t.Context(), c, "SET", stream, "not a stream").Error(); err != nil {
			t.Fatal(err)
		}
		s := e.subscribe(q, map[string]int{"a": 0}, nil)
		_, err := s.Receive(t.Context())
		if err == nil || !strings.Contains(err.Error(), "WRONGTYPE") {
			t.Fatalf("receive: %v, want a WRONGTYPE error", err)
		}
		if err := redistest.Do(t.Context(), c, "DEL", stream).Error(); err != nil {
			t.Fatal(err)
		}
		e.put(q, "a", "x", &queue.PutOpts{Key: "x"})
		receiveKeys(t, e, s, 10*time.Second, "x")
	})
}

// Docket bug 5: FLUSHALL under a live subscription and a waiting publisher.
func TestFlushAllUnderLiveSubscription(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t, nil)
	e := &env{Backend: &redistest.Backend{Name: "redis", Client: redistest.Client(t, srv), Namespace: "flush", Server: srv}, t: t}
	q := e.queue("q", nil)
	s := e.subscribe(q, map[string]int{"a": 0}, nil)
	e.put(q, "a", "x", &queue.PutOpts{Key: "x"})
	e.ack(e.receive(s, 5*time.Second))
	e.put(q, "b", "full", &queue.PutOpts{MaxSize: 1})
	done := make(chan error, 1)
	go func() {
		_, err := q.Put(t.Context(), "b", []byte("waiting"), &queue.PutOpts{MaxSize: 1})
		done <- err
	}()
	pending(t, done, 100*time.Millisecond, "put into a full topic")
	if err := redistest.Do(t.Context(), e.Client, "FLUSHALL").Error(); err != nil {
		t.Fatal(err)
	}
	waitDone(t, done, 5*time.Second, "waiting put after FLUSHALL emptied the topic")
	e.put(q, "a", "y", &queue.PutOpts{Key: "y"})
	receiveKeys(t, e, s, 10*time.Second, "y")
}

// Docket bug 7 and parity 16/19: Redis restarts (AOF on, so nothing
// acknowledged is lost). The subscription and a publisher waiting for room
// recover by themselves; a message held across the restart can still be
// acknowledged; nothing accepted is lost.
func TestRedisRestart(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t, &redistest.Options{AppendFsync: "always"})
	e := &env{Backend: &redistest.Backend{Name: "redis", Client: redistest.Client(t, srv), Namespace: "restart", Server: srv}, t: t}
	q := e.queue("q", nil)
	s := e.subscribe(q, map[string]int{"a": 0}, &queue.SubscribeOpts{VisibilityTimeout: 5 * time.Second})
	e.put(q, "a", "held", &queue.PutOpts{Key: "held"})
	held := e.receive(s, 5*time.Second)
	e.put(q, "a", "queued", &queue.PutOpts{Key: "queued"})
	e.put(q, "b", "blocker", &queue.PutOpts{Key: "blocker", MaxSize: 1})
	done := make(chan error, 1)
	go func() {
		ok, err := q.Put(t.Context(), "b", []byte("waiter"), &queue.PutOpts{Key: "waiter", MaxSize: 1})
		if err == nil && !ok {
			err = errors.New("put returned false")
		}
		done <- err
	}()
	pending(t, done, 100*time.Millisecond, "put into a full topic")

	if err := srv.Kill(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond) // the outage: subscription and publisher see errors
	if err := srv.Restart(); err != nil {
		t.Fatal(err)
	}

	eventually(t, 10*time.Second, "ack of a message held across the restart", func() bool {
		return held.Ack(t.Context()) == nil
	})
	receiveKeys(t, e, s, 10*time.Second, "queued")
	pending(t, done, 100*time.Millisecond, "put into a still-full topic")
	sb := e.subscribe(q, map[string]int{"b": 0}, nil)
	receiveKeys(t, e, sb, 10*time.Second, "blocker")
	waitDone(t, done, 10*time.Second, "waiting put after the restart and the blocker's ack")
	receiveKeys(t, e, sb, 10*time.Second, "waiter")
}

// Docket bug 6 and parity 15: a malformed entry is dead-lettered with a
// reason and counted, and the subscription keeps going.
func TestMalformedEntryIsDeadLettered(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		q := e.queue("q", nil)
		stream := keys.NewQueue(e.Namespace, "q").Stream("a")
		c := e.Client
		if err := redistest.Do(t.Context(), c, "XADD", stream, "*", "k", "no-data").Error(); err != nil {
			t.Fatal(err)
		}
		e.put(q, "a", "good", &queue.PutOpts{Key: "good"})
		s := e.subscribe(q, map[string]int{"a": 0}, nil)
		m := e.receive(s, 5*time.Second)
		if m.Key != "good" {
			t.Fatalf("got key %q, want good", m.Key)
		}
		e.ack(m)
		dead, err := q.DeadLetters(t.Context(), 10)
		if err != nil {
			t.Fatal(err)
		}
		if len(dead) != 1 || dead[0].Topic != "a" || !strings.Contains(dead[0].Reason, "malformed") {
			t.Fatalf("dead letters %+v, want one malformed entry of topic a", dead)
		}
		if n, err := q.Malformed(t.Context()); err != nil || n != 1 {
			t.Fatalf("malformed count %d (%v), want 1", n, err)
		}
		if st, _ := q.Stats(t.Context(), "a", ""); st != (queue.TopicStats{}) {
			t.Fatalf("stats %+v, want empty: the malformed entry must leave the stream", st)
		}
	})
}
