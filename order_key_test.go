package dtq_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/dtq-dev/dtq"
)

// orderLog records, per order key, the starts and ends of its tasks'
// executions: the order they started in and whether two ever overlapped.
type orderLog struct {
	mu       sync.Mutex
	running  map[string]string   // key -> the task running now
	starts   map[string][]int    // key -> seq of each start, in order
	overlaps []string            // "key: a while b"
	ran      map[string]struct{} // task ids that ran to an end
}

func newOrderLog() *orderLog {
	return &orderLog{running: map[string]string{}, starts: map[string][]int{}, ran: map[string]struct{}{}}
}

type orderPayload struct {
	Key string `json:"key"`
	Seq int    `json:"seq"`
}

func (l *orderLog) begin(t *dtq.Task) orderPayload {
	var p orderPayload
	_ = json.Unmarshal(t.Payload, &p)
	l.mu.Lock()
	defer l.mu.Unlock()
	if other, ok := l.running[p.Key]; ok {
		l.overlaps = append(l.overlaps, fmt.Sprintf("%s: %s while %s", p.Key, t.ID, other))
	}
	l.running[p.Key] = t.ID
	l.starts[p.Key] = append(l.starts[p.Key], p.Seq)
	return p
}

func (l *orderLog) end(t *dtq.Task, p orderPayload) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.running[p.Key] == t.ID {
		delete(l.running, p.Key)
	}
}

// check fails t when a key's tasks overlapped or started out of
// submission order (a retry starts the same seq again, never an earlier).
func (l *orderLog) check(t *testing.T) {
	t.Helper()
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, o := range l.overlaps {
		t.Errorf("overlap: %s", o)
	}
	for key, seqs := range l.starts {
		for i := 1; i < len(seqs); i++ {
			if seqs[i] < seqs[i-1] {
				t.Errorf("key %s started out of order: %v", key, seqs)
				break
			}
		}
	}
}

// Tasks of one order key start one at a time in submission order, across
// retries, a dead letter, a cancellation of a waiter, and a delay; keys run
// side by side.
func TestOrderKeyRunsInSubmissionOrder(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		ctx := t.Context()
		log := newOrderLog()
		var mu sync.Mutex
		tries := map[string]int{}
		e.worker(&dtq.WorkerConfig{Concurrency: 8}, map[string]dtq.HandlerFunc{
			"step": func(_ context.Context, t *dtq.Task) (any, error) {
				p := log.begin(t)
				defer log.end(t, p)
				time.Sleep(2 * time.Millisecond)
				mu.Lock()
				tries[t.ID]++
				n := tries[t.ID]
				mu.Unlock()
				switch {
				case p.Seq%7 == 3 && n == 1: // fails once: its key waits for its retry
					return nil, dtq.RetryAfter(20*time.Millisecond, errors.New("first try"))
				case p.Seq == 11: // goes DEAD: its key moves on
					return nil, dtq.Permanent(errors.New("for good"))
				}
				return nil, nil
			},
		})
		keys := []string{"acct-1", "acct-2", "acct-3"}
		ids := map[string][]string{}
		for seq := range 20 {
			for _, k := range keys {
				task := e.enqueue("step", orderPayload{k, seq}, &dtq.EnqueueOpts{OrderKey: k})
				if task.OrderKey != k {
					t.Fatalf("OrderKey %q, want %q", task.OrderKey, k)
				}
				ids[k] = append(ids[k], task.ID)
			}
		}
		// a waiter cancelled leaves its key's line
		cancelled := ids["acct-2"][19]
		if _, err := e.c.Cancel(ctx, cancelled); err != nil {
			t.Fatal(err)
		}
		for _, k := range keys {
			for seq, id := range ids[k] {
				want := dtq.StatusSucceeded
				switch {
				case id == cancelled:
					want = dtq.StatusCancelled
				case seq == 11:
					want = dtq.StatusDead
				}
				task := e.waitStatus(id, want, 30*time.Second)
				if task.OrderWaiting {
					t.Errorf("%s: still order-waiting once %s", id, task.Status)
				}
			}
		}
		log.check(t)
		for _, k := range keys {
			want := 20 + 3 // 20 tasks, 3 of them retried once (seq 3, 10, 17)
			if k == "acct-2" {
				want-- // its last one cancelled before it ran
			}
			if got := len(log.starts[k]); got != want {
				t.Errorf("key %s: %d starts, want %d: %v", k, got, want, log.starts[k])
			}
		}
		st, err := dtq.NewAdmin(e.c).Stats(ctx, dtq.DefaultQueue)
		if err != nil {
			t.Fatal(err)
		}
		if st.OrderWaiting != 0 || st.Queued != 0 {
			t.Errorf("stats after: order waiting %d, queued %d", st.OrderWaiting, st.Queued)
		}
	})
}

