package queue_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/dtq-dev/dtq/internal/redisconn"
	"github.com/dtq-dev/dtq/internal/redistest"
	"github.com/dtq-dev/dtq/queue"
)

// The queue's core cases on Redis Cluster and on Sentinel: keyed puts
// (dedup), priority across topics, delayed redelivery and acknowledgement,
// on queues spread over several slots.
func TestTopologyCore(t *testing.T) {
	t.Parallel()
	for name, url := range map[string]func(t *testing.T) string{
		"cluster":  func(t *testing.T) string { return redistest.StartCluster(t, 3, 0).URL() },
		"sentinel": func(t *testing.T) string { return redistest.StartSentinels(t, 1, 3).URL() },
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
			defer cancel()
			rc, err := redisconn.Connect(ctx, url(t))
			if err != nil {
				t.Fatal(err)
			}
			defer rc.Close()
			e := &env{Backend: &redistest.Backend{Name: name, Client: rc, Namespace: redistest.Namespace(t)}, t: t}
			for _, qn := range []string{"orders", "emails", "reports"} { // different slots
				q := e.queue(qn, nil)
				if !e.put(q, "low", "a", &queue.PutOpts{Key: "k1"}) || e.put(q, "high", "dup", &queue.PutOpts{Key: "k1"}) {
					t.Fatalf("%s: keyed put: first not accepted or duplicate accepted", qn)
				}
				e.put(q, "high", "b", nil)
				s := e.subscribe(q, map[string]int{"high": 0, "low": 1}, nil)
				if m := e.receive(s, 10*time.Second); string(m.Data) != "b" {
					t.Fatalf("%s: first message %q, want the high-priority one", qn, m.Data)
				} else if err := m.Ack(ctx); err != nil {
					t.Fatal(err)
				}
				m := e.receive(s, 10*time.Second)
				if err := m.Nak(ctx, 100*time.Millisecond); err != nil {
					t.Fatal(err)
				}
				m = e.receive(s, 10*time.Second)
				if string(m.Data) != "a" || m.Deliveries != 2 {
					t.Fatalf("%s: redelivered %q after %d deliveries", qn, m.Data, m.Deliveries)
				}
				if err := m.Ack(ctx); err != nil {
					t.Fatal(fmt.Errorf("%s: ack: %w", qn, err))
				}
				e.nothing(s, 200*time.Millisecond)
			}
		})
	}
}
