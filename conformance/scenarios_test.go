package conformance_test

import (
	"bufio"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// scenarios are README.md's list, in its order.
var scenarios = []struct {
	name string
	run  func(e *env)
}{
	{"long_poll", longPoll},
	{"batch_lease", batchLease},
	{"extend", extend},
	{"cancel", cancel},
	{"fail_retryable", failRetryable},
	{"fail_permanent", failPermanent},
	{"retry_after", retryAfter},
	{"timeout", timeout},
	{"stale_lease", staleLease},
	{"crash", crash},
	{"progress", progress},
	{"steps", steps},
	{"type_filter", typeFilter},
	{"limits", limits},
	{"order_key", orderKey},
	{"durable_sleep", durableSleep},
	{"signal", signal},
	{"graceful_stop", gracefulStop},
}

// An idle worker picks up a task submitted after it started polling.
func longPoll(e *env) {
	w := e.start()
	before := e.leaseCalls()
	time.Sleep(1500 * time.Millisecond) // idle: in its long poll
	if idle := e.leaseCalls() - before; e.impl.http && idle > 2 {
		e.t.Fatalf("%d lease calls in 1.5 s idle: polling again and again, not one long poll", idle)
	}
	id := e.submit("echo", `{"x":[1,"two"]}`)
	t := e.awaitStatus(id, "SUCCEEDED")
	if !sameJSON(string(t.Result), `{"echo":{"x":[1,"two"]},"attempt":1}`) || t.Worker != e.holder(w) {
		e.t.Fatalf("result %s by %s, want the echo by %s", t.Result, t.Worker, e.holder(w))
	}
}

// Tasks queued before the worker starts all succeed once; an HTTP worker
// leases them in batches.
func batchLease(e *env) {
	const n = 200
	var tasks []string
	for i := range n {
		tasks = append(tasks, fmt.Sprintf(`{"task_type":"echo","queue":%q,"payload":%d}`, queue, i))
	}
	r := e.api.Must(200, "POST", "/api/v1/tasks/batch", `{"tasks":[`+strings.Join(tasks, ",")+`]}`)
	items, _ := r.Body["results"].([]any)
	if len(items) != n {
		e.t.Fatalf("batch: %s", r.Raw)
	}
	e.start("--concurrency", "20")
	for i, it := range items {
		tk, _ := it.(map[string]any)["task"].(map[string]any)
		id, _ := tk["id"].(string)
		t := e.awaitStatus(id, "SUCCEEDED")
		if !sameJSON(string(t.Result), fmt.Sprintf(`{"echo":%d,"attempt":1}`, i)) || len(t.History) != 1 {
			e.t.Fatalf("task %d: %+v", i, t)
		}
	}
	if e.impl.http {
		if calls := e.leaseCalls(); calls > n/4 {
			e.t.Fatalf("%d lease calls for %d tasks at concurrency 20: not leased in batches", calls, n)
		}
	}
}

// leaseCalls counts the POST /api/v1/leases calls the API answered.
func (e *env) leaseCalls() int {
	r := e.api.Must(200, "GET", "/metrics", "")
	total := 0
	sc := bufio.NewScanner(strings.NewReader(string(r.Raw)))
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, `dtq_http_requests_total{`) && strings.Contains(line, `route="POST /api/v1/leases"`) {
			f := strings.Fields(line)
			n, _ := strconv.ParseFloat(f[len(f)-1], 64)
			total += int(n)
		}
	}
	return total
}

// A task running 3× the lease timeout succeeds on attempt 1, no crash.
func extend(e *env) {
	e.start("--lease-seconds", "1")
	id := e.submit("sleep", `{"seconds":3}`)
	t := e.awaitStatus(id, "SUCCEEDED")
	if t.Attempt != 1 || t.Crashes != 0 || len(t.History) != 1 {
		e.t.Fatalf("a long task under a short lease: %+v, want attempt 1, no crash", t)
	}
}

// A running task's cancellation reaches its handler, freeing the worker.
func cancel(e *env) {
	e.start("--concurrency", "1")
	id := e.submit("sleep", `{"seconds":300}`)
	e.awaitStatus(id, "RUNNING")
	e.api.Must(200, "POST", "/api/v1/tasks/"+id+"/cancel", "")
	e.awaitStatus(id, "CANCELLED")
	// the one slot is free again: the handler stopped
	next := e.submit("echo", `1`)
	e.awaitStatus(next, "SUCCEEDED")
}

// A handler's ordinary error is retried with backoff.
func failRetryable(e *env) {
	e.start()
	id := e.submit("fail", `{"times":2}`, `"max_attempts":5`)
	t := e.awaitStatus(id, "SUCCEEDED")
	if t.Attempt != 3 || !sameJSON(string(t.Result), `{"attempt":3}`) ||
		!slices.Equal(t.outcomes(), []string{"retried", "retried", "succeeded"}) ||
		!strings.Contains(t.History[0].Error, "fail on attempt 1") || !strings.Contains(t.History[1].Error, "fail on attempt 2") {
		e.t.Fatalf("failed twice, then succeeded: %+v", t)
	}
}