// A waiting task says so (Get, Stats); the first task's delay delays the
// whole key; a requeued dead letter enters its key again at the tail.
func TestOrderKeyWaitingAndDelay(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		ctx := t.Context()
		first := e.enqueue("k", nil, &dtq.EnqueueOpts{OrderKey: "doc-9", Delay: 400 * time.Millisecond})
		second := e.enqueue("k", nil, &dtq.EnqueueOpts{OrderKey: "doc-9"})
		other := e.enqueue("k", nil, &dtq.EnqueueOpts{OrderKey: "doc-10"})
		if first.Status != dtq.StatusScheduled || first.OrderWaiting {
			t.Errorf("first: %s, order waiting %v; want SCHEDULED, holding its key", first.Status, first.OrderWaiting)
		}
		if second.Status != dtq.StatusQueued || !second.OrderWaiting {
			t.Errorf("second: %s, order waiting %v; want QUEUED, waiting", second.Status, second.OrderWaiting)
		}
		if other.OrderWaiting {
			t.Error("a task of another key waits")
		}
		if got, _ := e.c.Get(ctx, second.ID); got == nil || !got.OrderWaiting || got.OrderKey != "doc-9" {
			t.Errorf("Get of the waiter: %+v", got)
		}
		st, err := dtq.NewAdmin(e.c).Stats(ctx, dtq.DefaultQueue)
		if err != nil {
			t.Fatal(err)
		}
		if st.OrderWaiting != 1 || st.Queued != 2 {
			t.Errorf("stats: order waiting %d, queued %d; want 1, 2", st.OrderWaiting, st.Queued)
		}
		var mu sync.Mutex
		started := map[string]time.Time{}
		e.worker(&dtq.WorkerConfig{Concurrency: 4}, map[string]dtq.HandlerFunc{
			"k": func(_ context.Context, t *dtq.Task) (any, error) {
				mu.Lock()
				started[t.ID] = time.Now()
				mu.Unlock()
				return nil, nil
			},
		})
		e.waitStatus(other.ID, dtq.StatusSucceeded, 10*time.Second)
		e.waitStatus(second.ID, dtq.StatusSucceeded, 10*time.Second)
		e.waitStatus(first.ID, dtq.StatusSucceeded, 10*time.Second)
		mu.Lock()
		if !started[first.ID].Before(started[second.ID]) {
			t.Errorf("the second task started before the delayed first one of its key")
		}
		if !started[other.ID].Before(started[first.ID]) {
			t.Errorf("another key waited for doc-9's delay")
		}
		mu.Unlock()
	})
}

// Tasks with an order key and a group: each waiter, handed its key,
// enters its group's window through the schedule (the scheduler moves it
// in) — the keys still run one task at a time, in order, and the groups'
// windows hold.
func TestOrderKeyWithGroups(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		log := newOrderLog()
		var all []string
		for seq := range 8 {
			for _, key := range []string{"a", "b", "c"} {
				group := "tenant-1"
				if key == "c" {
					group = "tenant-2"
				}
				task := e.enqueue("k", orderPayload{Key: key, Seq: seq}, &dtq.EnqueueOpts{OrderKey: key, Group: group})
				all = append(all, task.ID)
			}
		}
		e.worker(&dtq.WorkerConfig{Concurrency: 4}, map[string]dtq.HandlerFunc{
			"k": func(_ context.Context, t *dtq.Task) (any, error) {
				p := log.begin(t)
				time.Sleep(2 * time.Millisecond)
				log.end(t, p)
				return nil, nil
			},
		})
		for _, id := range all {
			e.waitStatus(id, dtq.StatusSucceeded, 20*time.Second)
		}
		log.check(t)
		for _, key := range []string{"a", "b", "c"} {
			if got := log.starts[key]; len(got) != 8 {
				t.Errorf("key %s: starts %v, want 8", key, got)
			}
		}
	})
}

