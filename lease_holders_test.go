package dtq_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/dtq-dev/dtq"
)

// A lease holder is a worker: listed by Admin.Workers (kind http, with
// what it said of itself) while it polls, gone HolderTTL after its last
// call; a Go worker is listed as kind go.
func TestLeaseHoldersAreWorkers(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		ctx := t.Context()
		ls, err := dtq.NewLeaseServer(e.c, &dtq.LeaseServerConfig{HolderTTL: 500 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		if err := ls.Start(ctx); err != nil {
			t.Fatal(err)
		}
		defer ls.Stop(context.Background())
		if _, err := ls.Lease(ctx, dtq.LeaseRequest{Worker: "py-1", Queues: []string{"images"}, Library: "dtq-python/0.1.0",
			Concurrency: 4, Busy: 1, Host: "10.0.0.7"}); err != nil {
			t.Fatal(err)
		}
		e.worker(&dtq.WorkerConfig{ID: "go-1", Queues: []string{"mail"}}, nil)
		find := func(id string) *dtq.WorkerInfo {
			ws, err := e.a.Workers(ctx)
			if err != nil {
				t.Fatal(err)
			}
			for i := range ws {
				if ws[i].ID == id {
					return &ws[i]
				}
			}
			return nil
		}
		eventually(t, 10*time.Second, "the Go worker's heartbeat", func() bool { return find("go-1") != nil })
		h := find("http:py-1")
		if h == nil || h.Kind != dtq.WorkerKindHTTP || h.Library != "dtq-python/0.1.0" || h.Concurrency != 4 || h.Busy != 1 ||
			h.Host != "10.0.0.7" || len(h.Queues) != 1 || h.Queues[0] != "images" {
			t.Fatalf("the lease holder: %+v", h)
		}
		if g := find("go-1"); g.Kind != dtq.WorkerKindGo || !strings.HasPrefix(g.Library, "dtq-go/") {
			t.Fatalf("the Go worker: %+v", g)
		}
		eventually(t, 10*time.Second, "the holder expires after it stopped polling", func() bool { return find("http:py-1") == nil })
		if _, err := ls.Lease(ctx, dtq.LeaseRequest{Worker: "py-1", Library: "bad\nname"}); err == nil {
			t.Fatal("a library with a newline was accepted")
		}
	})
}

// A holder busy with a long task makes no Lease call, yet it extends: it
// stays listed while it extends, and goes HolderTTL after its last call.
func TestBusyLeaseHolderStaysListed(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		ctx := t.Context()
		const ttl = 1500 * time.Millisecond
		ls, err := dtq.NewLeaseServer(e.c, &dtq.LeaseServerConfig{HolderTTL: ttl})
		if err != nil {
			t.Fatal(err)
		}
		if err := ls.Start(ctx); err != nil {
			t.Fatal(err)
		}
		defer ls.Stop(context.Background())
		e.enqueue("render", nil, &dtq.EnqueueOpts{Queue: "long"})
		got, err := ls.Lease(ctx, dtq.LeaseRequest{Worker: "py-busy", Queues: []string{"long"}, Library: "dtq-python/0.1.0", Concurrency: 1, Busy: 0})
		if err != nil || len(got) != 1 {
			t.Fatalf("lease: %v %v", got, err)
		}
		listed := func() bool {
			ws, err := e.a.Workers(ctx)
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range ws {
				if w.ID == "http:py-busy" {
					return w.Library == "dtq-python/0.1.0" // the record the lease wrote, kept
				}
			}
			return false
		}
		for end := time.Now().Add(3 * ttl); time.Now().Before(end); time.Sleep(300 * time.Millisecond) {
			if _, _, err := ls.ExtendLease(ctx, got[0].Token); err != nil {
				t.Fatal(err)
			}
			if !listed() {
				t.Fatal("a holder that extends its lease, with no Lease call for longer than HolderTTL, was dropped from the workers")
			}
		}
		eventually(t, 10*time.Second, "the holder expires after its last call", func() bool { return !listed() })
	})
}
