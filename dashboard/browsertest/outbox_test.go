package browsertest

import (
	"context"
	"strings"
	"testing"

	"github.com/dtq-dev/dtq"
	"github.com/dtq-dev/dtq/internal/pgtest"
	"github.com/dtq-dev/dtq/outbox"
	"github.com/jackc/pgx/v5"
)

// A process run with --outbox shows the outbox's line on the overview:
// rows waiting, the lag, which process relays it, and a row dtq refused
// (here a payload over --max-payload-bytes) once the relay marked it
// failed, without a reload.
func TestOverviewShowsOutbox(t *testing.T) {
	t.Parallel()
	url := pgtest.Database(t, pgtest.Shared(t))
	p := start(t, nil, "serve", "--addr", "127.0.0.1:0", "--outbox", url, "--max-payload-bytes", "100")
	tb := newTab(t, 1280, 800)
	tb.open(p.URL + "/")
	tb.waitFor("the outbox line", `!document.querySelector('.outbox').hidden && document.querySelector('.outbox-waiting').textContent === '0'`)
	if got := tb.text(".outbox"); !strings.Contains(got, "lag 0 ms") || !strings.Contains(got, "this process relays it") {
		t.Errorf("outbox line %q: want a lag of 0 ms, relayed by this process", got)
	}
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := outbox.Enqueue(ctx, conn, "echo", map[string]string{"pad": strings.Repeat("x", 200)}, &dtq.EnqueueOpts{}); err != nil {
		t.Fatal(err)
	}
	tb.waitFor("the failed row", `document.querySelector('.outbox').textContent.includes('1 failed')`)
	tb.noScriptRan("Overview")
}
