package queue_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dtq-dev/dtq/queue"
)

// Nak with no delay hands the message back at its place: another
// subscription (whose visibility timeout is far away) gets it at once.
func TestNakHandsBackImmediately(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		q := e.queue("q", nil)
		long := &queue.SubscribeOpts{VisibilityTimeout: time.Hour}
		a := e.subscribe(q, map[string]int{"a": 0}, long)
		e.put(q, "a", "x", &queue.PutOpts{Key: "k"})
		m := e.receive(a, 5*time.Second)
		b := e.subscribe(q, map[string]int{"a": 0}, long)
		if err := m.Nak(t.Context(), 0); err != nil {
			t.Fatal(err)
		}
		// Either subscription may win the hand-back; both wait on the same wake.
		ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
		defer cancel()
		got := make(chan *queue.Message, 2)
		for _, s := range []*queue.Subscription{a, b} {
			go func() {
				if m, err := s.Receive(ctx); err == nil {
					got <- m
				}
			}()
		}
		select {
		case r := <-got:
			if r.Key != "k" || r.Deliveries != 2 || r.ID != m.ID {
				t.Fatalf("redelivered key %q deliveries %d id %s; want k, 2, %s", r.Key, r.Deliveries, r.ID, m.ID)
			}
			e.ack(r)
		case <-ctx.Done():
			t.Fatal("nak'd message not redelivered within 5s with a 1h visibility timeout")
		}
	})
}

// Nak with a delay parks the message and delivers it again once due.
func TestNakWithDelayRedeliversWhenDue(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		q := e.queue("q", nil)
		s := e.subscribe(q, map[string]int{"a": 0}, nil)
		e.put(q, "a", "x", &queue.PutOpts{Key: "k"})
		m := e.receive(s, 5*time.Second)
		if err := m.Nak(t.Context(), 300*time.Millisecond); err != nil {
			t.Fatal(err)
		}
		st, err := q.Stats(t.Context(), "a", "")
		if err != nil || st.Delayed != 1 || st.InFlight != 0 {
			t.Fatalf("stats after nak %+v (%v), want 1 delayed", st, err)
		}
		if e.put(q, "a", "y", &queue.PutOpts{Key: "k"}) {
			t.Fatal("key of a delayed message could be published again")
		}
		start := time.Now()
		r := e.receive(s, 5*time.Second)
		if waited := time.Since(start); waited < 250*time.Millisecond {
			t.Fatalf("redelivered after %v, before the 300ms delay", waited)
		}
		if r.Key != "k" || r.Deliveries != 2 || string(r.Data) != "x" {
			t.Fatalf("got key %q data %q deliveries %d, want k x 2", r.Key, r.Data, r.Deliveries)
		}
		e.ack(r)
	})
}

// Put with a delay delivers the message once due, and counts it against
// MaxSize meanwhile.
func TestDelayedPut(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		q := e.queue("q", nil)
		s := e.subscribe(q, map[string]int{"a": 0}, nil)
		start := time.Now()
		e.put(q, "a", "later", &queue.PutOpts{Key: "k", Delay: 300 * time.Millisecond, MaxSize: 1})
		ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
		defer cancel()
		if ok, err := q.Put(ctx, "a", []byte("now"), &queue.PutOpts{MaxSize: 1}); ok || err == nil {
			t.Fatalf("put into a topic full of a delayed message: %v, %v; want it to wait", ok, err)
		}
		m := e.receive(s, 5*time.Second)
		if waited := time.Since(start); waited < 250*time.Millisecond {
			t.Fatalf("delivered after %v, before the 300ms delay", waited)
		}
		if m.Key != "k" || m.Deliveries != 1 {
			t.Fatalf("got key %q deliveries %d", m.Key, m.Deliveries)
		}
		e.ack(m)
	})
}

// Term moves a message to the dead-letter stream with its reason.
func TestTermDeadLetters(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		q := e.queue("q", nil)
		s := e.subscribe(q, map[string]int{"a": 0}, nil)
		e.put(q, "a", "poison", &queue.PutOpts{Key: "k"})
		m := e.receive(s, 5*time.Second)
		if err := m.Term(t.Context(), "cannot parse"); err != nil {
			t.Fatal(err)
		}
		dead, err := q.DeadLetters(t.Context(), 10)
		if err != nil {
			t.Fatal(err)
		}
		if len(dead) != 1 || dead[0].Key != "k" || string(dead[0].Data) != "poison" ||
			dead[0].Reason != "cannot parse" || dead[0].Deliveries != 1 || dead[0].MessageID != m.ID {
			t.Fatalf("dead letters %+v", dead)
		}
		if st, _ := q.Stats(t.Context(), "a", ""); st != (queue.TopicStats{}) {
			t.Fatalf("stats %+v, want empty", st)
		}
		if !e.put(q, "a", "again", &queue.PutOpts{Key: "k"}) {
			t.Fatal("key of a terminated message stays blocked")
		}
	})
}

