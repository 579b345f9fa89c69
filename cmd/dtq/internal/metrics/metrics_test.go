package metrics_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dtq-dev/dtq"
	"github.com/dtq-dev/dtq/api"
	"github.com/dtq-dev/dtq/cmd/dtq/internal/metrics"
	"github.com/dtq-dev/dtq/examples/tasks"
	"github.com/dtq-dev/dtq/internal/redisconn"
	"github.com/dtq-dev/dtq/internal/redistest"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

func TestMain(m *testing.M) { os.Exit(redistest.Main(m)) }

// env is an engine on one backend with a Metrics as its observer, and the
// metrics handler served.
type env struct {
	t   *testing.T
	b   *redistest.Backend
	m   *metrics.Metrics
	c   *dtq.Client
	srv *httptest.Server
}

func newEnv(t *testing.T, b *redistest.Backend, cfg *metrics.Config) *env {
	t.Helper()
	m, err := metrics.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	c, err := dtq.NewClient(redisconn.Wrap(b.Client), &dtq.Config{Namespace: b.Namespace, Observer: m})
	if err != nil {
		t.Fatal(err)
	}
	if err := m.CollectQueues(dtq.NewAdmin(c)); err != nil {
		t.Fatal(err)
	}
	if err := m.CollectWorkers(dtq.NewAdmin(c)); err != nil {
		t.Fatal(err)
	}
	if err := m.CollectLimits(dtq.NewAdmin(c)); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(m.Handler())
	t.Cleanup(srv.Close)
	return &env{t: t, b: b, m: m, c: c, srv: srv}
}

func forEachBackend(t *testing.T, cfg *metrics.Config, fn func(t *testing.T, e *env)) {
	t.Parallel()
	redistest.ForEachBackend(t, func(t *testing.T, b *redistest.Backend) {
		fn(t, newEnv(t, b, cfg))
	})
}

// worker starts a worker with handlers, stopped at cleanup.
func (e *env) worker(cfg *dtq.WorkerConfig, handlers map[string]dtq.HandlerFunc) {
	e.t.Helper()
	w, err := dtq.NewWorker(e.c, cfg)
	if err != nil {
		e.t.Fatal(err)
	}
	for typ, h := range handlers {
		w.Handle(typ, h)
	}
	if err := w.Start(context.Background()); err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		w.Stop(ctx)
	})
}

func (e *env) enqueue(typ string, opts *dtq.EnqueueOpts) *dtq.Task {
	e.t.Helper()
	res, err := e.c.Enqueue(e.t.Context(), typ, nil, opts)
	if err != nil {
		e.t.Fatalf("enqueue %s: %v", typ, err)
	}
	return res.Task
}

// scrape gets /metrics and returns every sample by its series name:
// `name{label="value",…}` with the labels sorted; a histogram gives
// name_count and name_sum.
func scrape(t *testing.T, url string) map[string]float64 {
	t.Helper()
	res, err := (&http.Client{Timeout: 30 * time.Second}).Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		t.Fatalf("GET /metrics: %s", res.Status)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(res.Body)
	if err != nil {
		t.Fatalf("parsing the exposition: %v", err)
	}
	out := map[string]float64{}
	for name, f := range families {
		for _, m := range f.GetMetric() {
			labels := make([]string, 0, len(m.GetLabel()))
			for _, l := range m.GetLabel() {
				labels = append(labels, fmt.Sprintf("%s=%q", l.GetName(), l.GetValue()))
			}
			sort.Strings(labels)
			series := "{" + strings.Join(labels, ",") + "}"
			switch f.GetType() {
			case dto.MetricType_COUNTER:
				out[name+series] = m.GetCounter().GetValue()
			case dto.MetricType_GAUGE:
				out[name+series] = m.GetGauge().GetValue()
			case dto.MetricType_HISTOGRAM:
				out[name+"_count"+series] = float64(m.GetHistogram().GetSampleCount())
				out[name+"_sum"+series] = m.GetHistogram().GetSampleSum()
			}
		}
	}
	return out
}

