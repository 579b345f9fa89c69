package outbox_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"

	"github.com/dtq-dev/dtq"
	"github.com/dtq-dev/dtq/internal/redistest"
	"github.com/dtq-dev/dtq/outbox"
)

// The test binary runs as a relay process when childRelayEnv is set:
// "<postgres URL> <redis URL> <namespace> <stall>". With stall "stall" it
// says "stalled" on stdout after dtq accepted its first batch, before the
// batch's rows are deleted, and waits there to be killed.
const childRelayEnv = "DTQ_OUTBOX_TEST_RELAY"

func runChildRelay() int {
	f := strings.Fields(os.Getenv(childRelayEnv))
	if len(f) != 4 {
		fmt.Fprintln(os.Stderr, "child relay: bad", childRelayEnv)
		return 2
	}
	ctx := context.Background()
	r, err := dtq.Connect(ctx, f[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, "child relay:", err)
		return 1
	}
	client, err := dtq.NewClient(r, &dtq.Config{Namespace: f[2]})
	if err != nil {
		fmt.Fprintln(os.Stderr, "child relay:", err)
		return 1
	}
	relay, err := outbox.NewRelay(client, f[0], &outbox.RelayConfig{BatchSize: 100})
	if err != nil {
		fmt.Fprintln(os.Stderr, "child relay:", err)
		return 1
	}
	if f[3] == "stall" {
		outbox.SetAfterSend(relay, func() {
			fmt.Println("stalled")
			select {} // until SIGKILL
		})
	}
	if err := relay.Start(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "child relay:", err)
		return 1
	}
	select {}
}

// startChildRelay runs the test binary as a relay of e's outbox; with stall
// it returns once the relay stalled mid-batch (its first batch in dtq, the
// rows not yet deleted), else at once. The process is killed at cleanup.
func (e *env) startChildRelay(stall bool) *exec.Cmd {
	e.t.Helper()
	mode := "run"
	if stall {
		mode = "stall"
	}
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childRelayEnv+"="+strings.Join([]string{e.url, e.redis, e.ns, mode}, " "))
	cmd.Stderr = os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	out, err := cmd.StdoutPipe()
	if err != nil {
		e.t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	if stall {
		line, err := bufio.NewReader(out).ReadString('\n')
		if err != nil || line != "stalled\n" {
			e.t.Fatalf("child relay said %q, %v; want stalled", line, err)
		}
	}
	return cmd
}

// A relay SIGKILLed mid-batch — after dtq accepted the batch, before its
// rows were deleted — twice in a row, then a third relay: every committed
// row becomes exactly one task, and the handler runs each once. (Without
// the rows' idempotency keys the batch resubmitted after each kill would be
// tasks twice.)
func TestRelayKilledMidBatchExactlyOnce(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "")
	committed := map[int]bool{}
	for tx := range 20 {
		ns := make([]int, 50)
		for i := range ns {
			ns[i] = tx*50 + i
			committed[ns[i]] = true
		}
		if err := e.enqueueTx(ns, false); err != nil {
			t.Fatal(err)
		}
	}
	for kill := range 2 {
		relay := e.startChildRelay(true)
		// Stalled mid-batch: the batch is in dtq, its rows still here.
		if got, rows := len(e.tasks()), e.waiting(); got != 100 || rows != 1000 {
			t.Fatalf("kill %d: %d tasks and %d rows at the stall; want 100 and 1000", kill, got, rows)
		}
		if err := relay.Process.Kill(); err != nil {
			t.Fatal(err)
		}
		relay.Wait()
	}
	e.startChildRelay(false)
	waitFor(t, "every committed row to be relayed", func() bool { return e.waiting() == 0 })
	checkOnce(t, "tasks", e.tasks(), committed)
	checkOnce(t, "handler runs", e.effects(committed), committed)
}

// Redis SIGKILLed while rows wait, and restarted from its append-only
// file: the relay retries its batch until Redis answers, dropping nothing,
// and every committed row becomes exactly one task. (A relay that gave up
// a batch it could not submit would lose its rows.) Redis fsyncs always:
// with everysec it may answer a write it has not yet written to the file
// (postponed behind a slow fsync) and lose it at the kill — a task the
// relay rightly counted as accepted (docs/failure-modes.md, loss windows;
// this test saw it once, under load, with everysec).
func TestRedisKilledExactlyOnce(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t, &redistest.Options{AppendFsync: "always"})
	e := newEnv(t, "redis://"+srv.Addr)
	r := e.startRelay(nil, &outbox.RelayConfig{BatchSize: 100})
	committed := map[int]bool{}
	enqueue := func(from, to int) {
		for n := from; n < to; n += 50 {
			ns := make([]int, 0, 50)
			for i := n; i < min(n+50, to); i++ {
				ns = append(ns, i)
				committed[i] = true
			}
			if err := e.enqueueTx(ns, false); err != nil {
				t.Fatal(err)
			}
		}
	}
	enqueue(0, 500)
	waitFor(t, "the first rows to be relayed", func() bool { return e.waiting() == 0 })
	for round := range 2 {
		if err := srv.Kill(); err != nil {
			t.Fatal(err)
		}
		before := stats(t, r).Errors
		enqueue(1000*(round+1), 1000*(round+1)+500)
		waitFor(t, "the relay to fail against the killed Redis", func() bool { return stats(t, r).Errors > before })
		if n := e.waiting(); n != 500 {
			t.Fatalf("round %d: %d rows waiting while Redis is down; want all 500", round, n)
		}
		if err := srv.Restart(); err != nil {
			t.Fatal(err)
		}
		waitFor(t, "the rows to be relayed after the restart", func() bool { return e.waiting() == 0 })
	}
	checkOnce(t, "tasks", e.tasks(), committed)
	checkOnce(t, "handler runs", e.effects(committed), committed)
}

func stats(t *testing.T, r *outbox.Relay) outbox.Stats {
	t.Helper()
	s, err := r.Stats(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return s
}
