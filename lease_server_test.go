package dtq_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/dtq-dev/dtq"
)

// A LeaseServer leases only while it runs, runs the schedulers its queues
// need meanwhile, and Stop ends them: with an idle time of an hour, Stop
// returns in time only if it stops them itself.
func TestLeaseServerLifecycle(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		ctx := t.Context()
		ls, err := dtq.NewLeaseServer(e.c, &dtq.LeaseServerConfig{SchedulerIdle: time.Hour})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := ls.Lease(ctx, dtq.LeaseRequest{Worker: "a"}); !errors.Is(err, dtq.ErrLeaseServerStopped) {
			t.Fatalf("lease before Start: %v, want ErrLeaseServerStopped", err)
		}
		if err := ls.Start(ctx); err != nil {
			t.Fatal(err)
		}
		if err := ls.Start(ctx); err == nil {
			t.Fatal("a second Start succeeded")
		}
		first := e.enqueue("echo", nil, nil)
		held, err := ls.Lease(ctx, dtq.LeaseRequest{Worker: "a"})
		if err != nil || len(held) != 1 || held[0].Task.ID != first.ID {
			t.Fatalf("lease: %v %v", held, err)
		}
		// No Go worker runs here: the delayed task becomes due because the
		// server runs the queue's scheduler.
		later := e.enqueue("echo", nil, &dtq.EnqueueOpts{Delay: 100 * time.Millisecond})
		eventually(t, 10*time.Second, "the delayed task is due", func() bool {
			got, err := e.c.Get(ctx, later.ID)
			return err == nil && got.Status == dtq.StatusQueued
		})

		stopCtx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		if err := ls.Stop(stopCtx); err != nil {
			t.Fatalf("stop: %v", err)
		}
		if _, err := ls.Lease(ctx, dtq.LeaseRequest{Worker: "a"}); !errors.Is(err, dtq.ErrLeaseServerStopped) {
			t.Fatalf("lease after Stop: %v, want ErrLeaseServerStopped", err)
		}
		if err := ls.Start(ctx); err == nil {
			t.Fatal("Start after Stop succeeded")
		}
		// What was handed out stays its holder's to settle.
		done, err := ls.CompleteLease(ctx, held[0].Token, nil)
		if err != nil || done.Status != dtq.StatusSucceeded {
			t.Fatalf("complete after Stop: %v %v", done, err)
		}
	})
}
