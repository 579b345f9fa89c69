package main

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/dtq-dev/dtq"
	"github.com/dtq-dev/dtq/internal/pgtest"
	"github.com/dtq-dev/dtq/internal/redistest"
	"github.com/dtq-dev/dtq/outbox"
	"github.com/jackc/pgx/v5"
)

// `dtq relay --outbox` creates the outbox's tables, relays a committed row
// to dtq as one task, and shows it in its metrics.
func TestRelayCommand(t *testing.T) {
	t.Parallel()
	pgURL := pgtest.Database(t, pgtest.Shared(t))
	redisURL := "redis://" + redistest.Shared(t).Addr
	ns := redistest.Namespace(t)
	addr := freeAddr(t)
	log, err := runWhile(t, addr, func() {
		ctx := context.Background()
		conn, err := pgx.Connect(ctx, pgURL)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close(ctx)
		// The relay created the tables as it started.
		if _, err := outbox.Enqueue(ctx, conn, "echo", map[string]int{"n": 1}, &dtq.EnqueueOpts{Queue: "relayed"}); err != nil {
			t.Fatal(err)
		}
		deadline := time.Now().Add(runTimeout)
		for !strings.Contains(scrapeMetrics(t, addr), "dtq_outbox_rows_relayed_total 1") {
			if time.Now().After(deadline) {
				t.Fatalf("the row was not relayed within %v:\n%s", runTimeout, scrapeMetrics(t, addr))
			}
			time.Sleep(20 * time.Millisecond)
		}
		r, err := dtq.Connect(ctx, redisURL)
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		client, err := dtq.NewClient(r, &dtq.Config{Namespace: ns})
		if err != nil {
			t.Fatal(err)
		}
		page, err := client.List(ctx, dtq.ListOpts{Queue: "relayed"})
		if err != nil || len(page.Tasks) != 1 || page.Tasks[0].Type != "echo" {
			t.Fatalf("tasks %+v, %v; want the one relayed", page, err)
		}
		m := scrapeMetrics(t, addr)
		for _, want := range []string{"dtq_outbox_rows_waiting 0", "dtq_outbox_relay_active 1"} {
			if !strings.Contains(m, want) {
				t.Errorf("metrics lack %q", want)
			}
		}
	}, "relay", "--addr", addr, "--redis", redisURL, "--namespace", ns, "--outbox", pgURL)
	if err != nil {
		t.Fatalf("dtq relay: %v\n%s", err, log)
	}
}

// `dtq relay` without an outbox says what it needs.
func TestRelayNeedsOutbox(t *testing.T) {
	t.Parallel()
	root := newRootCmd(io.Discard, io.Discard)
	root.SetArgs([]string{"relay", "--redis", "redis://127.0.0.1:1"})
	err := root.Execute()
	if err == nil || !strings.Contains(err.Error(), "--outbox") {
		t.Fatalf("dtq relay without --outbox: %v", err)
	}
}

func scrapeMetrics(t *testing.T, addr string) string {
	t.Helper()
	res, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
