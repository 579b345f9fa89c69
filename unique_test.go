package dtq_test

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/dtq-dev/dtq"
	"github.com/dtq-dev/dtq/internal/redisconn"
	"github.com/dtq-dev/dtq/internal/store"
)

// enqueueConcurrently submits n tasks at once with payload(i) and opts,
// and returns the distinct ids created and how many were duplicates.
func enqueueConcurrently(t *testing.T, e *env, n int, payload func(int) any, opts *dtq.EnqueueOpts) (created map[string]bool, dups int) {
	t.Helper()
	var mu sync.Mutex
	created = map[string]bool{}
	ids := map[string]bool{}
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			res, err := e.c.Enqueue(t.Context(), "u", payload(i), opts)
			if err != nil {
				t.Error(err)
				return
			}
			mu.Lock()
			defer mu.Unlock()
			ids[res.Task.ID] = true
			if res.Duplicate {
				dups++
			} else {
				created[res.Task.ID] = true
			}
		})
	}
	wg.Wait()
	if len(ids) != len(created) {
		t.Errorf("duplicates name %d tasks, %d were created", len(ids), len(created))
	}
	return created, dups
}

// 100 concurrent enqueues of one unique task create exactly one, by its
// arguments and by a key; different arguments are different tasks.
func TestUniqueUnderConcurrentEnqueues(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		same := func(int) any { return map[string]int{"user": 7} }
		created, dups := enqueueConcurrently(t, e, 100, same, &dtq.EnqueueOpts{Queue: "idle", Unique: &dtq.UniqueOpts{}})
		if len(created) != 1 || dups != 99 {
			t.Errorf("by args: %d created, %d duplicates, want 1 and 99", len(created), dups)
		}
		byKey := func(i int) any { return i }
		created, dups = enqueueConcurrently(t, e, 100, byKey, &dtq.EnqueueOpts{Queue: "idle", Unique: &dtq.UniqueOpts{Key: "report-42"}})
		if len(created) != 1 || dups != 99 {
			t.Errorf("by key: %d created, %d duplicates, want 1 and 99", len(created), dups)
		}
		created, dups = enqueueConcurrently(t, e, 5, byKey, &dtq.EnqueueOpts{Queue: "idle", Unique: &dtq.UniqueOpts{}})
		if len(created) != 5 || dups != 0 {
			t.Errorf("different args: %d created, %d duplicates, want 5 and 0", len(created), dups)
		}
		// the duplicate is the original task, as it is now
		first := e.enqueue("u", "x", &dtq.EnqueueOpts{Queue: "idle", Unique: &dtq.UniqueOpts{}})
		res, err := e.c.Enqueue(t.Context(), "u", "x", &dtq.EnqueueOpts{Queue: "idle", Unique: &dtq.UniqueOpts{}})
		if err != nil || !res.Duplicate || res.Task.ID != first.ID || res.Task.Status != dtq.StatusQueued {
			t.Errorf("duplicate: %+v %v, want %s QUEUED", res, err, first.ID)
		}
		// another type or queue is another lock
		if res, _ := e.c.Enqueue(t.Context(), "v", "x", &dtq.EnqueueOpts{Queue: "idle", Unique: &dtq.UniqueOpts{}}); res == nil || res.Duplicate {
			t.Errorf("another type: %+v", res)
		}
		if res, _ := e.c.Enqueue(t.Context(), "u", "x", &dtq.EnqueueOpts{Queue: "idle2", Unique: &dtq.UniqueOpts{}}); res == nil || res.Duplicate {
			t.Errorf("another queue: %+v", res)
		}
	})
}

