package main

import (
	"context"
	"io"
	"log/slog"

	"github.com/dtq-dev/dtq"
	"github.com/dtq-dev/dtq/cmd/dtq/internal/metrics"
	"github.com/dtq-dev/dtq/outbox"
	"github.com/spf13/cobra"
)

// newRelayCmd builds `dtq relay`: the outbox relay alone, with health and
// metrics.
func newRelayCmd(out, errOut io.Writer) *cobra.Command {
	return newProcessCmd(out, errOut, role{name: "relay", relay: true},
		"Relay a PostgreSQL outbox to dtq (needs --outbox and --redis)",
		`Relay the committed rows of a PostgreSQL outbox (--outbox postgres://…) to dtq:
each row becomes one task, exactly once, and is deleted once dtq accepted it
(docs/outbox.md). The outbox's tables are created at start if missing. Any
number of relays may run: one is active, the others take over when it stops.
/health, /ready and /metrics are served on --addr. dtq serve, api and worker
relay too when given --outbox.`,
		":8002")
}

// startRelay starts the outbox relay of url (none when url is empty) and
// adds its metrics to m.
func startRelay(ctx context.Context, log *slog.Logger, client *dtq.Client, m *metrics.Metrics, url string) (*outbox.Relay, error) {
	if url == "" {
		return nil, nil
	}
	relay, err := outbox.NewRelay(client, url, &outbox.RelayConfig{Logger: log})
	if err != nil {
		return nil, err
	}
	if err := relay.Start(ctx); err != nil {
		return nil, err
	}
	if err := m.CollectOutbox(relay); err != nil {
		_ = relay.Stop(ctx) // it has relayed nothing of its own yet worth waiting for
		return nil, err
	}
	log.Info("relaying the outbox", "component", "outbox")
	return relay, nil
}
