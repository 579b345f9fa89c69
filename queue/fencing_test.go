package queue_test

import (
	"errors"
	"testing"
	"time"

	"github.com/dtq-dev/dtq/internal/keys"
	"github.com/dtq-dev/dtq/internal/redistest"
	"github.com/dtq-dev/dtq/queue"
)

// stolen sets up Docket bug 1/2's race: subscription slow holds a message
// whose visibility lapses (it renews only every 2s/4), and subscription fast
// (visibility 50ms) legitimately reclaims it.
func stolen(t *testing.T, e *env, q *queue.Queue) (slowMsg, fastMsg *queue.Message, slow, fast *queue.Subscription) {
	t.Helper()
	slow = e.subscribe(q, map[string]int{"a": 0}, &queue.SubscribeOpts{VisibilityTimeout: 2 * time.Second})
	e.put(q, "a", "x", &queue.PutOpts{Key: "k"})
	slowMsg = e.receive(slow, 5*time.Second)
	fast = e.subscribe(q, map[string]int{"a": 0}, &queue.SubscribeOpts{VisibilityTimeout: 50 * time.Millisecond})
	fastMsg = e.receive(fast, 5*time.Second)
	if fastMsg.Key != "k" || fastMsg.Deliveries != 2 {
		t.Fatalf("reclaimed key %q deliveries %d, want k delivered twice", fastMsg.Key, fastMsg.Deliveries)
	}
	return slowMsg, fastMsg, slow, fast
}

// Docket bug 1: a late ack after a reclaim is rejected and deletes nothing.
func TestLateAckAfterReclaimIsRejected(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		q := e.queue("q", nil)
		old, cur, _, _ := stolen(t, e, q)
		if err := old.Ack(t.Context()); !errors.Is(err, queue.ErrNotOwner) {
			t.Fatalf("late ack: %v, want ErrNotOwner", err)
		}
		if e.put(q, "a", "y", &queue.PutOpts{Key: "k"}) {
			t.Fatal("the rejected late ack freed key k while the reclaimed message is in flight")
		}
		e.ack(cur) // the legitimate holder still owns it
		if st, _ := q.Stats(t.Context(), "a", ""); st != (queue.TopicStats{}) {
			t.Fatalf("stats %+v, want empty", st)
		}
	})
}

// Docket bug 1: a late release never re-adds acknowledged work.
func TestLateReleaseNeverResurrectsAcknowledgedWork(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		q := e.queue("q", nil)
		old, cur, _, _ := stolen(t, e, q)
		e.ack(cur)
		if err := old.Release(t.Context(), "other", nil); !errors.Is(err, queue.ErrNotOwner) {
			t.Fatalf("late release: %v, want ErrNotOwner", err)
		}
		for _, topic := range []string{"a", "other"} {
			st, err := q.Stats(t.Context(), topic, "")
			if err != nil {
				t.Fatal(err)
			}
			if st != (queue.TopicStats{}) {
				t.Fatalf("topic %s after a late release of acked work: %+v, want empty", topic, st)
			}
		}
	})
}

// Docket bug 1: a late ack never clears the dedup record of a newer
// publication of the same key.
func TestLateAckKeepsDedupOfNewerPublication(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		q := e.queue("q", nil)
		old, cur, _, _ := stolen(t, e, q)
		e.ack(cur)
		if !e.put(q, "a", "newer", &queue.PutOpts{Key: "k"}) {
			t.Fatal("publishing k again after its ack: got false")
		}
		if err := old.Ack(t.Context()); !errors.Is(err, queue.ErrNotOwner) {
			t.Fatalf("late ack: %v, want ErrNotOwner", err)
		}
		if e.put(q, "a", "newest", &queue.PutOpts{Key: "k"}) {
			t.Fatal("the late ack cleared the dedup record of the newer publication of k")
		}
	})
}

