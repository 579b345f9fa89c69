package api_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/dtq-dev/dtq/internal/redisconn"
	"github.com/dtq-dev/dtq/queue"
)

// mqLease leases from the HTTP API and returns the leases.
func (e *env) mqLease(body string) []map[string]any {
	e.t.Helper()
	r := e.must(http.StatusOK, "POST", "/api/v1/mq/jobs/leases", body)
	var out []map[string]any
	for _, l := range r.body["leases"].([]any) {
		out = append(out, l.(map[string]any))
	}
	return out
}

// Messages put over HTTP reach a Go subscription, messages a Go publisher
// puts are leased over HTTP, and the two compete in one consumer group: a
// lease its holder stops extending is taken over by the subscription, and
// the holder's late ack changes nothing.
func TestMessageQueueOverHTTP(t *testing.T) {
	forEachBackend(t, &opts{noWorker: true}, func(t *testing.T, e *env) {
		q, err := queue.New(redisconn.Wrap(e.b.Client), "jobs", &queue.Config{Namespace: e.b.Namespace})
		if err != nil {
			t.Fatal(err)
		}
		ctx := t.Context()
		e.must(http.StatusCreated, "POST", "/api/v1/mq/jobs/topics/a/messages", `{"data":"from http","key":"h-1"}`)
		sub, err := q.Subscribe(ctx, map[string]int{"a": 0}, &queue.SubscribeOpts{VisibilityTimeout: 200 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		defer sub.Close(context.Background())
		rctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		m, err := sub.Receive(rctx)
		cancel()
		if err != nil || string(m.Data) != "from http" || m.Key != "h-1" {
			t.Fatalf("the subscription received %v (%v), want the message put over HTTP", m, err)
		}
		if err := m.Ack(ctx); err != nil {
			t.Fatal(err)
		}

		// A message of a Go publisher, leased over HTTP with bytes that are
		// not UTF-8, and left to lapse.
		if _, err := q.Put(ctx, "b", []byte{0xff, 0x00}, &queue.PutOpts{Key: "g-1"}); err != nil {
			t.Fatal(err)
		}
		ls := e.mqLease(`{"worker":"node-1","topics":["b"],"lease_seconds":0.2}`)
		if len(ls) != 1 || ls[0]["data_base64"] != "/wA=" || ls[0]["data"] != nil || ls[0]["key"] != "g-1" {
			t.Fatalf("leased %v, want g-1's two bytes as base64 only", ls)
		}
		stale := ls[0]["lease"].(string)
		other, err := q.Subscribe(ctx, map[string]int{"b": 0}, &queue.SubscribeOpts{VisibilityTimeout: 200 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		defer other.Close(context.Background())
		rctx, cancel = context.WithTimeout(ctx, 5*time.Second)
		taken, err := other.Receive(rctx)
		cancel()
		if err != nil || taken.Key != "g-1" || taken.Deliveries != 2 {
			t.Fatalf("the subscription took over %v (%v), want g-1 delivered a second time", taken, err)
		}
		r := e.must(http.StatusConflict, "POST", "/api/v1/mq/jobs/leases/"+stale+"/ack", "")
		if r.errCode() != "lease_lost" {
			t.Fatalf("a late ack: %s", r.raw)
		}
		if ok, _ := q.Put(ctx, "b", []byte("again"), &queue.PutOpts{Key: "g-1"}); ok {
			t.Fatal("the refused late ack freed key g-1 while the subscription holds it")
		}
		if err := taken.Ack(ctx); err != nil {
			t.Fatalf("the subscription's ack: %v", err)
		}
		r = e.must(http.StatusOK, "GET", "/api/v1/mq/jobs/topics/b", "")
		if r.body["queued"] != 0.0 || r.body["in_flight"] != 0.0 || r.body["delayed"] != 0.0 {
			t.Fatalf("topic b after the ack: %s", r.raw)
		}
	})
}