// A permanent error is DEAD at once, its error kept.
func failPermanent(e *env) {
	e.start()
	id := e.submit("fail", `{"permanent":true}`, `"max_attempts":5`)
	t := e.awaitStatus(id, "DEAD")
	if t.Attempt != 1 || !strings.Contains(t.LastError, "fail on attempt 1") || !slices.Equal(t.outcomes(), []string{"dead"}) {
		e.t.Fatalf("a permanent failure: %+v", t)
	}
}

// A retry after a given time starts no sooner.
func retryAfter(e *env) {
	e.start()
	id := e.submit("fail", `{"times":1,"retry_after":1.5}`, `"max_attempts":3`)
	t := e.awaitStatus(id, "SUCCEEDED")
	if t.Attempt != 2 || len(t.History) != 2 {
		e.t.Fatalf("retried once: %+v", t)
	}
	if gap := t.History[1].StartedAt.Sub(t.History[0].FinishedAt); gap < 1400*time.Millisecond {
		e.t.Fatalf("the retry started %v after the failure, want ≥ 1.5 s (the retry_after asked for)", gap)
	}
}

// A task whose timeout passes is stopped and fails.
func timeout(e *env) {
	e.start()
	id := e.submit("sleep", `{"seconds":60}`, `"timeout_seconds":1`, `"max_attempts":1`)
	t := e.awaitStatus(id, "DEAD")
	if t.Attempt != 1 || t.Crashes != 0 {
		e.t.Fatalf("a task past its timeout: %+v", t)
	}
}

// A worker frozen past its lease loses the task; thawed, its late outcome
// is refused and it goes on working.
func staleLease(e *env) {
	a := e.start("--lease-seconds", "1", "--concurrency", "1")
	id := e.submit("sleep", `{"seconds":2}`)
	e.await(id, "RUNNING on "+a.name, func(t task) bool { return t.Status == "RUNNING" && t.Worker == e.holder(a) })
	a.signal(e.t, syscall.SIGSTOP)
	b := e.start("--lease-seconds", "1", "--concurrency", "1")
	t := e.awaitStatus(id, "SUCCEEDED")
	a.signal(e.t, syscall.SIGCONT)
	if t.Worker != e.holder(b) || t.Crashes != 1 || !slices.Equal(t.outcomes(), []string{"lost", "succeeded"}) {
		e.t.Fatalf("taken over from the frozen worker: %+v", t)
	}
	time.Sleep(3 * time.Second) // the thawed worker's handler ends and its outcome is refused
	if again := e.get(id); again.Status != "SUCCEEDED" || len(again.History) != 2 || again.Worker != e.holder(b) {
		e.t.Fatalf("after the thawed worker's late outcome: %+v", again)
	}
	b.signal(e.t, syscall.SIGTERM)
	<-b.exited()
	next := e.submit("echo", `2`)
	if t := e.awaitStatus(next, "SUCCEEDED"); t.Worker != e.holder(a) {
		e.t.Fatalf("the thawed worker does not go on: %+v", t)
	}
}

// A worker killed mid-task: the task succeeds on another, one crash.
func crash(e *env) {
	a := e.start("--lease-seconds", "1")
	id := e.submit("sleep", `{"seconds":2}`)
	e.await(id, "RUNNING", func(t task) bool { return t.Status == "RUNNING" && t.Worker == e.holder(a) })
	a.signal(e.t, syscall.SIGKILL)
	b := e.start("--lease-seconds", "1")
	t := e.awaitStatus(id, "SUCCEEDED")
	if t.Worker != e.holder(b) || t.Crashes != 1 || t.Attempt != 1 {
		e.t.Fatalf("after its worker was killed: %+v", t)
	}
}

// The handler's progress is on the task while it runs.
func progress(e *env) {
	e.start()
	id := e.submit("progress", `{"seconds":3}`)
	e.await(id, "showing its progress", func(t task) bool {
		return t.Status == "RUNNING" && t.Progress != nil && t.Progress.Fraction == 0.5 && t.Progress.Note == "half"
	})
	e.awaitStatus(id, "SUCCEEDED")
}

// A retried task skips its recorded step.
func steps(e *env) {
	e.start()
	id := e.submit("steps", `{"fail_between":true}`, `"max_attempts":3`)
	t := e.awaitStatus(id, "SUCCEEDED")
	if t.Attempt != 2 || !sameJSON(string(t.Result), `{"one":{"n":1},"two":{"n":2},"ran":["two"]}`) {
		e.t.Fatalf("steps across a retry: attempt %d, result %s", t.Attempt, t.Result)
	}
}

// A worker of some types leaves the others queued.
func typeFilter(e *env) {
	e.start("--types", "echo")
	other := e.submit("fail", `{"permanent":true}`)
	id := e.submit("echo", `3`)
	e.awaitStatus(id, "SUCCEEDED")
	time.Sleep(time.Second)
	if t := e.get(other); t.Status != "QUEUED" || t.Attempt != 0 || len(t.History) != 0 {
		e.t.Fatalf("a task of a type the worker does not run: %+v", t)
	}
}

