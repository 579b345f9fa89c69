package queue_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/dtq-dev/dtq/internal/keys"
	"github.com/dtq-dev/dtq/queue"
)

// Docket parity 1: FIFO, key deduplication, and re-publication after ack.
func TestRoundTripIsFIFOAndIdempotent(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		q := e.queue("orders", nil)
		if !e.put(q, "scheduled", "1", &queue.PutOpts{Key: "one"}) {
			t.Fatal("first put of key one: got false")
		}
		if e.put(q, "scheduled", "dup", &queue.PutOpts{Key: "one"}) {
			t.Fatal("duplicate put of key one: got true")
		}
		if !e.put(q, "scheduled", "2", &queue.PutOpts{Key: "two"}) {
			t.Fatal("put of key two: got false")
		}
		s := e.subscribe(q, map[string]int{"scheduled": 0}, nil)
		for _, want := range []struct{ key, data string }{{"one", "1"}, {"two", "2"}} {
			m := e.receive(s, 5*time.Second)
			if m.Key != want.key || string(m.Data) != want.data || m.Topic != "scheduled" {
				t.Fatalf("got %s/%q key %q, want scheduled/%q key %q", m.Topic, m.Data, m.Key, want.data, want.key)
			}
			if m.Deliveries != 1 {
				t.Fatalf("deliveries = %d, want 1", m.Deliveries)
			}
			e.ack(m)
		}
		if !e.put(q, "scheduled", "again", &queue.PutOpts{Key: "one"}) {
			t.Fatal("put of key one after its ack: got false")
		}
	})
}

// Docket parity 2: Receive with no deadline returns a message with a random key.
func TestReceiveWithoutTimeout(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		q := e.queue("q", nil)
		s := e.subscribe(q, map[string]int{"a": 0}, nil)
		e.put(q, "a", "hello", nil)
		m, err := s.Receive(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		if string(m.Data) != "hello" || m.Key == "" {
			t.Fatalf("got %q key %q, want hello with a random key", m.Data, m.Key)
		}
		e.ack(m)
	})
}

// Docket parity 3: an acknowledgement tombstone rejects re-publication of
// the key until it expires; acking twice is harmless.
func TestAckTombstoneDeduplicatesRepairs(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		q := e.queue("q", &queue.Config{AckTombstoneTTL: 300 * time.Millisecond})
		s := e.subscribe(q, map[string]int{"a": 0}, nil)
		e.put(q, "a", "x", &queue.PutOpts{Key: "k"})
		m := e.receive(s, 5*time.Second)
		e.ack(m)
		e.ack(m)
		if e.put(q, "a", "x", &queue.PutOpts{Key: "k"}) {
			t.Fatal("re-put inside the tombstone window: got true")
		}
		if e.put(q, "b", "x", &queue.PutOpts{Key: "k"}) {
			t.Fatal("re-put to another topic inside the tombstone window: got true")
		}
		eventually(t, 5*time.Second, "re-put after the tombstone expired", func() bool {
			return e.put(q, "a", "x", &queue.PutOpts{Key: "k"})
		})
	})
}

// Docket parity 4: a bounded put waits until an ack frees room.
func TestBoundedPutWaitsForAcknowledgement(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		q := e.queue("q", nil)
		e.put(q, "a", "first", &queue.PutOpts{MaxSize: 1})
		done := make(chan error, 1)
		go func() {
			ok, err := q.Put(t.Context(), "a", []byte("second"), &queue.PutOpts{MaxSize: 1})
			if err == nil && !ok {
				err = errors.New("put returned false")
			}
			done <- err
		}()
		pending(t, done, 100*time.Millisecond, "second bounded put")
		s := e.subscribe(q, map[string]int{"a": 0}, &queue.SubscribeOpts{MaxInFlight: 1})
		first := e.receive(s, 5*time.Second)
		pending(t, done, 50*time.Millisecond, "second bounded put while the first is in flight")
		e.ack(first)
		waitDone(t, done, 5*time.Second, "second bounded put after the ack")
		if m := e.receive(s, 5*time.Second); string(m.Data) != "second" {
			t.Fatalf("got %q, want second", m.Data)
		}
	})
}

