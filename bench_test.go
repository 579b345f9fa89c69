package dtq_test

import (
	"context"
	"fmt"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/dtq-dev/dtq"
	"github.com/dtq-dev/dtq/internal/redisconn"
	"github.com/dtq-dev/dtq/internal/redistest"
	"github.com/dtq-dev/dtq/internal/store"
	"github.com/redis/rueidis"
)

// Benchmarks of the task engine against their own redis-server. Besides
// ns/op (per task) they report tasks/s and redis-cpu-µs/task: the
// redis-server process's user+sys CPU per task (INFO cpu), everything Redis
// spent — commands, scripts, socket I/O. (The engine mixes scripts with the
// same commands sent plain, so INFO commandstats cannot separate client
// calls from the commands scripts run; process CPU is the honest measure,
// and the stricter one.) go-cpu-µs/task is this test process's user+sys
// CPU per task: the engine's client and worker, and the benchmark's own
// goroutines.
//
// Run: go test -run '^$' -bench . -benchtime 100000x .

const benchPayload = `{"order_id":"123456","action":"charge","amount_cents":4200,"currency":"EUR"}`

type cpu struct{ proc, self float64 }

// selfCPU is this process's user+sys CPU so far, µs: the engine's client
// and workers (and the benchmark's own goroutines).
func selfCPU() float64 {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e3
}

func redisCPU(b *testing.B, c rueidis.Client) cpu {
	info, err := c.Do(context.Background(), c.B().Info().Section("cpu").Build()).ToString()
	if err != nil {
		b.Fatal(err)
	}
	r := cpu{self: selfCPU()}
	for _, line := range strings.Split(info, "\r\n") {
		name, rest, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		switch name {
		case "used_cpu_user", "used_cpu_sys":
			f, _ := strconv.ParseFloat(rest, 64)
			r.proc += f * 1e6
		}
	}
	return r
}

func reportCPU(b *testing.B, c rueidis.Client, before cpu, start time.Time, n int) {
	after := redisCPU(b, c)
	if os.Getenv("DTQ_BENCH_CMDSTATS") != "" {
		logCommandStats(b, c, n)
	}
	if os.Getenv("DTQ_BENCH_SCRIPTS") != "" {
		logScriptTimes(b, c, n)
	}
	b.ReportMetric(float64(n)/time.Since(start).Seconds(), "tasks/s")
	b.ReportMetric((after.proc-before.proc)/float64(n), "redis-cpu-µs/task")
	b.ReportMetric((after.self-before.self)/float64(n), "go-cpu-µs/task")
}

// logScriptTimes logs, from the slow log (every command, DTQ_BENCH_SCRIPTS
// set), the Redis time per task of each script and of the commands sent
// on their own. (The slow log's own cost slows the run: read the shares,
// not the rate.)
func logScriptTimes(b *testing.B, c rueidis.Client, n int) {
	ctx := context.Background()
	entries, err := c.Do(ctx, c.B().SlowlogGet().Count(-1).Build()).ToArray()
	if err != nil {
		b.Fatal(err)
	}
	_ = c.Do(ctx, c.B().ConfigSet().ParameterValue().ParameterValue("slowlog-log-slower-than", "10000").Build())
	usec, calls := map[string]int64{}, map[string]int64{}
	for _, e := range entries {
		f, err := e.ToArray()
		if err != nil || len(f) < 4 {
			continue
		}
		d, _ := f[2].AsInt64()
		args, _ := f[3].AsStrSlice()
		if len(args) == 0 {
			continue
		}
		name := strings.ToLower(args[0])
		if name == "evalsha" && len(args) > 1 {
			name = "script " + store.ScriptName(args[1])
		}
		usec[name] += d
		calls[name]++
	}
	var lines []string
	for name, u := range usec {
		lines = append(lines, fmt.Sprintf("%-22s %7.2f µs/task %6.3f calls/task", name, float64(u)/float64(n), float64(calls[name])/float64(n)))
	}
	sort.Strings(lines)
	fmt.Fprintf(os.Stderr, "%s: Redis time by script over %d tasks (%d commands logged):\n%s\n", b.Name(), n, len(entries), strings.Join(lines, "\n"))
}

