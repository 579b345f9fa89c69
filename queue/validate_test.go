package queue_test

import (
	"strings"
	"testing"
	"time"

	"github.com/dtq-dev/dtq/internal/redisconn"
	"github.com/dtq-dev/dtq/internal/redistest"
	"github.com/dtq-dev/dtq/queue"
)

// Docket parity 13: bad configuration and arguments are errors that name the
// field, returned before any I/O.
func TestValidation(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) { validation(t, e) })
}

func validation(t *testing.T, e *env) {
	client := e.Client
	q := e.queue("q", nil)
	ctx := t.Context()
	put := func(topic string, data []byte, o *queue.PutOpts) error {
		_, err := q.Put(ctx, topic, data, o)
		return err
	}
	sub := func(topics map[string]int, o *queue.SubscribeOpts) error {
		s, err := q.Subscribe(ctx, topics, o)
		if err == nil {
			s.Close(ctx)
		}
		return err
	}
	newQ := func(name string, c *queue.Config) error {
		if c != nil && c.Namespace == "" {
			c.Namespace = e.Namespace
		}
		_, err := queue.New(redisconn.Wrap(client), name, c)
		return err
	}
	cases := []struct {
		field string
		err   error
	}{
		{"Config.AckTombstoneTTL", newQ("q", &queue.Config{AckTombstoneTTL: -time.Second})},
		{"Config.Namespace", newQ("q", &queue.Config{Namespace: "a{b}"})},
		{"Config.MaxMessageBytes", newQ("q", &queue.Config{MaxMessageBytes: -1})},
		{"Config.DeadLetterMaxLen", newQ("q", &queue.Config{DeadLetterMaxLen: -1})},
		{"name", newQ("has space", nil)},
		{"name", newQ("", nil)},
		{"name", newQ("..", nil)}, // not only dots: a step of a URL path, not a name
		{"Config.Namespace", newQ("q", &queue.Config{Namespace: "."})},
		{"client", func() error { _, err := queue.New(nil, "q", nil); return err }()},
		{"PutOpts.MaxSize", put("a", nil, &queue.PutOpts{MaxSize: -1})},
		{"PutOpts.Delay", put("a", nil, &queue.PutOpts{Delay: -time.Second})},
		{"PutOpts.Key", put("a", nil, &queue.PutOpts{Key: strings.Repeat("k", queue.MaxKeyBytes+1)})},
		{"PutOpts.Key", put("a", nil, &queue.PutOpts{Key: "\xff"})},
		{"topic", put("a:b", nil, nil)},
		{"topic", put("{a}", nil, nil)},
		{"topic", put("..", nil, nil)},
		{"data", put("a", make([]byte, 1<<20+1), nil)},
		{"topics", sub(nil, nil)},
		{"topics", sub(map[string]int{"bad topic": 0}, nil)},
		{"SubscribeOpts.VisibilityTimeout", sub(map[string]int{"a": 0}, &queue.SubscribeOpts{VisibilityTimeout: -1})},
		{"SubscribeOpts.VisibilityTimeout", sub(map[string]int{"a": 0}, &queue.SubscribeOpts{VisibilityTimeout: time.Millisecond})},
		{"SubscribeOpts.MaxInFlight", sub(map[string]int{"a": 0}, &queue.SubscribeOpts{MaxInFlight: -1})},
		{"SubscribeOpts.Group", sub(map[string]int{"a": 0}, &queue.SubscribeOpts{Group: "g g"})},
		{"SubscribeOpts.Group", sub(map[string]int{"a": 0}, &queue.SubscribeOpts{Group: "."})},
		{"topics", sub(map[string]int{"..": 0}, nil)},
	}
	for _, c := range cases {
		wantInvalid(t, c.err, c.field)
	}
	// Nothing was written by the rejected calls.
	written, err := redistest.Do(ctx, client, "KEYS", e.Namespace+"*").AsStrSlice()
	if err != nil || len(written) != 0 {
		t.Fatalf("keys after rejected calls: %v (%v), want none", written, err)
	}
	if got := newQ("q", &queue.Config{AckTombstoneTTL: -time.Second}).Error(); !strings.Contains(got, "must not be negative") {
		t.Fatalf("message %q does not say what is wrong", got)
	}
}