// Close hands back everything held, received or only fetched, at once.
func TestCloseHandsBackHeldMessagesAtOnce(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		q := e.queue("q", nil)
		long := &queue.SubscribeOpts{VisibilityTimeout: time.Hour, MaxInFlight: 5}
		ks := putN(t, e, q, "a", 5)
		a, err := q.Subscribe(t.Context(), map[string]int{"a": 0}, long)
		if err != nil {
			t.Fatal(err)
		}
		got := e.receive(a, 5*time.Second) // 1 received, 4 fetched
		eventually(t, 5*time.Second, "a holds 5", func() bool {
			st, _ := q.Stats(t.Context(), "a", "")
			return st.InFlight == 5
		})
		if err := a.Close(t.Context()); err != nil {
			t.Fatal(err)
		}
		b := e.subscribe(q, map[string]int{"a": 0}, long)
		receiveKeys(t, e, b, 5*time.Second, ks...)
		if err := got.Ack(t.Context()); !errors.Is(err, queue.ErrNotOwner) {
			t.Fatalf("ack after close and someone else's ack: %v, want ErrNotOwner", err)
		}
	})
}

// Drain hands back what was fetched but not received, and waits for the
// received messages to be settled.
func TestDrainWaitsForReceivedMessages(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		q := e.queue("q", nil)
		long := &queue.SubscribeOpts{VisibilityTimeout: time.Hour, MaxInFlight: 3}
		putN(t, e, q, "a", 3)
		a, err := q.Subscribe(t.Context(), map[string]int{"a": 0}, long)
		if err != nil {
			t.Fatal(err)
		}
		m := e.receive(a, 5*time.Second)
		eventually(t, 5*time.Second, "a holds 3", func() bool {
			st, _ := q.Stats(t.Context(), "a", "")
			return st.InFlight == 3
		})
		done := make(chan error, 1)
		go func() { done <- a.Drain(t.Context()) }()
		b := e.subscribe(q, map[string]int{"a": 0}, long)
		e.ack(e.receive(b, 5*time.Second)) // the 2 handed back
		e.ack(e.receive(b, 5*time.Second))
		pending(t, done, 100*time.Millisecond, "drain with a received message unsettled")
		e.ack(m)
		waitDone(t, done, 5*time.Second, "drain after the last ack")
		if st, _ := q.Stats(t.Context(), "a", ""); st != (queue.TopicStats{}) {
			t.Fatalf("stats %+v, want empty", st)
		}
	})
}

// Consume acks on success and hands back on error or panic.
func TestConsume(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		q := e.queue("q", nil)
		s := e.subscribe(q, map[string]int{"a": 0}, nil)
		putN(t, e, q, "a", 10)
		var done atomic.Int32
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		result := make(chan error, 1)
		go func() {
			result <- s.Consume(ctx, func(ctx context.Context, m *queue.Message) error {
				switch {
				case m.Key == "k03" && m.Deliveries == 1:
					return errors.New("transient")
				case m.Key == "k07" && m.Deliveries == 1:
					panic("boom")
				}
				if done.Add(1) == 10 {
					cancel()
				}
				return nil
			})
		}()
		select {
		case err := <-result:
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("consume returned %v, want context.Canceled", err)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("consume handled %d of 10 messages in 10s", done.Load())
		}
		eventually(t, 5*time.Second, "everything acked", func() bool {
			st, _ := q.Stats(t.Context(), "a", "")
			return st == queue.TopicStats{}
		})
	})
}

// A received message handed back by Close can still be acknowledged while
// nobody has claimed it, and then it is not delivered again.
func TestAckAfterCloseWhenUnclaimed(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		q := e.queue("q", nil)
		a, err := q.Subscribe(t.Context(), map[string]int{"a": 0}, nil)
		if err != nil {
			t.Fatal(err)
		}
		e.put(q, "a", "x", &queue.PutOpts{Key: "k"})
		m := e.receive(a, 5*time.Second)
		if err := a.Close(t.Context()); err != nil {
			t.Fatal(err)
		}
		if err := m.Ack(t.Context()); err != nil {
			t.Fatalf("ack after close, unclaimed: %v", err)
		}
		if st, _ := q.Stats(t.Context(), "a", ""); st != (queue.TopicStats{}) {
			t.Fatalf("stats %+v, want empty", st)
		}
	})
}