// logCommandStats logs INFO commandstats as µs and calls per task (with
// DTQ_BENCH_CMDSTATS set). Commands run by scripts count both under their
// own name and inside the script's time.
func logCommandStats(b *testing.B, c rueidis.Client, n int) {
	info, err := c.Do(context.Background(), c.B().Info().Section("commandstats").Build()).ToString()
	if err != nil {
		b.Fatal(err)
	}
	var lines []string
	for _, line := range strings.Split(info, "\r\n") {
		name, rest, ok := strings.Cut(line, ":")
		if !ok || !strings.HasPrefix(name, "cmdstat_") {
			continue
		}
		var calls, usec float64
		for _, kv := range strings.Split(rest, ",") {
			k, v, _ := strings.Cut(kv, "=")
			f, _ := strconv.ParseFloat(v, 64)
			switch k {
			case "calls":
				calls = f
			case "usec":
				usec = f
			}
		}
		lines = append(lines, fmt.Sprintf("%-22s %7.2f µs/task %6.2f calls/task", strings.TrimPrefix(name, "cmdstat_"), usec/float64(n), calls/float64(n)))
	}
	fmt.Fprintf(os.Stderr, "%s: commandstats over %d tasks (the measured work):\n%s\n", b.Name(), n, strings.Join(lines, "\n"))
}

// benchClient is a Client on a redis-server of its own.
// DTQ_BENCH_NO_HISTORY=1 turns its stored history off (Config.DisableHistory):
// the A/B of what the history costs.
func benchClient(b *testing.B) (*dtq.Client, rueidis.Client) {
	srv := redistest.Start(b, nil)
	rc := redistest.Client(b, srv)
	c, err := dtq.NewClient(redisconn.Wrap(rc), &dtq.Config{DisableHistory: os.Getenv("DTQ_BENCH_NO_HISTORY") == "1"})
	if err != nil {
		b.Fatal(err)
	}
	return c, rc
}

