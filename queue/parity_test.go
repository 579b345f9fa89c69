package queue_test

import (
	"testing"
	"time"

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