// Docket parity 5: release moves a message to another (priority) topic.
func TestReleaseMovesMessageToPriorityTopic(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		q := e.queue("q", nil)
		s := e.subscribe(q, map[string]int{"retry": 0, "scheduled": 1}, nil)
		e.put(q, "scheduled", "job", &queue.PutOpts{Key: "k"})
		m := e.receive(s, 5*time.Second)
		if m.Topic != "scheduled" {
			t.Fatalf("topic %q, want scheduled", m.Topic)
		}
		if err := m.Release(t.Context(), "retry", &queue.ReleaseOpts{MaxSize: 1}); err != nil {
			t.Fatal(err)
		}
		r := e.receive(s, 5*time.Second)
		if r.Key != "k" || r.Topic != "retry" || string(r.Data) != "job" {
			t.Fatalf("got %s/%q key %q, want retry/job key k", r.Topic, r.Data, r.Key)
		}
		if r.Deliveries != 2 {
			t.Fatalf("deliveries after release = %d, want 2", r.Deliveries)
		}
		e.ack(r)
	})
}

// Docket parity 6: a bounded release waits for room in its destination and
// keeps the message owned meanwhile.
func TestBoundedReleaseWaitsForDestinationCapacity(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		q := e.queue("q", nil)
		e.put(q, "retry", "blocker", &queue.PutOpts{Key: "blocker"})
		e.put(q, "scheduled", "job", &queue.PutOpts{Key: "job"})
		src := e.subscribe(q, map[string]int{"scheduled": 0}, &queue.SubscribeOpts{VisibilityTimeout: 200 * time.Millisecond})
		m := e.receive(src, 5*time.Second)
		done := make(chan error, 1)
		go func() { done <- m.Release(t.Context(), "retry", &queue.ReleaseOpts{MaxSize: 1}) }()
		pending(t, done, 400*time.Millisecond, "release into a full topic") // past 2 visibility timeouts: still owned
		dst := e.subscribe(q, map[string]int{"retry": 0}, nil)
		b := e.receive(dst, 5*time.Second)
		if b.Key != "blocker" {
			t.Fatalf("got key %q, want blocker", b.Key)
		}
		e.ack(b)
		waitDone(t, done, 5*time.Second, "release after the blocker's ack")
		r := e.receive(dst, 5*time.Second)
		if r.Key != "job" || r.Topic != "retry" {
			t.Fatalf("got %s key %q, want retry key job", r.Topic, r.Key)
		}
		e.ack(r)
	})
}

// Docket parity 7: a bounded release to the message's own full topic does
// not deadlock.
func TestBoundedReleaseToSameTopicDoesNotDeadlock(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		q := e.queue("q", nil)
		e.put(q, "a", "x", &queue.PutOpts{Key: "k", MaxSize: 1})
		s := e.subscribe(q, map[string]int{"a": 0}, nil)
		m := e.receive(s, 5*time.Second)
		ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
		defer cancel()
		if err := m.Release(ctx, "a", &queue.ReleaseOpts{MaxSize: 1}); err != nil {
			t.Fatalf("same-topic release at capacity: %v", err)
		}
		r := e.receive(s, 5*time.Second)
		if r.Key != "k" {
			t.Fatalf("got key %q, want k", r.Key)
		}
		e.ack(r)
	})
}

// Docket parity 8: a message held by a subscriber that died is reclaimed by
// another after the visibility timeout.
func TestUnacknowledgedMessageIsReclaimedAfterVisibilityTimeout(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		q := e.queue("q", nil)
		e.put(q, "a", "x", &queue.PutOpts{Key: "k"})
		crash(t, e, q, "a", 1)
		s := e.subscribe(q, map[string]int{"a": 0}, &queue.SubscribeOpts{VisibilityTimeout: 100 * time.Millisecond})
		m := e.receive(s, 5*time.Second)
		if m.Key != "k" || m.Deliveries != 2 {
			t.Fatalf("got key %q deliveries %d, want k delivered twice", m.Key, m.Deliveries)
		}
		e.ack(m)
	})
}

