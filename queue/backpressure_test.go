package queue_test

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dtq-dev/dtq/internal/redistest"
	"github.com/dtq-dev/dtq/queue"
)

// A publisher waiting for room does not busy-poll Redis: over 3 seconds of
// waiting it makes only a few calls per second.
func TestWaitingPublisherDoesNotPoll(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t, nil)
	e := &env{Backend: &redistest.Backend{Name: "redis", Client: redistest.Client(t, srv), Namespace: "wait", Server: srv}, t: t}
	q := e.queue("q", nil)
	e.put(q, "a", "blocker", &queue.PutOpts{MaxSize: 1})
	before := commandCalls(t, e)
	done := make(chan error, 1)
	go func() {
		_, err := q.Put(t.Context(), "a", []byte("waiting"), &queue.PutOpts{MaxSize: 1})
		done <- err
	}()
	const wait = 3 * time.Second
	pending(t, done, wait, "put into a full topic")
	calls := commandCalls(t, e) - before
	if perSecond := float64(calls) / wait.Seconds(); perSecond > 4 {
		t.Fatalf("a waiting publisher made %d Redis calls in %v (%.1f/s), want at most 4/s", calls, wait, perSecond)
	}
	t.Logf("waiting publisher: %d Redis calls in %v", calls, wait)
}

// commandCalls sums the calls of the commands package queue sends on its
// publish and receive paths: scripts, BLPOP and XREAD. (INFO commandstats
// also counts the commands a script runs, which are not round trips.)
func commandCalls(t *testing.T, e *env) int {
	t.Helper()
	info, err := redistest.Do(t.Context(), e.Client, "INFO", "commandstats").ToString()
	if err != nil {
		t.Fatal(err)
	}
	total := 0
	for _, line := range strings.Split(info, "\n") {
		name, rest, ok := strings.Cut(line, ":calls=")
		switch name {
		case "cmdstat_evalsha", "cmdstat_eval", "cmdstat_blpop", "cmdstat_xread":
		default:
			continue
		}
		if !ok {
			continue
		}
		n, _ := strconv.Atoi(rest[:strings.IndexByte(rest, ',')])
		total += n
	}
	return total
}