// A unique task releases its lock by each way it can leave its states: a
// second enqueue then creates a new task.
func TestUniqueLockReleasedByEachEnd(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		release := make(chan struct{})
		e.worker(fast(dtq.WorkerConfig{Queues: []string{"work"}}), map[string]dtq.HandlerFunc{
			"ok":   func(context.Context, *dtq.Task) (any, error) { return nil, nil },
			"fail": func(context.Context, *dtq.Task) (any, error) { return nil, dtq.Permanent(errors.New("no")) },
			"hold": func(ctx context.Context, _ *dtq.Task) (any, error) {
				select {
				case <-ctx.Done():
					return nil, ctx.Err()
				case <-release:
					return nil, nil
				}
			},
		})
		opts := func(key string, states ...dtq.Status) *dtq.EnqueueOpts {
			return &dtq.EnqueueOpts{Queue: "work", MaxAttempts: 1, Unique: &dtq.UniqueOpts{Key: key, States: states}}
		}
		again := func(what, typ string, o *dtq.EnqueueOpts, first string) {
			t.Helper()
			res, err := e.c.Enqueue(t.Context(), typ, nil, o)
			if err != nil || res.Duplicate || res.Task.ID == first {
				t.Errorf("%s: the next enqueue got %+v %v, want a new task", what, res, err)
			}
		}
		held := func(what, typ string, o *dtq.EnqueueOpts, first string) {
			t.Helper()
			res, err := e.c.Enqueue(t.Context(), typ, nil, o)
			if err != nil || !res.Duplicate || res.Task.ID != first {
				t.Errorf("%s: the next enqueue got %+v %v, want the holder %s", what, res, err, first)
			}
		}

		t.Run("succeeded", func(t *testing.T) {
			o := opts("succeeded")
			a := e.enqueue("ok", nil, o)
			e.waitStatus(a.ID, dtq.StatusSucceeded, 10*time.Second)
			again("succeeded", "ok", o, a.ID)
		})
		t.Run("dead", func(t *testing.T) {
			o := opts("dead")
			a := e.enqueue("fail", nil, o)
			e.waitStatus(a.ID, dtq.StatusDead, 10*time.Second)
			again("dead", "fail", o, a.ID)
		})
		t.Run("discarded", func(t *testing.T) { // held while DEAD when DEAD is a state, until discarded
			o := opts("dead-held", dtq.StatusQueued, dtq.StatusRunning, dtq.StatusDead)
			a := e.enqueue("fail", nil, o)
			e.waitStatus(a.ID, dtq.StatusDead, 10*time.Second)
			held("dead, DEAD a state", "fail", o, a.ID)
			if err := e.a.Discard(t.Context(), a.ID); err != nil {
				t.Fatal(err)
			}
			again("discarded", "fail", o, a.ID)
		})
		t.Run("cancelled while scheduled", func(t *testing.T) {
			o := &dtq.EnqueueOpts{Queue: "work", Delay: time.Hour, Unique: &dtq.UniqueOpts{Key: "cancel-queued"}}
			a := e.enqueue("ok", nil, o)
			held("scheduled", "ok", o, a.ID)
			if _, err := e.c.Cancel(t.Context(), a.ID); err != nil {
				t.Fatal(err)
			}
			again("cancelled while scheduled", "ok", o, a.ID)
		})
		t.Run("cancelled while queued", func(t *testing.T) {
			o := &dtq.EnqueueOpts{Queue: "unserved", Unique: &dtq.UniqueOpts{Key: "cancel-queued"}}
			a := e.enqueue("ok", nil, o)
			held("queued", "ok", o, a.ID)
			if _, err := e.c.Cancel(t.Context(), a.ID); err != nil {
				t.Fatal(err)
			}
			again("cancelled while queued", "ok", o, a.ID)
		})
		t.Run("cancelled while running", func(t *testing.T) {
			o := opts("cancel-running")
			a := e.enqueue("hold", nil, o)
			e.waitStatus(a.ID, dtq.StatusRunning, 10*time.Second)
			held("running", "hold", o, a.ID)
			if _, err := e.c.Cancel(t.Context(), a.ID); err != nil {
				t.Fatal(err)
			}
			e.waitStatus(a.ID, dtq.StatusCancelled, 10*time.Second)
			b := e.enqueue("hold", nil, o) // takes the lock, and runs until released
			if b.ID == a.ID {
				t.Errorf("cancelled while running: the next enqueue is the old task")
			}
			close(release)
			e.waitStatus(b.ID, dtq.StatusSucceeded, 10*time.Second)
		})
	})
}

