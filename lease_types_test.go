package dtq_test

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dtq-dev/dtq"
	"github.com/dtq-dev/dtq/internal/redistest"
)

// commandCalls is the count of commands redis-server at addr has run, from
// INFO commandstats (commands that scripts run included).
func commandCalls(t *testing.T, addr string) int {
	t.Helper()
	out, err := redistest.Command(addr, "INFO", "commandstats")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, line := range strings.Split(out, "\n") {
		_, rest, ok := strings.Cut(line, ":calls=")
		if !ok {
			continue
		}
		calls, _, _ := strings.Cut(rest, ",")
		c, err := strconv.Atoi(calls)
		if err != nil {
			t.Fatalf("commandstats line %q", line)
		}
		n += c
	}
	return n
}

// A holder of some task types beside a task of another type waits as on an
// empty queue: an idle two-second poll costs a handful of Redis commands
// (it spun before: read, give back, read again — some 100,000 commands),
// and a task of its type that arrives during the wait is leased.
func TestLeaseOfOtherTypesDoesNotSpin(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t, nil)
	e := newEnv(t, &redistest.Backend{Server: srv, Client: redistest.Client(t, srv), Namespace: redistest.Namespace(t)}, nil)
	ctx := t.Context()
	poll := dtq.LeaseRequest{Worker: "py-1", Queues: []string{"poly"}, Types: []string{"echo"}, Wait: 2 * time.Second}

	// An idle poll of an empty queue, for scale.
	empty := dtq.LeaseRequest{Worker: "py-0", Queues: []string{"empty"}, Wait: 2 * time.Second}
	e.lease(empty, 0) // (creates the queue's groups)
	before := commandCalls(t, srv.Addr)
	e.lease(empty, 0)
	idle := commandCalls(t, srv.Addr) - before

	other, err := e.c.Enqueue(ctx, "resize", nil, &dtq.EnqueueOpts{Queue: "poly"})
	if err != nil {
		t.Fatal(err)
	}
	e.lease(poll, 0)
	before = commandCalls(t, srv.Addr)
	e.lease(poll, 0)
	typed := commandCalls(t, srv.Addr) - before
	t.Logf("Redis commands of an idle 2s poll: %d on an empty queue, %d beside a task of another type", idle, typed)
	if typed > 4*idle+100 {
		t.Fatalf("an idle 2s poll beside a task of another type ran %d Redis commands (an empty queue's: %d): it spins", typed, idle)
	}
	if got, _ := e.c.Get(ctx, other.Task.ID); got.Status != dtq.StatusQueued {
		t.Fatalf("the other type's task is %s, want QUEUED", got.Status)
	}
}

// A holder of some task types that waits beside another type's task
// leases a task of its type that arrives during the wait; the other type's
// task stays for a holder of its type. (That the wait is woken by its own
// types only is TestLeaseWatchSeesOnlyItsTypes: here a later read of the
// long poll would find the task too.)
func TestLeaseOfOtherTypesWakesForItsType(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		ctx := t.Context()
		other := e.enqueue("resize", nil, &dtq.EnqueueOpts{Queue: "poly"})
		poll := dtq.LeaseRequest{Worker: "py-1", Queues: []string{"poly"}, Types: []string{"echo"}, Wait: 10 * time.Second}
		e.lease(dtq.LeaseRequest{Worker: "py-1", Queues: []string{"poly"}, Types: []string{"echo"}}, 0)
		got := make(chan []*dtq.Lease, 1)
		go func() {
			ls, err := e.ls.Lease(ctx, poll)
			if err != nil {
				t.Error(err)
			}
			got <- ls
		}()
		time.Sleep(100 * time.Millisecond) // (the poll waits: not a condition, a chance to start)
		echo := e.enqueue("echo", "hi", &dtq.EnqueueOpts{Queue: "poly"})
		ls := <-got
		if len(ls) != 1 || ls[0].Task.ID != echo.ID {
			t.Fatalf("the waiting poll leased %v, want the echo task %s", ls, echo.ID)
		}
		// A holder of the other type gets its task.
		l := e.lease(dtq.LeaseRequest{Worker: "py-2", Queues: []string{"poly"}, Types: []string{"resize"}}, 1)[0]
		if l.Task.ID != other.ID {
			t.Fatalf("the resize holder leased %s, want %s", l.Task.ID, other.ID)
		}
	})
}

