package queue_test

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/dtq-dev/dtq/internal/redisconn"
	"github.com/dtq-dev/dtq/internal/redistest"
	"github.com/dtq-dev/dtq/queue"
)

func TestMain(m *testing.M) { os.Exit(redistest.Main(m)) }

// env is one conformance-suite run: a backend and helpers bound to it.
type env struct {
	*redistest.Backend
	t *testing.T
}

func forEachBackend(t *testing.T, fn func(t *testing.T, e *env)) {
	t.Parallel()
	redistest.ForEachBackend(t, func(t *testing.T, b *redistest.Backend) {
		fn(t, &env{Backend: b, t: t})
	})
}

// queue returns a queue in the test's namespace.
func (e *env) queue(name string, cfg *queue.Config) *queue.Queue {
	e.t.Helper()
	var c queue.Config
	if cfg != nil {
		c = *cfg
	}
	c.Namespace = e.Namespace
	q, err := queue.New(redisconn.Wrap(e.Client), name, &c)
	if err != nil {
		e.t.Fatal(err)
	}
	return q
}

// subscribe starts a subscription closed at cleanup.
func (e *env) subscribe(q *queue.Queue, topics map[string]int, opts *queue.SubscribeOpts) *queue.Subscription {
	e.t.Helper()
	s, err := q.Subscribe(e.t.Context(), topics, opts)
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() { s.Close(context.Background()) })
	return s
}

func (e *env) put(q *queue.Queue, topic, data string, opts *queue.PutOpts) bool {
	e.t.Helper()
	ok, err := q.Put(e.t.Context(), topic, []byte(data), opts)
	if err != nil {
		e.t.Fatalf("put %s/%q: %v", topic, data, err)
	}
	return ok
}

// receive receives one message within d or fails the test.
func (e *env) receive(s *queue.Subscription, d time.Duration) *queue.Message {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(e.t.Context(), d)
	defer cancel()
	m, err := s.Receive(ctx)
	if err != nil {
		e.t.Fatalf("receive: %v", err)
	}
	return m
}

// nothing asserts that s delivers nothing within d.
func (e *env) nothing(s *queue.Subscription, d time.Duration) {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(e.t.Context(), d)
	defer cancel()
	m, err := s.Receive(ctx)
	if err == nil {
		e.t.Fatalf("received %s/%q (key %q), want nothing", m.Topic, m.Data, m.Key)
	}
	if err != context.DeadlineExceeded {
		e.t.Fatalf("receive: %v, want deadline exceeded", err)
	}
}

func (e *env) ack(m *queue.Message) {
	e.t.Helper()
	if err := m.Ack(e.t.Context()); err != nil {
		e.t.Fatalf("ack %s: %v", m.Key, err)
	}
}