// A queue limited to one running task never runs two at once.
func limits(e *env) {
	e.api.Must(200, "PUT", "/api/v1/limits/"+queue, `{"max_running":1}`)
	e.start("--concurrency", "4")
	var runs [][2]time.Time
	var ids []string
	for range 4 {
		ids = append(ids, e.submit("sleep", `{"seconds":0.3}`))
	}
	for _, id := range ids {
		t := e.awaitStatus(id, "SUCCEEDED")
		runs = append(runs, [2]time.Time{t.History[0].StartedAt, t.History[0].FinishedAt})
	}
	slices.SortFunc(runs, func(a, b [2]time.Time) int { return a[0].Compare(b[0]) })
	for i := 1; i < len(runs); i++ {
		if runs[i][0].Before(runs[i-1][1]) {
			e.t.Fatalf("two tasks ran at once under max_running 1: %v", runs)
		}
	}
}

// Tasks of one order key run one at a time, in submission order, while
// another key's run beside them (the server hands them out: a worker of
// any language follows it).
func orderKey(e *env) {
	e.start("--concurrency", "4")
	keys := []string{"acct-1", "acct-2"}
	ids := map[string][]string{}
	for range 4 {
		for _, k := range keys {
			ids[k] = append(ids[k], e.submit("sleep", `{"seconds":0.2}`, fmt.Sprintf(`"order_key":%q`, k)))
		}
	}
	runs := map[string][][2]time.Time{}
	for _, k := range keys {
		for _, id := range ids[k] {
			t := e.awaitStatus(id, "SUCCEEDED")
			runs[k] = append(runs[k], [2]time.Time{t.History[0].StartedAt, t.History[0].FinishedAt})
		}
		for i := 1; i < len(runs[k]); i++ {
			if runs[k][i][0].Before(runs[k][i-1][1]) {
				e.t.Fatalf("key %s: task %d started before task %d ended: %v", k, i, i-1, runs[k])
			}
		}
	}
	a, b := runs[keys[0]], runs[keys[1]]
	if a[len(a)-1][1].Before(b[0][0]) || b[len(b)-1][1].Before(a[0][0]) {
		e.t.Fatalf("the keys ran one after the other, not side by side: %v %v", a, b)
	}
}

// A durable sleep suspends the task, its worker free meanwhile.
func durableSleep(e *env) {
	e.start("--concurrency", "1")
	id := e.submit("nap", `{"seconds":3}`)
	e.await(id, "suspended", func(t task) bool { return t.Status == "SCHEDULED" && t.Suspended != nil && t.Suspended.For == "sleep" })
	other := e.submit("echo", `4`)
	e.awaitStatus(other, "SUCCEEDED") // the one slot was free during the nap
	t := e.awaitStatus(id, "SUCCEEDED")
	if !sameJSON(string(t.Result), `{"napped":true,"attempt":1}`) || !slices.Equal(t.outcomes(), []string{"suspended", "succeeded"}) {
		e.t.Fatalf("after the nap: %+v", t)
	}
}

// A task waiting for a signal ends with its payload.
func signal(e *env) {
	e.start()
	id := e.submit("wait", `{"timeout":60}`)
	e.await(id, "waiting for its signal", func(t task) bool { return t.Suspended != nil && t.Suspended.For == "signal" })
	e.api.Must(200, "POST", "/api/v1/tasks/"+id+"/signals/go", `{"payload":{"k":"v"}}`)
	if t := e.awaitStatus(id, "SUCCEEDED"); !sameJSON(string(t.Result), `{"signal":{"k":"v"}}`) {
		e.t.Fatalf("after the signal: %s", t.Result)
	}
}

// SIGTERM: the running task completes, nothing more is taken, the worker
// says stopped and exits 0.
func gracefulStop(e *env) {
	w := e.start("--grace-seconds", "10")
	// SIGTERM once the handler runs (its progress shows), not merely once
	// the task is RUNNING: a task started the instant a stop begins, before
	// any handler took it, is the reclaim's (after the visibility timeout).
	id := e.submit("progress", `{"seconds":2}`)
	e.await(id, "running its handler", func(t task) bool { return t.Status == "RUNNING" && t.Progress != nil })
	w.signal(e.t, syscall.SIGTERM)
	time.Sleep(500 * time.Millisecond)
	after := e.submit("echo", `5`)
	select {
	case err := <-w.exited():
		if err != nil {
			e.t.Fatalf("the worker's exit after SIGTERM: %v", err)
		}
	case <-time.After(20 * time.Second):
		e.t.Fatal("the worker did not exit within 20 s of SIGTERM")
	}
	if !w.printed("stopped") {
		e.t.Fatal("the worker exited without printing stopped")
	}
	if t := e.get(id); t.Status != "SUCCEEDED" || t.Crashes != 0 || len(t.History) != 1 {
		e.t.Fatalf("the task running at SIGTERM: %+v", t)
	}
	if t := e.get(after); t.Status != "QUEUED" || len(t.History) != 0 {
		e.t.Fatalf("a task submitted after SIGTERM: %+v", t)
	}
}