// A lock held in SUCCEEDED is released when the task expires (it no
// longer exists); the scheduler's sweep then removes the lock itself.
func TestUniqueLockReleasedByExpiry(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		ns := e.Namespace + "-short"
		c, err := dtq.NewClient(redisconn.Wrap(e.Client), &dtq.Config{Namespace: ns, Retention: 300 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		se := &env{Backend: e.Backend, t: t, c: c}
		se.Namespace = ns
		se.worker(fast(dtq.WorkerConfig{}), map[string]dtq.HandlerFunc{"ok": func(context.Context, *dtq.Task) (any, error) { return nil, nil }})
		o := &dtq.EnqueueOpts{Unique: &dtq.UniqueOpts{Key: "k", States: []dtq.Status{dtq.StatusQueued, dtq.StatusRunning, dtq.StatusSucceeded}}}
		a := se.enqueue("ok", nil, o)
		se.waitStatus(a.ID, dtq.StatusSucceeded, 10*time.Second)
		if res, err := c.Enqueue(t.Context(), "ok", nil, o); err != nil || !res.Duplicate {
			t.Fatalf("held while SUCCEEDED: %+v %v", res, err)
		}
		eventually(t, 10*time.Second, "the succeeded task expired", func() bool {
			_, err := c.Get(t.Context(), a.ID)
			return errors.Is(err, dtq.ErrNotFound)
		})
		b := se.enqueue("ok", nil, o)
		if b.ID == a.ID {
			t.Fatalf("after expiry: the old task")
		}
		se.waitStatus(b.ID, dtq.StatusSucceeded, 10*time.Second)
		uniq := store.NewKeys(ns, dtq.DefaultQueue).Unique()
		eventually(t, 15*time.Second, "the sweep removed the lock of the expired tasks", func() bool {
			n, err := e.Client.Do(t.Context(), e.Client.B().Hlen().Key(uniq).Build()).AsInt64()
			return err == nil && n == 0
		})
	})
}

// With a period, the lock is one per period: a second task in the same
// period is a duplicate, one in the next is not.
func TestUniqueByPeriod(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		o := &dtq.EnqueueOpts{Queue: "idle", Unique: &dtq.UniqueOpts{Key: "daily", Period: 2 * time.Second}}
		// start just after a period begins, so the second enqueue is in it
		for time.Now().UnixMilli()%2000 > 500 {
			time.Sleep(20 * time.Millisecond)
		}
		a := e.enqueue("u", nil, o)
		if res, _ := e.c.Enqueue(t.Context(), "u", nil, o); res == nil || !res.Duplicate || res.Task.ID != a.ID {
			t.Errorf("same period: %+v, want the first", res)
		}
		time.Sleep(2100 * time.Millisecond)
		if res, _ := e.c.Enqueue(t.Context(), "u", nil, o); res == nil || res.Duplicate {
			t.Errorf("next period: %+v, want a new task (the first is still queued)", res)
		}
	})
}

func TestUniqueValidation(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		long := string(make([]byte, dtq.MaxUniqueKey+1))
		for i, c := range []struct {
			u     *dtq.UniqueOpts
			idem  string
			field string
		}{
			{&dtq.UniqueOpts{Key: long}, "", "unique.key"},
			{&dtq.UniqueOpts{States: []dtq.Status{"DONE"}}, "", "unique.states"},
			{&dtq.UniqueOpts{Period: time.Millisecond}, "", "unique.period"},
			{&dtq.UniqueOpts{}, "k", "unique"},
		} {
			_, err := e.c.Enqueue(t.Context(), "u", nil, &dtq.EnqueueOpts{Unique: c.u, IdempotencyKey: c.idem})
			var ve *dtq.ValidationError
			if !errors.As(err, &ve) || ve.Field != c.field {
				t.Errorf("case %s: %v, want a ValidationError of %q", strconv.Itoa(i), err, c.field)
			}
		}
	})
}

// With RetainNone a succeeded unique task is deleted as it succeeds: its
// lock goes with it, even with SUCCEEDED among the states.
func TestUniqueLockReleasedByDeletion(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		ns := e.Namespace + "-none"
		c, err := dtq.NewClient(redisconn.Wrap(e.Client), &dtq.Config{Namespace: ns, Retention: dtq.RetainNone})
		if err != nil {
			t.Fatal(err)
		}
		ne := &env{Backend: e.Backend, t: t, c: c}
		ne.Namespace = ns
		ne.worker(fast(dtq.WorkerConfig{}), map[string]dtq.HandlerFunc{"ok": func(context.Context, *dtq.Task) (any, error) { return nil, nil }})
		o := &dtq.EnqueueOpts{Unique: &dtq.UniqueOpts{Key: "k", States: []dtq.Status{dtq.StatusQueued, dtq.StatusRunning, dtq.StatusSucceeded}}}
		a := ne.enqueue("ok", nil, o)
		eventually(t, 10*time.Second, "the succeeded task deleted", func() bool {
			_, err := c.Get(t.Context(), a.ID)
			return errors.Is(err, dtq.ErrNotFound)
		})
		if res, err := c.Enqueue(t.Context(), "ok", nil, o); err != nil || res.Duplicate {
			t.Errorf("after deletion: %+v %v, want a new task", res, err)
		}
	})
}
