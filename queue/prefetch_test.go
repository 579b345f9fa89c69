package queue_test

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/dtq-dev/dtq/internal/keys"
	"github.com/dtq-dev/dtq/internal/redistest"
	"github.com/dtq-dev/dtq/queue"
)

func putN(t *testing.T, e *env, q *queue.Queue, topic string, n int) []string {
	t.Helper()
	var ks []string
	for i := range n {
		k := fmt.Sprintf("k%02d", i)
		e.put(q, topic, k, &queue.PutOpts{Key: k})
		ks = append(ks, k)
	}
	return ks
}

// Docket bug 3: prefetch is bounded by MaxInFlight and everything prefetched
// is renewed, so no message is delivered to two subscriptions at once.
func TestPrefetchIsBoundedAndRenewed(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		q := e.queue("q", nil)
		putN(t, e, q, "a", 20)
		vt := 100 * time.Millisecond
		a := e.subscribe(q, map[string]int{"a": 0}, &queue.SubscribeOpts{VisibilityTimeout: vt, MaxInFlight: 3})
		first := e.receive(a, 5*time.Second)
		eventually(t, 5*time.Second, "subscription a holds 3", func() bool {
			st, _ := q.Stats(t.Context(), "a", "")
			return st.InFlight == 3
		})

		b := e.subscribe(q, map[string]int{"a": 0}, &queue.SubscribeOpts{VisibilityTimeout: vt, MaxInFlight: 20})
		seen := map[string]bool{first.Key: true}
		for range 17 {
			m := e.receive(b, 5*time.Second)
			if seen[m.Key] {
				t.Fatalf("key %s delivered twice", m.Key)
			}
			seen[m.Key] = true
			e.ack(m)
		}
		e.nothing(b, 5*vt) // a's prefetched messages stay a's, though idle in a's buffer
		for range 2 {
			m := e.receive(a, time.Second)
			if seen[m.Key] || m.Deliveries != 1 {
				t.Fatalf("a's buffered message %s: seen before %v, deliveries %d", m.Key, seen[m.Key], m.Deliveries)
			}
			seen[m.Key] = true
			e.ack(m)
		}
		e.ack(first)
		if len(seen) != 20 {
			t.Fatalf("%d distinct keys delivered, want 20", len(seen))
		}
	})
}

// Docket bug 4: the reclaim scan keeps a cursor, so abandoned messages behind
// many live (renewed) ones are still reclaimed. Redis's XAUTOCLAIM scans at
// most 10×COUNT pending entries per call.
func TestReclaimReachesStaleMessagesBehindLiveOnes(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		q := e.queue("q", nil)
		ks := putN(t, e, q, "a", 15)
		live := e.subscribe(q, map[string]int{"a": 0}, &queue.SubscribeOpts{VisibilityTimeout: 40 * time.Millisecond, MaxInFlight: 12})
		eventually(t, 5*time.Second, "live subscription holds 12", func() bool {
			st, _ := q.Stats(t.Context(), "a", "")
			return st.InFlight == 12
		})
		// A dead process claimed the last 3 and vanished.
		stream := keys.NewQueue(e.Namespace, "q").Stream("a")
		c := e.Client
		if err := redistest.Do(t.Context(), c, "XREADGROUP", "GROUP", "dtq", "dead", "COUNT", "3", "STREAMS", stream, ">").Error(); err != nil {
			t.Fatal(err)
		}
		r := e.subscribe(q, map[string]int{"a": 0}, &queue.SubscribeOpts{VisibilityTimeout: 300 * time.Millisecond, MaxInFlight: 1})
		want := map[string]bool{ks[12]: true, ks[13]: true, ks[14]: true}
		deadline := time.Now().Add(10 * time.Second)
		for len(want) > 0 {
			ctx, cancel := context.WithDeadline(t.Context(), deadline)
			m, err := r.Receive(ctx)
			cancel()
			if err != nil {
				t.Fatalf("stale messages %v never reclaimed: %v", want, err)
			}
			delete(want, m.Key)
			e.ack(m)
		}
		_ = live
	})
}

// Docket bug 6: a message the application never settles does not block the
// subscription's other deliveries.
func TestUnsettledMessageDoesNotBlockOthers(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		q := e.queue("q", nil)
		s := e.subscribe(q, map[string]int{"a": 0}, &queue.SubscribeOpts{MaxInFlight: 2})
		e.put(q, "a", "forgotten", nil)
		e.receive(s, 5*time.Second) // never settled
		for i := range 10 {
			e.put(q, "a", fmt.Sprint(i), nil)
			e.ack(e.receive(s, 5*time.Second))
		}
	})
}

// Docket parity 11: one subscription uses the same, constant number of
// goroutines for 25 topics as for one, and receives from all of them.
// Not parallel: it counts the package's goroutines.
func TestManyTopicsUseConstantGoroutines(t *testing.T) {
	redistest.ForEachBackendSerial(t, func(t *testing.T, b *redistest.Backend) {
		e := &env{Backend: b, t: t}
		q := e.queue("q", nil)
		count := func(topics int) int {
			set := map[string]int{}
			for i := range topics {
				topic := fmt.Sprintf("t%02d", i)
				set[topic] = 0
				e.put(q, topic, topic, nil)
			}
			s, err := q.Subscribe(t.Context(), set, nil)
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]bool{}
			for range topics {
				m := e.receive(s, 5*time.Second)
				got[m.Topic] = true
				e.ack(m)
			}
			if len(got) != topics {
				t.Fatalf("received from %d topics, want %d", len(got), topics)
			}
			n := queueGoroutines()
			s.Close(t.Context())
			return n
		}
		one, many := count(1), count(25)
		if one != many || one != 2 {
			t.Fatalf("goroutines in package queue: %d for 1 topic, %d for 25; want 2 for both", one, many)
		}
	})
}

// queueGoroutines counts goroutines running code of package queue.
func queueGoroutines() int {
	buf := make([]byte, 1<<20)
	buf = buf[:runtime.Stack(buf, true)]
	n := 0
	for _, g := range strings.Split(string(buf), "\n\n") {
		if strings.Contains(g, "github.com/dtq-dev/dtq/queue.(*") {
			n++
		}
	}
	return n
}
