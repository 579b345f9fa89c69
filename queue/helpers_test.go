package queue_test

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dtq-dev/dtq/internal/redisconn"
	"github.com/dtq-dev/dtq/internal/redistest"
	"github.com/dtq-dev/dtq/queue"
	"github.com/redis/rueidis"
)

// eventually polls cond until it holds or d passes.
func eventually(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not true within %v", what, d)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// pending asserts that done stays empty for d: the call is still blocked.
func pending(t *testing.T, done <-chan error, d time.Duration, what string) {
	t.Helper()
	select {
	case err := <-done:
		t.Fatalf("%s finished early (err=%v), want it still waiting", what, err)
	case <-time.After(d):
	}
}

// waitDone waits up to d for done and fails on an error.
func waitDone(t *testing.T, done <-chan error, d time.Duration, what string) {
	t.Helper()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	case <-time.After(d):
		t.Fatalf("%s: still blocked after %v", what, d)
	}
}

// wantInvalid asserts err is a ValidationError naming field.
func wantInvalid(t *testing.T, err error, field string) {
	t.Helper()
	var ve *queue.ValidationError
	if !errors.As(err, &ve) || !errors.Is(err, queue.ErrInvalid) {
		t.Fatalf("got %v, want a ValidationError for %s", err, field)
	}
	if ve.Field != field || !strings.Contains(err.Error(), field) {
		t.Fatalf("error %q names field %q, want %q", err, ve.Field, field)
	}
}

// newClient connects another client to the same backend, as another process
// would; the caller may Close it to simulate that process dying.
func (e *env) newClient(t *testing.T) rueidis.Client {
	t.Helper()
	var opt rueidis.ClientOption
	switch {
	case e.Server != nil:
		opt = rueidis.ClientOption{InitAddress: []string{e.Server.Addr}, DisableCache: true}
	default:
		opt = rueidis.ClientOption{InitAddress: []string{e.Embedded.Server.Addr()}, DisableCache: true, ForceSingleClient: true}
	}
	c, err := rueidis.NewClient(opt)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

// crash simulates a process that received n messages of topic and died
// without settling them: its subscription runs on its own connection, which
// is then closed, so it can neither renew nor hand anything back.
func crash(t *testing.T, e *env, q *queue.Queue, topic string, n int) []*queue.Message {
	t.Helper()
	c := e.newClient(t)
	dq, err := queue.New(redisconn.Wrap(c), q.Name(), &queue.Config{Namespace: e.Namespace})
	if err != nil {
		t.Fatal(err)
	}
	s, err := dq.Subscribe(t.Context(), map[string]int{topic: 0}, &queue.SubscribeOpts{MaxInFlight: n, VisibilityTimeout: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	var got []*queue.Message
	for range n {
		ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
		m, err := s.Receive(ctx)
		cancel()
		if err != nil {
			t.Fatalf("crashing subscriber: receive: %v", err)
		}
		got = append(got, m)
	}
	c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	s.Close(ctx) // fails to hand back: the connection is gone
	return got
}

// pendingEntry is an entry of a consumer group's pending list.
type pendingEntry struct {
	consumer   string
	idle       time.Duration
	deliveries int64
}

// pendingOf reads entry id of the stream's pending list in group "dtq".
func (e *env) pendingOf(stream, id string) pendingEntry {
	e.t.Helper()
	c := e.Client
	res, err := redistest.Do(e.t.Context(), c, "XPENDING", stream, "dtq", id, id, "1").ToArray()
	if err != nil {
		e.t.Fatal(err)
	}
	if len(res) == 0 {
		e.t.Fatalf("entry %s is not pending", id)
	}
	f, err := res[0].ToArray()
	if err != nil || len(f) != 4 {
		e.t.Fatalf("XPENDING entry %v: %v", f, err)
	}
	var p pendingEntry
	p.consumer, _ = f[1].ToString()
	idle, _ := f[2].AsInt64()
	p.idle = time.Duration(idle) * time.Millisecond
	p.deliveries, _ = f[3].AsInt64()
	return p
}

// redisNow reads the Redis server's clock (TIME).
func (e *env) redisNow() time.Time {
	e.t.Helper()
	c := e.Client
	res, err := redistest.Do(e.t.Context(), c, "TIME").AsStrSlice()
	if err != nil || len(res) != 2 {
		e.t.Fatalf("TIME: %v %v", res, err)
	}
	sec, err1 := strconv.ParseInt(res[0], 10, 64)
	usec, err2 := strconv.ParseInt(res[1], 10, 64)
	if err1 != nil || err2 != nil {
		e.t.Fatalf("TIME: %v", res)
	}
	return time.Unix(sec, usec*1000)
}
