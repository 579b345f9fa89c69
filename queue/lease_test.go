package queue_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/dtq-dev/dtq/queue"
)

// lease leases up to max messages of topics, failing the test on an error.
func (e *env) lease(q *queue.Queue, topics map[string]int, opts *queue.LeaseOpts) []*queue.Message {
	e.t.Helper()
	ms, err := q.Lease(e.t.Context(), topics, opts)
	if err != nil {
		e.t.Fatalf("lease: %v", err)
	}
	return ms
}

// leased rebuilds the message of a token, as another process would.
func (e *env) leased(q *queue.Queue, token string) *queue.Message {
	e.t.Helper()
	m, err := q.Leased(token)
	if err != nil {
		e.t.Fatalf("leased: %v", err)
	}
	return m
}

// A leased message is settled by its token from another Queue value, in
// priority order across topics, and every settlement acts as on a
// subscription's message.
func TestLeaseSettlesByToken(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		q := e.queue("q", nil)
		other := e.queue("q", nil) // another process's Queue
		e.put(q, "low", "l", &queue.PutOpts{Key: "kl"})
		e.put(q, "high", "h1", &queue.PutOpts{Key: "kh1"})
		e.put(q, "high", "h2", nil)
		topics := map[string]int{"high": 0, "low": 1}
		ms := e.lease(q, topics, &queue.LeaseOpts{Max: 2, Holder: "py-1"})
		if len(ms) != 2 || string(ms[0].Data) != "h1" || string(ms[1].Data) != "h2" {
			t.Fatalf("leased %v, want h1 and h2 (the high topic first)", datas(ms))
		}
		if ms[0].Token() == "" || ms[0].Deliveries != 1 || ms[0].Topic != "high" || ms[0].Deadline().Before(time.Now().Add(20*time.Second)) {
			t.Fatalf("lease %+v deadline %v: want a token, one delivery, topic high, a deadline ~30s out", ms[0], ms[0].Deadline())
		}
		if err := e.leased(other, ms[0].Token()).Ack(t.Context()); err != nil {
			t.Fatalf("ack by token: %v", err)
		}
		if !e.put(q, "high", "again", &queue.PutOpts{Key: "kh1"}) {
			t.Fatal("the acknowledged key kh1 is still live")
		}
		if err := e.leased(other, ms[1].Token()).Release(t.Context(), "low", nil); err != nil {
			t.Fatalf("release by token: %v", err)
		}
		// Left: kh1 "again" in high, l and h2 in low.
		rest := e.lease(q, topics, &queue.LeaseOpts{Max: 10})
		if got := strings.Join(datas(rest), ","); got != "again,l,h2" {
			t.Fatalf("leased %s, want again,l,h2", got)
		}
		if err := e.leased(other, rest[0].Token()).Term(t.Context(), "bad input"); err != nil {
			t.Fatal(err)
		}
		dead, err := q.DeadLetters(t.Context(), 10)
		if err != nil || len(dead) != 1 || dead[0].Reason != "bad input" || string(dead[0].Data) != "again" {
			t.Fatalf("dead letters %+v (%v), want the termed message", dead, err)
		}
		if err := e.leased(other, rest[1].Token()).Nak(t.Context(), 0); err != nil {
			t.Fatal(err)
		}
		again := e.lease(q, map[string]int{"low": 0}, &queue.LeaseOpts{Max: 10})
		if len(again) != 1 || string(again[0].Data) != "l" || again[0].Deliveries != 2 {
			t.Fatalf("after a nak leased %v, want l delivered a second time", datas(again))
		}
		for _, m := range append(again, rest[2]) {
			e.ack(e.leased(other, m.Token()))
		}
		for _, topic := range []string{"high", "low"} {
			if st, _ := q.Stats(t.Context(), topic, ""); st != (queue.TopicStats{}) {
				t.Fatalf("%s stats %+v, want empty", topic, st)
			}
		}
	})
}

// A lease not extended in time is reclaimed by the next lease of the
// group, and its stale token then changes nothing; an extended one is not.
func TestLeaseReclaimAndStaleToken(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		q := e.queue("q", nil)
		e.put(q, "a", "x", &queue.PutOpts{Key: "k1"})
		e.put(q, "a", "y", &queue.PutOpts{Key: "k2"})
		vt := 200 * time.Millisecond
		opts := &queue.LeaseOpts{VisibilityTimeout: vt}
		first := e.lease(q, map[string]int{"a": 0}, &queue.LeaseOpts{VisibilityTimeout: vt, Max: 2})
		if len(first) != 2 {
			t.Fatalf("leased %d, want 2", len(first))
		}
		kept := e.leased(q, first[1].Token())
		deadline := time.Now().Add(3 * vt)
		for time.Now().Before(deadline) {
			if err := kept.Extend(t.Context()); err != nil {
				t.Fatalf("extend: %v", err)
			}
			time.Sleep(vt / 4)
		}
		second := e.lease(q, map[string]int{"a": 0}, &queue.LeaseOpts{VisibilityTimeout: vt, Max: 2, Wait: 2 * vt})
		if len(second) != 1 || string(second[0].Data) != "x" || second[0].Deliveries != 2 {
			t.Fatalf("second lease %v, want x reclaimed (delivered twice), y kept by its extending holder", datas(second))
		}
		stale := e.leased(q, first[0].Token())
		for name, settle := range map[string]func() error{
			"ack":     func() error { return stale.Ack(t.Context()) },
			"extend":  func() error { return stale.Extend(t.Context()) },
			"release": func() error { return stale.Release(t.Context(), "b", nil) },
			"nak":     func() error { return stale.Nak(t.Context(), time.Second) },
			"term":    func() error { return stale.Term(t.Context(), "late") },
		} {
			if err := settle(); !errors.Is(err, queue.ErrNotOwner) {
				t.Fatalf("stale %s: %v, want ErrNotOwner", name, err)
			}
		}
		if e.put(q, "a", "z", &queue.PutOpts{Key: "k1"}) {
			t.Fatal("a stale settlement freed key k1 of the reclaimed message")
		}
		if st, _ := q.Stats(t.Context(), "b", ""); st != (queue.TopicStats{}) {
			t.Fatalf("a stale release moved something to b: %+v", st)
		}
		e.ack(e.leased(q, second[0].Token()))
		e.ack(kept)
		if got := e.lease(q, map[string]int{"a": 0}, opts); len(got) != 0 {
			t.Fatalf("leased %v after everything was acknowledged", datas(got))
		}
	})
}