// Docket bug 2: renewal — background or Extend — never takes a message back
// from the subscription that legitimately reclaimed it.
func TestRenewalNeverStealsBack(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		q := e.queue("q", nil)
		old, cur, slow, _ := stolen(t, e, q)
		queue.RenewNow(t.Context(), slow) // the old holder's background renewal pass
		if err := cur.Extend(t.Context()); err != nil {
			t.Fatalf("the old holder's renewal took the message back: extend by the new holder: %v", err)
		}
		if err := old.Extend(t.Context()); !errors.Is(err, queue.ErrNotOwner) {
			t.Fatalf("extend by the old holder: %v, want ErrNotOwner", err)
		}
		if err := cur.Extend(t.Context()); err != nil {
			t.Fatalf("the old holder's Extend took the message back: extend by the new holder: %v", err)
		}
		e.ack(cur)
	})
}

// The fence is the delivery, not just the consumer: when the entry is
// claimed again for the same consumer behind the subscription's back (its
// own reclaim pass instead takes the message over, see
// TestOwnReclaimKeepsTheHeldMessage), the older delivery can no longer
// settle it.
func TestFenceRejectsOlderDeliveryToSameSubscription(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		q := e.queue("q", nil)
		s := e.subscribe(q, map[string]int{"a": 0}, nil)
		e.put(q, "a", "x", &queue.PutOpts{Key: "k"})
		old := e.receive(s, 5*time.Second)
		// Redeliver the entry to the same consumer, as its reclaim would.
		stream := keys.NewQueue(e.Namespace, "q").Stream("a")
		c := e.Client
		if err := redistest.Do(t.Context(), c, "XCLAIM", stream, "dtq", queue.Consumer(s), "0", old.ID, "JUSTID").Error(); err != nil {
			t.Fatal(err)
		}
		if e.Name == "redis" { // Redis's JUSTID keeps the count; bump it as a real redelivery does
			if err := redistest.Do(t.Context(), c, "XCLAIM", stream, "dtq", queue.Consumer(s), "0", old.ID, "RETRYCOUNT", "2", "JUSTID").Error(); err != nil {
				t.Fatal(err)
			}
		}
		if err := old.Ack(t.Context()); !errors.Is(err, queue.ErrNotOwner) {
			t.Fatalf("ack by the older delivery: %v, want ErrNotOwner", err)
		}
		if st, _ := q.Stats(t.Context(), "a", ""); st.InFlight != 1 {
			t.Fatalf("stats %+v: the rejected ack changed the entry", st)
		}
	})
}

// A subscription whose renewals stop reaching Redis for longer than the
// visibility timeout while its reader still runs reclaims what it holds
// with its own reclaim pass. That happens when the process pauses (a loaded
// machine, a GC, a VM steal): on waking, the renewer's tick and the reader's
// reclaim pass are due at once, and the reader may run first. The entry
// never left the subscription: the message it handed out stays valid and
// is not delivered a second time. Here the renewer is stopped, so every
// reclaim pass finds the entry idle past the timeout.
func TestOwnReclaimKeepsTheHeldMessage(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		q := e.queue("q", nil)
		vis := 40 * time.Millisecond
		s := e.subscribe(q, map[string]int{"a": 0}, &queue.SubscribeOpts{VisibilityTimeout: vis})
		e.put(q, "a", "x", &queue.PutOpts{Key: "k"})
		m := e.receive(s, 5*time.Second)
		queue.StopRenewer(s)
		stream := keys.NewQueue(e.Namespace, "q").Stream("a")
		eventually(t, 5*time.Second, "the subscription's reclaim pass claims its own entry again", func() bool {
			return e.pendingOf(stream, m.ID).deliveries >= 3
		})
		if p := e.pendingOf(stream, m.ID); p.consumer != queue.Consumer(s) {
			t.Fatalf("entry pending to %q, want the subscription %q", p.consumer, queue.Consumer(s))
		}
		e.nothing(s, vis) // the message it holds is not delivered to it again
		e.ack(m)
		if st, _ := q.Stats(t.Context(), "a", ""); st != (queue.TopicStats{}) {
			t.Fatalf("stats after the ack: %+v, want all zero", st)
		}
	})
}
