//go:build faults

package faults

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/dtq-dev/dtq/internal/redistest"
)

// 15. The store under real load: about 1,000 submissions per second over
// HTTP to three workers, while a worker is SIGKILLed, redis-server is
// SIGKILLed and restarted on its AOF (appendfsync always), and another
// worker is SIGKILLed; the killed workers are restarted. Redis stays down
// 1.2 s, under the visibility timeout (3 s). One task in 20
// fails its first attempt (retried), one in 100 fails for good (DEAD).
// Nothing accepted is lost, nothing finishes twice, duplicated executions
// stay within the executions the kills interrupted, the queue's counters
// equal what its tasks say, and no run of a worker that was not killed is
// recorded lost without its handler having started (a claim or start
// whose answer the Redis kill lost: CONTRACT 3.3.1b).
func TestHighRate(t *testing.T) {
	srv, url := standalone(t, &redistest.Options{AppendFsync: "always"})
	const vt, outage = 3 * time.Second, 1200 * time.Millisecond
	r := newRig(t, url, rigOpts{workers: 3, concurrency: 32, visibility: vt})
	stop := r.startLoad(loadOpts{rate: 1600, conc: 128, payload: failingSome})
	began := time.Now()
	warmUp()
	injected, downAt, up := r.killWorkersAndRedis(srv, outage)
	time.Sleep(time.Until(began.Add(3 * loadTime))) // (three times the others' load: the outage costs its share)
	stop()
	elapsed := time.Since(began)
	rep := r.finish(nil)
	rate := float64(rep.Submitted) / elapsed.Seconds()
	record(t, Row{Scenario: "15 ~1,000 submits/s: 2 workers SIGKILLed, redis-server SIGKILL, down 1.2s, AOF restart (always)", Rep: rep,
		Injected: injected, Recovery: Recovery(up, r.ledger.Entries(), r.traces()),
		Notes: fmt.Sprintf("%.0f submissions/s over HTTP for %v; 3 workers × 32; Redis down %v; %d executions interrupted by the kills",
			rate, elapsed.Round(100*time.Millisecond), fmtDur(up.Sub(downAt)), injected)})
	assertInvariants(t, rep, injected, true)
	if len(rep.Phantom) > 0 {
		t.Errorf("%d runs recorded lost whose handler never started, on workers not killed:\n%s", len(rep.Phantom),
			strings.Join(rep.Phantom, "\n"))
	}
	if rep.DeadByDesign == 0 {
		t.Errorf("no task failed by design: the counters of deaths went unchecked")
	}
}

// failingSome is the payload of a high-rate run: a short effect task, of
// which one in 20 fails its first attempt and one in 100 every attempt.
func failingSome(n int) Payload {
	p := Payload{SleepMS: 1 + n%4}
	switch {
	case n%100 == 7:
		p.Die = true
	case n%20 == 3:
		p.Fail = 1
	}
	return p
}