// A lease with a wait returns as soon as a message arrives, a delayed one
// once due, and nothing when none came.
func TestLeaseWaits(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		q := e.queue("q", nil)
		start := time.Now()
		if got := e.lease(q, map[string]int{"a": 0}, &queue.LeaseOpts{Wait: 150 * time.Millisecond}); len(got) != 0 {
			t.Fatalf("leased %v from an empty topic", datas(got))
		}
		if waited := time.Since(start); waited < 150*time.Millisecond {
			t.Fatalf("an empty lease answered after %v, before its wait", waited)
		}
		go func() {
			time.Sleep(100 * time.Millisecond)
			e.put(q, "a", "late", nil)
		}()
		got := e.lease(q, map[string]int{"a": 0}, &queue.LeaseOpts{Wait: 5 * time.Second})
		if len(got) != 1 || string(got[0].Data) != "late" {
			t.Fatalf("leased %v, want the message put during the wait", datas(got))
		}
		e.put(q, "a", "delayed", &queue.PutOpts{Delay: 300 * time.Millisecond})
		got = e.lease(q, map[string]int{"a": 0}, &queue.LeaseOpts{Wait: 5 * time.Second})
		if len(got) != 1 || string(got[0].Data) != "delayed" {
			t.Fatalf("leased %v, want the delayed message once due", datas(got))
		}
	})
}

// A full destination answers ErrFull at once with NoWait, and the message
// stays its holder's; Put with NoWait does the same.
func TestNoWaitWhenFull(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		q := e.queue("q", nil)
		e.put(q, "full", "f", nil)
		if ok, err := q.Put(t.Context(), "full", []byte("g"), &queue.PutOpts{MaxSize: 1, NoWait: true}); ok || !errors.Is(err, queue.ErrFull) {
			t.Fatalf("put into a full topic: %v %v, want false, ErrFull", ok, err)
		}
		e.put(q, "a", "x", nil)
		m := e.lease(q, map[string]int{"a": 0}, nil)[0]
		if err := e.leased(q, m.Token()).Release(t.Context(), "full", &queue.ReleaseOpts{MaxSize: 1, NoWait: true}); !errors.Is(err, queue.ErrFull) {
			t.Fatalf("release into a full topic: %v, want ErrFull", err)
		}
		e.ack(e.leased(q, m.Token())) // still held
		if st, _ := q.Stats(t.Context(), "full", ""); st.Queued != 1 {
			t.Fatalf("full topic %+v, want its one message", st)
		}
	})
}

// Bad arguments and foreign tokens are ErrInvalid naming the field.
func TestLeaseValidation(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		q := e.queue("q", nil)
		ctx := t.Context()
		for field, opts := range map[string]*queue.LeaseOpts{
			"LeaseOpts.Max":               {Max: 257},
			"LeaseOpts.Group":             {Group: "a b"},
			"LeaseOpts.Holder":            {Holder: "a|b"},
			"LeaseOpts.VisibilityTimeout": {VisibilityTimeout: time.Millisecond},
			"LeaseOpts.Wait":              {Wait: -time.Second},
		} {
			_, err := q.Lease(ctx, map[string]int{"a": 0}, opts)
			wantInvalid(t, err, field)
		}
		_, err := q.Lease(ctx, nil, nil)
		wantInvalid(t, err, "topics")
		for _, token := range []string{"", "not base64!", "TTF8Zm9v", "bm9wZQ"} {
			_, err := q.Leased(token)
			wantInvalid(t, err, "token")
		}
		e.put(q, "a", "x", nil)
		m := e.lease(q, map[string]int{"a": 0}, nil)[0]
		if _, err := q.Leased(m.Token()[:len(m.Token())-3]); err == nil {
			t.Fatal("a truncated token was taken")
		}
		_, err = e.queue("other", nil).Leased(m.Token())
		wantInvalid(t, err, "token")
	})
}

func datas(ms []*queue.Message) []string {
	out := make([]string, len(ms))
	for i, m := range ms {
		out[i] = string(m.Data)
	}
	return out
}