// check fails unless every series of want has its value in got.
func check(t *testing.T, got map[string]float64, want map[string]float64) {
	t.Helper()
	for series, v := range want {
		if g, ok := got[series]; !ok || g != v {
			t.Errorf("%s = %v (present %v), want %v", series, g, ok, v)
		}
	}
}

// waitFor scrapes until every series of want has its value (or fails after
// 10s) and returns the last scrape.
func (e *env) waitFor(want map[string]float64) map[string]float64 {
	e.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		got := scrape(e.t, e.srv.URL)
		ok := true
		for series, v := range want {
			if got[series] != v {
				ok = false
			}
		}
		if ok {
			return got
		}
		if time.Now().After(deadline) {
			check(e.t, got, want)
			e.t.FailNow()
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func series(name, queue, typ string) string {
	return fmt.Sprintf("%s{queue=%q,task_type=%q}", name, queue, typ)
}

// A real engine's task events show in the counters, by queue and task
// type; a type no handler takes has its own series too.
func TestTaskMetrics(t *testing.T) {
	forEachBackend(t, &metrics.Config{TaskTypes: []string{"ok", "flaky"}}, func(t *testing.T, e *env) {
		const q = "mq"
		e.worker(&dtq.WorkerConfig{Queues: []string{q}, BackoffBase: time.Millisecond, BackoffMax: time.Millisecond},
			map[string]dtq.HandlerFunc{
				"ok":    func(context.Context, *dtq.Task) (any, error) { return nil, nil },
				"flaky": func(context.Context, *dtq.Task) (any, error) { return nil, errors.New("no luck") },
			})
		opts := &dtq.EnqueueOpts{Queue: q}
		e.enqueue("ok", opts)
		e.enqueue("ok", &dtq.EnqueueOpts{Queue: q, IdempotencyKey: "once"})
		e.enqueue("ok", &dtq.EnqueueOpts{Queue: q, IdempotencyKey: "once"}) // a duplicate: not counted
		e.enqueue("flaky", &dtq.EnqueueOpts{Queue: q, MaxAttempts: 2})
		e.enqueue("mystery", opts) // no handler: it waits QUEUED for a worker of its type
		later := e.enqueue("ok", &dtq.EnqueueOpts{Queue: q, Delay: time.Hour})
		if _, err := e.c.Cancel(t.Context(), later.ID); err != nil {
			t.Fatal(err)
		}
		// An execution's counters move when its worker goroutine reports
		// it, which may lag the outcome recorded in Redis (the flaky task's
		// second attempt can end before the first one's report): wait for
		// all of them, then scrape again to see that none moves on.
		want := map[string]float64{
			series("dtq_tasks_succeeded_total", q, "ok"):              2,
			series("dtq_tasks_dead_total", q, "flaky"):                1,
			series("dtq_tasks_dead_total", q, "mystery"):              0,
			series("dtq_tasks_cancelled_total", q, "ok"):              1,
			`dtq_task_run_seconds_count{queue="mq"}`:                  4,
			`dtq_tasks_running{queue="mq"}`:                           0,
			`dtq_queue_depth{priority="",queue="mq",state="dead"}`:    1,
			series("dtq_tasks_submitted_total", q, "ok"):              3,
			series("dtq_tasks_submitted_total", q, "flaky"):           1,
			series("dtq_tasks_submitted_total", q, "mystery"):         1,
			series("dtq_tasks_started_total", q, "ok"):                2,
			series("dtq_tasks_started_total", q, "flaky"):             2,
			series("dtq_tasks_started_total", q, "mystery"):           0,
			series("dtq_tasks_failed_total", q, "flaky"):              2,
			series("dtq_tasks_retried_total", q, "flaky"):             1,
			series("dtq_tasks_failed_total", q, "mystery"):            0,
			series("dtq_tasks_failed_total", q, "ok"):                 0,
			series("dtq_tasks_lost_total", q, "ok"):                   0,
			`dtq_task_pickup_seconds_count{queue="mq"}`:               4,
			`dtq_tasks_reclaimed_total{queue="mq"}`:                   0,
			`dtq_queue_depth{priority="5",queue="mq",state="queued"}`: 1,
			`dtq_queue_paused{queue="mq"}`:                            0,
		}
		e.waitFor(want)
		got := scrape(t, e.srv.URL)
		check(t, got, want)
		for name := range got {
			if strings.Contains(name, `task_type="other"`) {
				t.Errorf("a type within the bound counts as other: %s", name)
			}
		}
		if got[`dtq_task_run_seconds_sum{queue="mq"}`] < 0 || got[`dtq_task_pickup_seconds_sum{queue="mq"}`] < 0 {
			t.Error("negative durations")
		}
		if got["go_goroutines{}"] <= 0 {
			t.Error("no Go runtime metrics")
		}
	})
}

// Queue labels are bounded: the 65th queue name seen counts as "other", in
// the task counters and the depth gauges alike.
func TestQueueLabelsBounded(t *testing.T) {
	forEachBackend(t, nil, func(t *testing.T, e *env) {
		for i := range 65 {
			e.enqueue("job", &dtq.EnqueueOpts{Queue: fmt.Sprintf("q%02d", i)})
		}
		e.enqueue("job", &dtq.EnqueueOpts{Queue: "q64"})
		got := scrape(t, e.srv.URL)
		check(t, got, map[string]float64{
			series("dtq_tasks_submitted_total", "q00", "job"):            1,
			series("dtq_tasks_submitted_total", "q63", "job"):            1,
			series("dtq_tasks_submitted_total", "other", "job"):          2,
			`dtq_queue_depth{priority="5",queue="q63",state="queued"}`:   1,
			`dtq_queue_depth{priority="5",queue="other",state="queued"}`: 2,
		})
		for name := range got {
			if strings.Contains(name, `"q64"`) {
				t.Errorf("the 65th queue has its own series: %s", name)
			}
		}
	})
}

// Queue depth gauges come from Redis at scrape time: queued by priority,
// scheduled, running, dead, and whether the queue is paused.
func TestQueueDepth(t *testing.T) {
	forEachBackend(t, nil, func(t *testing.T, e *env) {
		for range 3 {
			e.enqueue("job", &dtq.EnqueueOpts{Queue: "depth"})
		}
		e.enqueue("job", &dtq.EnqueueOpts{Queue: "depth", Priority: dtq.Ptr(9)})
		e.enqueue("job", &dtq.EnqueueOpts{Queue: "depth", Priority: dtq.Ptr(0), Delay: time.Hour})
		if err := dtq.NewAdmin(e.c).PauseQueue(t.Context(), "depth"); err != nil {
			t.Fatal(err)
		}
		got := scrape(t, e.srv.URL)
		want := map[string]float64{`dtq_queue_paused{queue="depth"}`: 1}
		for p := range 10 {
			want[fmt.Sprintf(`dtq_queue_depth{priority="%d",queue="depth",state="queued"}`, p)] = 0
		}
		want[`dtq_queue_depth{priority="5",queue="depth",state="queued"}`] = 3
		want[`dtq_queue_depth{priority="9",queue="depth",state="queued"}`] = 1
		for state, n := range map[string]float64{"scheduled": 1, "running": 0, "dead": 0} {
			want[fmt.Sprintf(`dtq_queue_depth{priority="",queue="depth",state=%q}`, state)] = n
		}
		check(t, got, want)
		n := 0
		for name := range got {
			if strings.HasPrefix(name, "dtq_queue_depth{") {
				n++
			}
		}
		if n != 13 {
			t.Errorf("%d depth series, want 13", n)
		}
	})
}

// When Redis cannot be read at scrape time, the scrape has no queue or
// worker gauges (nothing stale) and counts the Redis errors.
func TestQueueDepthWithRedisDown(t *testing.T) {
	t.Parallel()
	be := redistest.Embedded(t)
	e := newEnv(t, &redistest.Backend{Name: "embedded", Client: be.Client, Namespace: "down", Embedded: be},
		&metrics.Config{ScrapeTimeout: time.Second})
	e.enqueue("job", nil)
	if got := scrape(t, e.srv.URL); got[`dtq_queue_depth{priority="5",queue="default",state="queued"}`] != 1 {
		t.Fatalf("depth before: %v", got)
	}
	be.Server.Close()
	scrape(t, e.srv.URL)
	got := scrape(t, e.srv.URL) // collectors run concurrently: the first failure shows from the next scrape
	for name := range got {
		if strings.HasPrefix(name, "dtq_queue_") || strings.HasPrefix(name, "dtq_workers") {
			t.Errorf("with Redis down the scrape has %s", name)
		}
	}
	for _, op := range []string{"queues", "workers"} {
		if n := got[`dtq_redis_errors_total{op="`+op+`"}`]; n < 1 {
			t.Errorf("no Redis error counted for op %s: %v", op, n)
		}
	}
	check(t, got, map[string]float64{series("dtq_tasks_submitted_total", "default", "job"): 1})
}

// HTTP requests are counted by the route pattern they matched and their
// status code, through api.Config.ObserveRequest.
func TestHTTPMetrics(t *testing.T) {
	forEachBackend(t, nil, func(t *testing.T, e *env) {
		as := api.New(e.c, redisconn.Wrap(e.b.Client), &api.Config{ObserveRequest: e.m.ObserveHTTP})
		t.Cleanup(as.Close)
		srv := httptest.NewServer(as.Handler())
		defer srv.Close()
		for _, r := range []struct{ method, path, body string }{
			{"POST", "/api/v1/tasks", `{"task_type":"job"}`},
			{"POST", "/api/v1/tasks", `{"task_type":"job"}`},
			{"POST", "/api/v1/tasks", `{}`},
			{"GET", "/api/v1/tasks/nope", ""},
			{"GET", "/no/such/thing", ""},
		} {
			req, _ := http.NewRequest(r.method, srv.URL+r.path, strings.NewReader(r.body))
			req.Header.Set("Content-Type", "application/json")
			res, err := srv.Client().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			res.Body.Close()
		}
		got := scrape(t, e.srv.URL)
		check(t, got, map[string]float64{
			`dtq_http_requests_total{code="201",route="POST /api/v1/tasks"}`:     2,
			`dtq_http_requests_total{code="400",route="POST /api/v1/tasks"}`:     1,
			`dtq_http_requests_total{code="404",route="GET /api/v1/tasks/{id}"}`: 1,
			`dtq_http_requests_total{code="404",route="unmatched"}`:              1,
			`dtq_http_request_seconds_count{route="POST /api/v1/tasks"}`:         3,
			series("dtq_tasks_submitted_total", "default", "job"):                2,
		})
	})
}

// The observer methods without an engine: reclaims, Redis errors by
// operation, HTTP routes and codes bounded, a bad Config refused.
func TestObserverMethods(t *testing.T) {
	t.Parallel()
	m, err := metrics.New(&metrics.Config{MaxQueues: 1})
	if err != nil {
		t.Fatal(err)
	}
	m.TasksReclaimed("a", 2)
	m.TasksReclaimed("b", 3) // beyond MaxQueues
	m.RedisError("read", errors.New("x"))
	m.RedisError("read", errors.New("y"))
	for i := range 200 {
		m.ObserveHTTP(fmt.Sprintf("GET /r%d", i), 200, time.Millisecond)
	}
	m.ObserveHTTP("", 999, time.Millisecond)
	m.TaskStarted("a", "t", -time.Second)
	m.TaskFinished("a", "t", dtq.OutcomeLost, time.Second)
	m.TaskEnded("a", "t", dtq.OutcomeCancelled)
	srv := httptest.NewServer(m.Handler())
	defer srv.Close()
	got := scrape(t, srv.URL)
	check(t, got, map[string]float64{
		`dtq_tasks_reclaimed_total{queue="a"}`:                    2,
		`dtq_tasks_reclaimed_total{queue="other"}`:                3,
		`dtq_redis_errors_total{op="read"}`:                       2,
		`dtq_http_requests_total{code="200",route="GET /r0"}`:     1,
		`dtq_http_requests_total{code="200",route="other"}`:       73,
		`dtq_http_requests_total{code="other",route="unmatched"}`: 1,
		`dtq_tasks_running{queue="a"}`:                            0,
		series("dtq_tasks_lost_total", "a", "t"):                  1,
		series("dtq_tasks_cancelled_total", "a", "t"):             1,
		series("dtq_tasks_started_total", "a", "t"):               1,
		`dtq_task_run_seconds_sum{queue="a"}`:                     1,
	})
	var routes []string
	for name := range got {
		if strings.HasPrefix(name, "dtq_http_request_seconds_count") {
			routes = append(routes, name)
		}
	}
	if len(routes) != 129 { // unmatched, 127 others, "other"
		t.Errorf("%d routes, want 129: %v", len(routes), slices.Sorted(slices.Values(routes))[:3])
	}
	for _, cfg := range []metrics.Config{{MaxQueues: -1}, {MaxTaskTypes: -1}, {ScrapeTimeout: -time.Second}} {
		if _, err := metrics.New(&cfg); !errors.Is(err, dtq.ErrInvalid) {
			t.Errorf("New(%+v): %v, want a validation error", cfg, err)
		}
	}
	if err := m.CollectQueues(nil); !errors.Is(err, dtq.ErrInvalid) {
		t.Errorf("CollectQueues(nil): %v", err)
	}
	if err := m.CollectWorkers(nil); !errors.Is(err, dtq.ErrInvalid) {
		t.Errorf("CollectWorkers(nil): %v", err)
	}
}

// Task types the process has no handler for get a task_type value of
// their own as they are seen in its events: the binary configures only the
// example handlers' types, and `dtq api` in front of Go workers sees only
// the user's types. Besides Config.TaskTypes, the first MaxTaskTypes
// (default 100) do; later ones count under "other".
func TestTaskTypeLabelsLearned(t *testing.T) {
	t.Parallel()
	m, err := metrics.New(&metrics.Config{TaskTypes: tasks.Types(), MaxTaskTypes: 3}) // as runProcess, smaller bound
	if err != nil {
		t.Fatal(err)
	}
	m.TaskSubmitted("default", "resize")
	m.TaskStarted("default", "email", 0)
	m.TaskFinished("default", "email", dtq.OutcomeSucceeded, 0)
	m.TaskEnded("default", "invoice", dtq.OutcomeCancelled)
	m.TaskSubmitted("default", "echo")   // configured: not counted in the bound
	m.TaskSubmitted("default", "late")   // a fourth other type
	m.TaskSubmitted("default", "resize") // seen before: still its own
	srv := httptest.NewServer(m.Handler())
	defer srv.Close()
	got := scrape(t, srv.URL)
	check(t, got, map[string]float64{
		series("dtq_tasks_submitted_total", "default", "resize"):  2,
		series("dtq_tasks_started_total", "default", "email"):     1,
		series("dtq_tasks_succeeded_total", "default", "email"):   1,
		series("dtq_tasks_cancelled_total", "default", "invoice"): 1,
		series("dtq_tasks_submitted_total", "default", "echo"):    1,
		series("dtq_tasks_submitted_total", "default", "other"):   1,
	})
	for name := range got {
		if strings.Contains(name, `"late"`) {
			t.Errorf("the type past the bound has its own series: %s", name)
		}
	}

	m, err = metrics.New(&metrics.Config{TaskTypes: tasks.Types()})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 101 {
		m.TaskSubmitted("default", fmt.Sprintf("t%03d", i))
	}
	srv2 := httptest.NewServer(m.Handler())
	defer srv2.Close()
	got = scrape(t, srv2.URL)
	check(t, got, map[string]float64{
		series("dtq_tasks_submitted_total", "default", "t099"):  1,
		series("dtq_tasks_submitted_total", "default", "other"): 1,
	})
	if _, ok := got[series("dtq_tasks_submitted_total", "default", "t100")]; ok {
		t.Error("the 101st type has its own series; the default bound is 100")
	}
}

// The observer's cost on the engine's hot path: one start and one finish
// of a task, with its labels already seen.
func BenchmarkStartFinish(b *testing.B) {
	m, err := metrics.New(&metrics.Config{TaskTypes: []string{"job"}})
	if err != nil {
		b.Fatal(err)
	}
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			m.TaskStarted("default", "job", time.Millisecond)
			m.TaskFinished("default", "job", dtq.OutcomeSucceeded, time.Millisecond)
		}
	})
}