// A dead letter of an order key, requeued, waits for the key's task in
// flight, then runs.
func TestOrderKeyRequeueEntersAtTail(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		ctx := t.Context()
		release := make(chan struct{})
		e.worker(&dtq.WorkerConfig{Concurrency: 4}, map[string]dtq.HandlerFunc{
			"die": func(context.Context, *dtq.Task) (any, error) { return nil, dtq.Permanent(errors.New("no")) },
			"hold": func(ctx context.Context, _ *dtq.Task) (any, error) {
				select {
				case <-release:
				case <-ctx.Done():
				}
				return nil, nil
			},
		})
		dead := e.enqueue("die", nil, &dtq.EnqueueOpts{OrderKey: "k"})
		e.waitStatus(dead.ID, dtq.StatusDead, 10*time.Second)
		hold := e.enqueue("hold", nil, &dtq.EnqueueOpts{OrderKey: "k"})
		e.waitStatus(hold.ID, dtq.StatusRunning, 10*time.Second)
		if _, err := dtq.NewAdmin(e.c).Requeue(ctx, dead.ID); err != nil {
			t.Fatal(err)
		}
		if got, _ := e.c.Get(ctx, dead.ID); got == nil || got.Status != dtq.StatusQueued || !got.OrderWaiting {
			t.Fatalf("requeued while its key runs: %+v, want QUEUED and order-waiting", got)
		}
		close(release)
		e.waitStatus(hold.ID, dtq.StatusSucceeded, 10*time.Second)
		e.waitStatus(dead.ID, dtq.StatusDead, 10*time.Second) // it ran again, and died again
		if got, _ := e.c.Get(ctx, dead.ID); got == nil || len(got.History) != 2 {
			t.Errorf("requeued dead letter: %+v, want 2 executions", got)
		}
	})
}

func TestOrderKeyValidation(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		ctx := t.Context()
		for _, o := range []dtq.EnqueueOpts{
			{OrderKey: "bad key"},
			{OrderKey: "k", Unique: &dtq.UniqueOpts{}},
		} {
			_, err := e.c.Enqueue(ctx, "t", nil, &o)
			var ve *dtq.ValidationError
			if !errors.As(err, &ve) || ve.Field != "order_key" {
				t.Errorf("%+v: %v, want a ValidationError of order_key", o, err)
			}
		}
	})
}

// An HTTP worker's lease follows the order key too: of three tasks of one
// key, a lease of ten gets the first; the second comes once it succeeded,
// the third once the second failed for good.
func TestOrderKeyLeases(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		ctx := t.Context()
		var ids []string
		for range 3 {
			ids = append(ids, e.enqueue("http", nil, &dtq.EnqueueOpts{OrderKey: "acct"}).ID)
		}
		req := dtq.LeaseRequest{Worker: "w1", Max: 10, Wait: 50 * time.Millisecond}
		first := e.lease(req, 1)[0]
		if first.Task.ID != ids[0] {
			t.Fatalf("leased %s, want the key's first %s", first.Task.ID, ids[0])
		}
		if ls, err := e.ls.Lease(ctx, req); err != nil || len(ls) != 0 {
			t.Fatalf("a second lease while the key's first runs: %d, %v", len(ls), err)
		}
		if _, err := e.ls.CompleteLease(ctx, first.Token, nil); err != nil {
			t.Fatal(err)
		}
		var second *dtq.Lease
		eventually(t, 10*time.Second, "the key's second task leased", func() bool {
			ls, err := e.ls.Lease(ctx, req)
			if err != nil {
				t.Fatal(err)
			}
			if len(ls) > 0 {
				second = ls[0]
			}
			return second != nil
		})
		if second.Task.ID != ids[1] {
			t.Fatalf("leased %s, want the key's second %s", second.Task.ID, ids[1])
		}
		if _, err := e.ls.FailLease(ctx, second.Token, dtq.LeaseFailure{Error: "no", Permanent: true}); err != nil {
			t.Fatal(err)
		}
		eventually(t, 10*time.Second, "the key's third task leased after the second went dead", func() bool {
			ls, err := e.ls.Lease(ctx, req)
			if err != nil {
				t.Fatal(err)
			}
			return len(ls) == 1 && ls[0].Task.ID == ids[2]
		})
	})
}