// Docket parity 9: a live subscription renews what it holds, so nobody else
// gets it even long after the visibility timeout. Observed in Redis, on
// its clock: for 8 visibility timeouts the entry stays pending to the
// holder and its idle time keeps being reset (a reclaim pass takes only
// entries idle for the timeout), and the holder can still ack it.
//
// No competing subscription races the renewals: a pause of this process
// longer than 3/4 of the 60 ms timeout, which a loaded machine makes, would
// let it reclaim the message as §2.3.3 allows (parity 8 tests that). The
// holder's own reader runs a reclaim pass every 15 ms all along, and after
// such a pause keeps the message (TestOwnReclaimKeepsTheHeldMessage).
func TestVisibilityIsRenewedWhileSubscriptionIsActive(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		q := e.queue("q", nil)
		vis := 60 * time.Millisecond
		holder := e.subscribe(q, map[string]int{"a": 0}, &queue.SubscribeOpts{VisibilityTimeout: vis})
		e.put(q, "a", "x", &queue.PutOpts{Key: "k"})
		m := e.receive(holder, 5*time.Second)
		stream := keys.NewQueue(e.Namespace, "q").Stream("a")
		start, renewals, last := e.redisNow(), 0, time.Duration(-1)
		eventually(t, 30*time.Second, "8 visibility timeouts (Redis clock) with renewals", func() bool {
			p := e.pendingOf(stream, m.ID)
			if p.consumer != queue.Consumer(holder) {
				t.Fatalf("entry pending to %q, want the holder %q", p.consumer, queue.Consumer(holder))
			}
			if p.idle < last {
				renewals++
			}
			last = p.idle
			return renewals >= 8 && e.redisNow().Sub(start) >= 8*vis
		})
		e.nothing(holder, time.Millisecond) // not delivered to the holder twice either
		e.ack(m)
	})
}

// Docket parity 10: subscriptions only receive their topics.
func TestTopicsRouteMessagesToMatchingSubscriptions(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		q := e.queue("q", nil)
		alpha := e.subscribe(q, map[string]int{"alpha": 0}, nil)
		beta := e.subscribe(q, map[string]int{"beta": 0}, nil)
		e.put(q, "alpha", "a", nil)
		m := e.receive(alpha, 5*time.Second)
		if m.Topic != "alpha" {
			t.Fatalf("topic %q, want alpha", m.Topic)
		}
		e.nothing(beta, 200*time.Millisecond)
		e.ack(m)
	})
}

// Docket parity 12: lower priority numbers are delivered first.
func TestLowerPriorityNumberIsDeliveredFirst(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		q := e.queue("q", nil)
		e.put(q, "scheduled", "s", nil)
		e.put(q, "retry", "r", nil)
		s := e.subscribe(q, map[string]int{"retry": 0, "scheduled": 1}, nil)
		first := e.receive(s, 5*time.Second)
		second := e.receive(s, 5*time.Second)
		if first.Topic != "retry" || second.Topic != "scheduled" {
			t.Fatalf("order %s, %s; want retry, scheduled", first.Topic, second.Topic)
		}
		e.ack(first)
		e.ack(second)
	})
}

// Docket parity 14: release validates its options, and acting on a settled
// message is a no-op.
func TestMessageValidatesReleaseAndSettlement(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		q := e.queue("q", nil)
		e.put(q, "alpha", "x", nil)
		s := e.subscribe(q, map[string]int{"alpha": 0}, nil)
		m := e.receive(s, 5*time.Second)
		err := m.Release(t.Context(), "alpha", &queue.ReleaseOpts{MaxSize: -1})
		wantInvalid(t, err, "ReleaseOpts.MaxSize")
		e.ack(m)
		for name, act := range map[string]func() error{
			"ack":     func() error { return m.Ack(t.Context()) },
			"release": func() error { return m.Release(t.Context(), "alpha", nil) },
			"nak":     func() error { return m.Nak(t.Context(), 0) },
			"term":    func() error { return m.Term(t.Context(), "x") },
			"extend":  func() error { return m.Extend(t.Context()) },
		} {
			if err := act(); err != nil {
				t.Errorf("%s after ack: %v, want nil", name, err)
			}
		}
		st, err := q.Stats(t.Context(), "alpha", "")
		if err != nil {
			t.Fatal(err)
		}
		if st != (queue.TopicStats{}) {
			t.Fatalf("stats after ack and no-op settlements: %+v, want all zero", st)
		}
	})
}

// Docket parity 20: a closed subscription says so, and closing twice is fine.
func TestClosedSubscriptionReportsClosed(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		q := e.queue("q", nil)
		s := e.subscribe(q, map[string]int{"a": 0}, nil)
		if err := s.Close(t.Context()); err != nil {
			t.Fatal(err)
		}
		if err := s.Close(t.Context()); err != nil {
			t.Fatalf("second close: %v", err)
		}
		if _, err := s.Receive(t.Context()); !errors.Is(err, queue.ErrClosed) {
			t.Fatalf("receive after close: %v, want ErrClosed", err)
		}
	})
}