func enqueueN(b *testing.B, c *dtq.Client, n, goroutines int) {
	var next atomic.Int64
	var wg sync.WaitGroup
	for range goroutines {
		wg.Go(func() {
			for next.Add(1) <= int64(n) {
				if _, err := c.Enqueue(context.Background(), "noop", []byte(benchPayload), nil); err != nil {
					b.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
}

func enqueueManyN(b *testing.B, c *dtq.Client, n, batch int) {
	reqs := make([]dtq.EnqueueRequest, batch)
	for i := range reqs {
		reqs[i] = dtq.EnqueueRequest{Type: "noop", Payload: []byte(benchPayload)}
	}
	for done := 0; done < n; done += batch {
		res, err := c.EnqueueMany(context.Background(), reqs[:min(batch, n-done)])
		if err != nil {
			b.Fatal(err)
		}
		for _, r := range res {
			if r.Err != nil {
				b.Fatal(r.Err)
			}
		}
	}
}

// drain runs a worker with a no-op handler until n tasks succeeded.
func drain(b *testing.B, c *dtq.Client, n, concurrency int) {
	drainWith(b, c, n, concurrency, nil)
}

// drainWith is drain with work (nil: none) done by each handler first.
func drainWith(b *testing.B, c *dtq.Client, n, concurrency int, work func(context.Context) error) {
	var done atomic.Int64
	finished := make(chan struct{})
	w, err := dtq.NewWorker(c, &dtq.WorkerConfig{Concurrency: concurrency})
	if err != nil {
		b.Fatal(err)
	}
	w.Handle("noop", func(ctx context.Context, _ *dtq.Task) (any, error) {
		if work != nil {
			if err := work(ctx); err != nil {
				return nil, err
			}
		}
		if done.Add(1) == int64(n) {
			close(finished)
		}
		return nil, nil
	})
	w.Start(context.Background())
	<-finished
	// Wait until the last outcomes are recorded.
	for {
		st, err := dtq.NewAdmin(c).Stats(context.Background(), dtq.DefaultQueue)
		if err == nil && st.Succeeded >= int64(n) {
			break
		}
		time.Sleep(time.Millisecond)
	}
	w.Stop(context.Background())
}

// measure runs work with the benchmark timer on and reports tasks/s and
// Redis CPU per task over it.
func measure(b *testing.B, rc rueidis.Client, work func()) {
	if os.Getenv("DTQ_BENCH_CMDSTATS") != "" {
		// commandstats of the measured work only
		if err := rc.Do(context.Background(), rc.B().ConfigResetstat().Build()).Error(); err != nil {
			b.Fatal(err)
		}
	}
	if os.Getenv("DTQ_BENCH_SCRIPTS") != "" {
		// every command in the slow log: Redis time per script
		for _, cmd := range []rueidis.Completed{
			rc.B().ConfigSet().ParameterValue().ParameterValue("slowlog-log-slower-than", "0").ParameterValue("slowlog-max-len", "1000000").Build(),
			rc.B().SlowlogReset().Build(),
		} {
			if err := rc.Do(context.Background(), cmd).Error(); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ResetTimer()
	before, start := redisCPU(b, rc), time.Now()
	work()
	b.StopTimer()
	reportCPU(b, rc, before, start, b.N)
}

// BenchmarkEnqueue: single Enqueue calls from 50 goroutines.
func BenchmarkEnqueue(b *testing.B) {
	c, rc := benchClient(b)
	measure(b, rc, func() { enqueueN(b, c, b.N, 50) })
}

// BenchmarkEnqueue10: single Enqueue calls from 10 goroutines
// (peerbench's enqueue at c=10, where each call waits for its round trip
// and the client's own CPU per call sets the pace).
func BenchmarkEnqueue10(b *testing.B) {
	c, rc := benchClient(b)
	measure(b, rc, func() { enqueueN(b, c, b.N, 10) })
}

// BenchmarkEnqueueSerial: single Enqueue calls from one goroutine, one at
// a time (peerbench's enqueue at c=1).
func BenchmarkEnqueueSerial(b *testing.B) {
	c, rc := benchClient(b)
	measure(b, rc, func() { enqueueN(b, c, b.N, 1) })
}

// BenchmarkEnqueueMany: batches of 1000 from one goroutine.
func BenchmarkEnqueueMany(b *testing.B) {
	c, rc := benchClient(b)
	measure(b, rc, func() { enqueueManyN(b, c, b.N, 1000) })
}

// BenchmarkDrain: a pre-filled queue drained by one worker (concurrency 50,
// no-op handler): claim + start + complete.
func BenchmarkDrain(b *testing.B) {
	c, rc := benchClient(b)
	enqueueManyN(b, c, b.N, 1000)
	measure(b, rc, func() { drain(b, c, b.N, 50) })
}

// BenchmarkDrain10: BenchmarkDrain with a worker of concurrency 10, where
// batches are small and the fixed cost of each call shows.
func BenchmarkDrain10(b *testing.B) {
	c, rc := benchClient(b)
	enqueueManyN(b, c, b.N, 1000)
	measure(b, rc, func() { drain(b, c, b.N, 10) })
}

// BenchmarkDrainLimit: BenchmarkDrain with and without a limit that caps
// nothing — a concurrency limit of 50 (the worker's concurrency) or a rate
// of 1,000,000/s, the queue's or the task type's — so the difference is the
// limits' own cost. "none" runs the unlimited path, whose commands are
// those of BenchmarkDrain.
func BenchmarkDrainLimit(b *testing.B) {
	for _, limit := range []string{"none", "max_running=50", "rate=1000000/s", "type:max_running=50", "type:rate=1000000/s"} {
		b.Run(limit, func(b *testing.B) {
			c, rc := benchClient(b)
			var err error
			ctx := context.Background()
			switch limit {
			case "max_running=50":
				err = dtq.NewAdmin(c).SetLimits(ctx, dtq.DefaultQueue, dtq.LimitSpec{MaxRunning: 50})
			case "rate=1000000/s":
				err = dtq.NewAdmin(c).SetLimits(ctx, dtq.DefaultQueue, dtq.LimitSpec{Rate: 1_000_000, Per: time.Second, Burst: 1000})
			case "type:max_running=50":
				err = dtq.NewAdmin(c).SetTypeLimits(ctx, dtq.DefaultQueue, "noop", dtq.LimitSpec{MaxRunning: 50})
			case "type:rate=1000000/s":
				err = dtq.NewAdmin(c).SetTypeLimits(ctx, dtq.DefaultQueue, "noop", dtq.LimitSpec{Rate: 1_000_000, Per: time.Second, Burst: 1000})
			}
			if err != nil {
				b.Fatal(err)
			}
			enqueueManyN(b, c, b.N, 1000)
			measure(b, rc, func() { drain(b, c, b.N, 50) })
		})
	}
}

// enqueueWith queues n "noop" tasks, task i with opts(i), 1,000 per
// EnqueueMany.
func enqueueWith(b *testing.B, c *dtq.Client, n int, opts func(i int) *dtq.EnqueueOpts) {
	reqs := make([]dtq.EnqueueRequest, 1000)
	for done := 0; done < n; done += len(reqs) {
		batch := reqs[:min(len(reqs), n-done)]
		for i := range batch {
			batch[i] = dtq.EnqueueRequest{Type: "noop", Payload: []byte(benchPayload), Opts: opts(done + i)}
		}
		res, err := c.EnqueueMany(context.Background(), batch)
		if err != nil {
			b.Fatal(err)
		}
		for _, r := range res {
			if r.Err != nil {
				b.Fatal(r.Err)
			}
		}
	}
}

// BenchmarkDrainGroups: BenchmarkDrain of tasks submitted with a group —
// one group (its window of 10 in the bands feeds the worker's 50 slots),
// or 100 groups taking turns — against none; the enqueue is not measured.
func BenchmarkDrainGroups(b *testing.B) {
	for _, groups := range []int{0, 1, 100} {
		b.Run(fmt.Sprintf("groups=%d", groups), func(b *testing.B) {
			c, rc := benchClient(b)
			enqueueWith(b, c, b.N, func(i int) *dtq.EnqueueOpts {
				if groups == 0 {
					return nil
				}
				return &dtq.EnqueueOpts{Group: fmt.Sprintf("g%d", i%groups)}
			})
			measure(b, rc, func() { drain(b, c, b.N, 50) })
		})
	}
}

// BenchmarkDrainOrdered: BenchmarkDrain of tasks submitted with an order
// key — 1,000 keys active at once, each task's key (i mod keys), so each
// key has b.N/keys tasks in line — against none, at concurrency 50; the
// enqueue is not measured. Issue 34's target: keys=1000 at least half of
// keys=0's rate, in the same run. "records" is the floor under it: the
// same tasks with a record from their submission and no order key (a
// limit key of 1,000, no limit set: the path of a task with a hash, which
// a task of an order key takes once it waited). "keys=1" puts every task in
// one key's line: a key's hand-over latency sets its rate (run it with
// -benchtime 2000x).
func BenchmarkDrainOrdered(b *testing.B) {
	for _, keys := range []int{0, 1000, -1000, 1} {
		name := fmt.Sprintf("keys=%d", keys)
		if keys < 0 {
			name = "records"
		}
		b.Run(name, func(b *testing.B) {
			c, rc := benchClient(b)
			enqueueWith(b, c, b.N, func(i int) *dtq.EnqueueOpts {
				switch {
				case keys > 0:
					return &dtq.EnqueueOpts{OrderKey: fmt.Sprintf("k%d", i%keys)}
				case keys < 0:
					return &dtq.EnqueueOpts{LimitKey: fmt.Sprintf("k%d", i%-keys)}
				}
				return nil
			})
			measure(b, rc, func() { drain(b, c, b.N, 50) })
		})
	}
}

// BenchmarkLifecycle: the whole life of a task — enqueue (50 goroutines)
// and drain (concurrency 50) at once; Redis CPU per task covers enqueue +
// claim + complete.
func BenchmarkLifecycle(b *testing.B) {
	c, rc := benchClient(b)
	lifecycle(b, c, rc)
}

// BenchmarkLifecycleShortRetention: BenchmarkLifecycle with finished tasks
// kept for 1 ms (peerbench's tuned profile), so that Redis's memory does not
// grow with the records kept: the default 24 h keeps every record of the
// run, and a growing working set costs Redis CPU of its own (page faults
// and cache misses: an HSET of 30 new 250-byte fields costs ~3 µs into a
// small hash, 22-53 µs into one of 60,000 on the 2-vCPU VM of
// docs/performance.md).
func BenchmarkLifecycleShortRetention(b *testing.B) {
	c, rc := benchClientRetention(b, time.Millisecond)
	lifecycle(b, c, rc)
}

// benchClientRetention is benchClient keeping finished tasks for d.
func benchClientRetention(b *testing.B, d time.Duration) (*dtq.Client, rueidis.Client) {
	srv := redistest.Start(b, nil)
	rc := redistest.Client(b, srv)
	c, err := dtq.NewClient(redisconn.Wrap(rc), &dtq.Config{Retention: d})
	if err != nil {
		b.Fatal(err)
	}
	return c, rc
}

func lifecycle(b *testing.B, c *dtq.Client, rc rueidis.Client) {
	measure(b, rc, func() {
		var wg sync.WaitGroup
		wg.Go(func() { enqueueN(b, c, b.N, 50) })
		drain(b, c, b.N, 50)
		wg.Wait()
	})
}

// BenchmarkLatency: one task at a time on an idle system; reports the
// percentiles of enqueue call → handler start.
func BenchmarkLatency(b *testing.B) {
	c, _ := benchClient(b)
	starts := make(chan time.Time, 1)
	w, _ := dtq.NewWorker(c, &dtq.WorkerConfig{Concurrency: 1})
	w.Handle("noop", func(context.Context, *dtq.Task) (any, error) { starts <- time.Now(); return nil, nil })
	w.Start(context.Background())
	defer w.Stop(context.Background())
	// Warm up: connections, scripts, the scheduler.
	for range 50 {
		c.Enqueue(context.Background(), "noop", nil, nil)
		<-starts
	}
	lat := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for range b.N {
		t0 := time.Now()
		if _, err := c.Enqueue(context.Background(), "noop", nil, nil); err != nil {
			b.Fatal(err)
		}
		lat = append(lat, (<-starts).Sub(t0))
		time.Sleep(200 * time.Microsecond) // idle between tasks
	}
	b.StopTimer()
	reportLatency(b, lat)
}

// reportLatency reports the p50, p95 and p99 of lat in ms.
func reportLatency(b *testing.B, lat []time.Duration) {
	slices.Sort(lat)
	pct := func(p float64) float64 { return float64(lat[int(p*float64(len(lat)-1))].Microseconds()) / 1000 }
	b.ReportMetric(pct(0.50), "p50-ms")
	b.ReportMetric(pct(0.95), "p95-ms")
	b.ReportMetric(pct(0.99), "p99-ms")
}

// BenchmarkDelayLateness: one delayed task (50 ms) at a time on an idle
// system; reports how late its handler started after its due time, both
// read from the task (Redis clock, millisecond resolution).
func BenchmarkDelayLateness(b *testing.B) {
	c, _ := benchClient(b)
	done := make(chan string, 1)
	w, _ := dtq.NewWorker(c, &dtq.WorkerConfig{Concurrency: 1})
	w.Handle("noop", func(_ context.Context, t *dtq.Task) (any, error) { done <- t.ID; return nil, nil })
	w.Start(context.Background())
	defer w.Stop(context.Background())
	late := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for range b.N {
		res, err := c.Enqueue(context.Background(), "noop", nil, &dtq.EnqueueOpts{Delay: 50 * time.Millisecond})
		if err != nil {
			b.Fatal(err)
		}
		id := <-done
		var task *dtq.Task
		for { // the outcome is recorded just after the handler returns
			if task, err = c.Get(context.Background(), id); err == nil && task.Status == dtq.StatusSucceeded {
				break
			}
			time.Sleep(time.Millisecond)
		}
		late = append(late, task.History[0].StartedAt.Sub(*res.Task.ScheduledAt))
	}
	b.StopTimer()
	slices.Sort(late)
	pct := func(p float64) float64 { return float64(late[int(p*float64(len(late)-1))].Microseconds()) / 1000 }
	b.ReportMetric(pct(0.50), "p50-late-ms")
	b.ReportMetric(pct(0.99), "p99-late-ms")
	b.ReportMetric(pct(1), "max-late-ms")
}

// BenchmarkTickLateness: a schedule of @every 1s on an idle worker (one tick
// per op: -benchtime 20x takes 20 s); reports how late each tick's task was
// created (its created time minus its tick, both on the Redis clock, 1 ms
// resolution) and how late its handler started.
func BenchmarkTickLateness(b *testing.B) {
	c, _ := benchClient(b)
	started := make(chan *dtq.Task, 4)
	w, _ := dtq.NewWorker(c, &dtq.WorkerConfig{Concurrency: 1})
	w.Handle("tick", func(_ context.Context, t *dtq.Task) (any, error) { started <- t; return nil, nil })
	w.Start(context.Background())
	defer w.Stop(context.Background())
	if _, err := dtq.NewAdmin(c).UpsertSchedule(context.Background(), dtq.Schedule{Name: "bench", Cron: "@every 1s", TaskType: "tick"}); err != nil {
		b.Fatal(err)
	}
	created := make([]time.Duration, 0, b.N)
	began := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for range b.N {
		t := <-started
		created = append(created, t.CreatedAt.Sub(*t.ScheduleTick))
		began = append(began, t.StartedAt.Sub(*t.ScheduleTick))
	}
	b.StopTimer()
	for _, m := range []struct {
		name string
		d    []time.Duration
	}{{"created", created}, {"started", began}} {
		slices.Sort(m.d)
		pct := func(p float64) float64 { return float64(m.d[int(p*float64(len(m.d)-1))].Microseconds()) / 1000 }
		b.ReportMetric(pct(0.50), "p50-"+m.name+"-late-ms")
		b.ReportMetric(pct(1), "max-"+m.name+"-late-ms")
	}
}