// Admin.OrderKey reads a key's line — in flight, the waiters in order, their
// count — and Admin.OrderKeys pages through the keys with a task in flight;
// bad input is a ValidationError naming its field.
func TestOrderKeyAdminReads(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		ctx := t.Context()
		a := dtq.NewAdmin(e.c)
		var ids []string
		for range 4 {
			ids = append(ids, e.enqueue("k", nil, &dtq.EnqueueOpts{OrderKey: "acct-1"}).ID)
		}
		// 150 keys more: past Redis' listpack hash (128 fields), HSCAN
		// walks buckets.
		for i := range 150 {
			e.enqueue("k", nil, &dtq.EnqueueOpts{OrderKey: fmt.Sprintf("other-%03d", i)})
		}
		line, err := a.OrderKey(ctx, dtq.DefaultQueue, "acct-1")
		if err != nil {
			t.Fatal(err)
		}
		if line.InFlight != ids[0] || line.Waiting != 3 || !slices.Equal(line.Next, ids[1:]) || line.Key != "acct-1" || line.Queue != dtq.DefaultQueue {
			t.Errorf("line: %+v, want %s in flight, then %v", line, ids[0], ids[1:])
		}
		if line, err := a.OrderKey(ctx, dtq.DefaultQueue, "idle"); err != nil || line.InFlight != "" || line.Waiting != 0 || len(line.Next) != 0 {
			t.Errorf("a key without tasks: %+v, %v", line, err)
		}
		seen := map[string]dtq.OrderKeyInfo{}
		cursor := ""
		for pages := 0; ; pages++ {
			ks, next, err := a.OrderKeys(ctx, dtq.DefaultQueue, 10, cursor)
			if err != nil {
				t.Fatal(err)
			}
			if pages > 100 {
				t.Fatalf("still paging after %d pages", pages)
			}
			if len(ks) > 10 {
				t.Errorf("a page of %d keys, limit 10", len(ks))
			}
			for _, k := range ks {
				if _, twice := seen[k.Key]; twice {
					t.Errorf("key %s listed twice", k.Key)
				}
				seen[k.Key] = k
			}
			if cursor = next; cursor == "" {
				break
			}
		}
		if len(seen) != 151 || seen["acct-1"] != (dtq.OrderKeyInfo{Key: "acct-1", InFlight: ids[0], Waiting: 3}) || seen["other-007"].InFlight == "" {
			t.Errorf("keys: %d, acct-1 %+v, other-007 %+v", len(seen), seen["acct-1"], seen["other-007"])
		}
		for _, c := range []struct {
			field string
			err   error
		}{
			{"key", func() error { _, err := a.OrderKey(ctx, dtq.DefaultQueue, "a|b"); return err }()},
			{"queue", func() error { _, err := a.OrderKey(ctx, "bad queue", "k"); return err }()},
			{"limit", func() error { _, _, err := a.OrderKeys(ctx, dtq.DefaultQueue, 1001, ""); return err }()},
			{"cursor", func() error { _, _, err := a.OrderKeys(ctx, dtq.DefaultQueue, 10, "x"); return err }()},
			{"cursor", func() error { _, _, err := a.OrderKeys(ctx, dtq.DefaultQueue, 10, "0:a|b"); return err }()},
		} {
			var ve *dtq.ValidationError
			if !errors.As(c.err, &ve) || ve.Field != c.field {
				t.Errorf("%s: %v, want a ValidationError of it", c.field, c.err)
			}
		}
	})
}

// Cancelling the task that holds its key passes the key on at once: the
// next task enters its band (no longer waiting) in the cancel's call — and
// cancelling that one, in its band, deletes the entry written for it.
func TestOrderKeyCancelPassesKeyOn(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		ctx := t.Context()
		first := e.enqueue("k", nil, &dtq.EnqueueOpts{Queue: "lone", OrderKey: "doc"})
		second := e.enqueue("k", nil, &dtq.EnqueueOpts{Queue: "lone", OrderKey: "doc"})
		third := e.enqueue("k", nil, &dtq.EnqueueOpts{Queue: "lone", OrderKey: "doc"})
		if _, err := e.c.Cancel(ctx, first.ID); err != nil {
			t.Fatal(err)
		}
		got, err := e.c.Get(ctx, second.ID)
		if err != nil || got.Status != dtq.StatusQueued || got.OrderWaiting {
			t.Fatalf("the key's next task after the first's cancel: %+v, %v; want QUEUED in its band", got, err)
		}
		st, err := e.a.Stats(ctx, "lone")
		if err != nil || st.OrderWaiting != 1 || st.QueuedByPriority[dtq.DefaultPriority] != 1 {
			t.Fatalf("stats: %+v, %v", st, err)
		}
		// the second, handed the key with an entry written for it, is
		// cancelled in its band: its entry goes (not left for a worker to
		// skip), the key passes to the third
		if _, err := e.c.Cancel(ctx, second.ID); err != nil {
			t.Fatal(err)
		}
		got, err = e.c.Get(ctx, third.ID)
		if err != nil || got.Status != dtq.StatusQueued || got.OrderWaiting {
			t.Fatalf("the key's third task after the second's cancel: %+v, %v; want QUEUED in its band", got, err)
		}
		st, err = e.a.Stats(ctx, "lone")
		if err != nil || st.OrderWaiting != 0 || st.QueuedByPriority[dtq.DefaultPriority] != 1 {
			t.Fatalf("stats after the second's cancel: %+v, %v", st, err)
		}
	})
}