// A holder of some task types reaches a task of its type queued behind
// many of other types in one call (it reads on past those it gives back).
func TestLeaseOfOtherTypesReadsPastThem(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		for range 9 {
			e.enqueue("resize", nil, nil)
		}
		echo := e.enqueue("echo", nil, nil)
		l := e.lease(dtq.LeaseRequest{Worker: "py-1", Types: []string{"echo"}, Max: 2}, 1)[0]
		if l.Task.ID != echo.ID {
			t.Fatalf("leased %s, want %s", l.Task.ID, echo.ID)
		}
		ls := e.lease(dtq.LeaseRequest{Worker: "py-2", Types: []string{"resize"}, Max: 20}, 9)
		for _, l := range ls {
			if l.Task.Type != "resize" {
				t.Fatalf("leased a %s task", l.Task.Type)
			}
		}
	})
}

// A holder of other task types that takes over a task from a lost holder
// records the lost run's crash before it gives the task back: the next
// start is run 2 of the same attempt, its history holds the crash, and the
// run hash keeps no note of the lost run. (Before, the give-back won over
// the takeover: no crash recorded, a stale note left, runs counted from 1
// again.)
func TestLeaseOfOtherTypesRecordsTheCrashItTakesOver(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		ctx := t.Context()
		task := e.enqueue("resize", nil, nil)
		const lapse = 200 * time.Millisecond
		e.lease(dtq.LeaseRequest{Worker: "py-lost", Types: []string{"resize"}, Timeout: lapse}, 1) // then never extended
		eventually(t, 10*time.Second, "a holder of echo tasks takes the lapsed resize task over", func() bool {
			if _, err := e.ls.Lease(ctx, dtq.LeaseRequest{Worker: "py-echo", Types: []string{"echo"}, Timeout: lapse}); err != nil {
				t.Fatal(err)
			}
			got, err := e.c.Get(ctx, task.ID)
			return err == nil && got.Crashes == 1
		})
		got, _ := e.c.Get(ctx, task.ID)
		if got.Status != dtq.StatusQueued || len(got.History) != 1 || got.History[0].Outcome != dtq.OutcomeLost ||
			got.History[0].Worker != "http:py-lost" {
			t.Fatalf("after the takeover: %s, history %+v; want QUEUED with the run recorded lost", got.Status, got.History)
		}
		l := e.lease(dtq.LeaseRequest{Worker: "py-resize", Types: []string{"resize"}}, 1)[0]
		if l.Task.ID != task.ID || l.Task.Attempt != 1 || l.Task.Crashes != 1 {
			t.Fatalf("leased %s attempt %d crashes %d; want %s, attempt 1, crashes 1", l.Task.ID, l.Task.Attempt, l.Task.Crashes, task.ID)
		}
		done, err := e.ls.CompleteLease(ctx, l.Token, nil)
		if err != nil || done.Status != dtq.StatusSucceeded || len(done.History) != 2 || done.History[1].Run != 2 {
			t.Fatalf("completed: %+v %v; want SUCCEEDED in run 2", done, err)
		}
	})
}

// The wait of a holder of some task types sees what arrives after its
// marks: an entry of its types wakes it, one of another type does not, and
// one that was there before the marks is not its to watch (its reads take
// it).
func TestLeaseWatchSeesOnlyItsTypes(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		ctx := t.Context()
		watch := func(queue string, before func(), block time.Duration) bool {
			t.Helper()
			woke, err := dtq.WatchTypes(ctx, e.ls, queue, []string{"echo"}, before, block)
			if err != nil {
				t.Fatal(err)
			}
			return woke
		}
		arrive := func(queue string, types ...string) func() {
			return func() {
				for _, typ := range types {
					e.enqueue(typ, nil, &dtq.EnqueueOpts{Queue: queue})
				}
			}
		}
		if !watch("w1", arrive("w1", "resize", "echo"), 30*time.Second) {
			t.Error("an echo task that arrived after the marks did not wake the watch")
		}
		if watch("w2", arrive("w2", "resize", "resize"), 300*time.Millisecond) {
			t.Error("tasks of another type woke the watch")
		}
		arrive("w3", "echo")()
		if watch("w3", func() {}, 300*time.Millisecond) {
			t.Error("an echo task from before the marks woke the watch")
		}
	})
}