// observedClient is a Client on its own redis-server with a Metrics as
// its observer, and the benchmarks' payload.
func observedClient(b *testing.B) (*dtq.Client, []byte) {
	m, err := metrics.New(&metrics.Config{TaskTypes: []string{"noop"}})
	if err != nil {
		b.Fatal(err)
	}
	srv := redistest.Start(b, nil)
	c, err := dtq.NewClient(redisconn.Wrap(redistest.Client(b, srv)), &dtq.Config{Observer: m})
	if err != nil {
		b.Fatal(err)
	}
	return c, []byte(`{"order_id":"123456","action":"charge","amount_cents":4200,"currency":"EUR"}`)
}

// BenchmarkEnqueueObserved is the root package's BenchmarkEnqueue (single
// Enqueue calls from 50 goroutines, own redis-server) with a Metrics as the
// observer, to compare with it.
func BenchmarkEnqueueObserved(b *testing.B) {
	c, payload := observedClient(b)
	var next atomic.Int64
	b.ResetTimer()
	start := time.Now()
	var wg sync.WaitGroup
	for range 50 {
		wg.Go(func() {
			for next.Add(1) <= int64(b.N) {
				if _, err := c.Enqueue(context.Background(), "noop", payload, nil); err != nil {
					b.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "tasks/s")
}

// BenchmarkDrainObserved is the root package's BenchmarkDrain (a pre-filled
// queue drained by one worker of concurrency 50, no-op handler) with a
// Metrics as the observer.
func BenchmarkDrainObserved(b *testing.B) {
	c, payload := observedClient(b)
	reqs := make([]dtq.EnqueueRequest, 1000)
	for i := range reqs {
		reqs[i] = dtq.EnqueueRequest{Type: "noop", Payload: payload}
	}
	for done := 0; done < b.N; done += len(reqs) {
		if _, err := c.EnqueueMany(context.Background(), reqs[:min(len(reqs), b.N-done)]); err != nil {
			b.Fatal(err)
		}
	}
	b.ResetTimer()
	start := time.Now()
	var done atomic.Int64
	finished := make(chan struct{})
	w, err := dtq.NewWorker(c, &dtq.WorkerConfig{Concurrency: 50})
	if err != nil {
		b.Fatal(err)
	}
	w.Handle("noop", func(context.Context, *dtq.Task) (any, error) {
		if done.Add(1) == int64(b.N) {
			close(finished)
		}
		return nil, nil
	})
	w.Start(context.Background())
	<-finished
	for { // until the last outcomes are recorded
		st, err := dtq.NewAdmin(c).Stats(context.Background(), dtq.DefaultQueue)
		if err == nil && st.Succeeded >= int64(b.N) {
			break
		}
		time.Sleep(time.Millisecond)
	}
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "tasks/s")
	w.Stop(context.Background())
}
