// Package metrics exports dtq's Prometheus metrics: the task engine's events
// (a Metrics is a dtq.Observer), the queues' depths and the live workers
// read from Redis at scrape time, and the HTTP API's requests.
// docs/observability.md lists every metric.
//
// Wiring, in the process that runs the engine and the API:
//
//	m, err := metrics.New(&metrics.Config{TaskTypes: types})
//	client, err := dtq.NewClient(redis, &dtq.Config{Observer: m})
//	m.CollectQueues(client)
//	m.CollectWorkers(client)
//	m.CollectLimits(client)
//	srv := api.New(client, redis, &api.Config{ObserveRequest: m.ObserveHTTP})
//	mux.Handle("GET /metrics", m.Handler())
//
// Label values are bounded: task_type is one of Config.TaskTypes or of the
// first Config.MaxTaskTypes other types seen, else "other"; queue one of the
// first Config.MaxQueues queue names seen or "other"; so a client submitting
// arbitrary types or queues cannot grow the number of series without bound.
package metrics

import (
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dtq-dev/dtq"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Other is the label value that stands for every value beyond the bounds.
const Other = "other"

// Config configures a Metrics. The zero value of every field means its
// default.
type Config struct {
	// TaskTypes lists task types that always get a task_type label value
	// of their own: the types the process's workers handle. Defaults to
	// none.
	TaskTypes []string

	// MaxTaskTypes bounds the task_type label beyond TaskTypes: the first
	// MaxTaskTypes other types the process sees in its task events
	// (submitted, started, finished, ended) get a value of their own — the
	// types of workers in other processes, submitted through this one's
	// API — and later ones are counted under "other" until the process
	// restarts. Defaults to 100.
	MaxTaskTypes int

	// MaxQueues bounds the queue label: the first MaxQueues queue names
	// seen get a value of their own, later ones are counted under "other".
	// Defaults to 64.
	MaxQueues int

	// ScrapeTimeout bounds the Redis read of queue depths at each scrape
	// (see CollectQueues). Defaults to 2s.
	ScrapeTimeout time.Duration
}

// Metrics holds dtq's metrics in a registry of its own, with the Go runtime
// and process collectors. It implements dtq.Observer. Build it with New.
type Metrics struct {
	reg     *prometheus.Registry
	known   map[string]bool // Config.TaskTypes; read-only after New
	types   *bounded        // the other task types
	queues  *bounded
	routes  *bounded
	ops     *bounded
	timeout time.Duration

	submitted, started, succeeded, failed, retried, dead, cancelled, lost, suspended *prometheus.CounterVec

	running       *prometheus.GaugeVec
	pickup, run   *prometheus.HistogramVec
	reclaimed     *prometheus.CounterVec
	throttled     *prometheus.CounterVec
	redisErrors   *prometheus.CounterVec
	httpRequests  *prometheus.CounterVec
	httpDurations *prometheus.HistogramVec
	flow          flowCounters

	tasks      sync.Map // taskKey → *taskSeries
	perQueue   sync.Map // bounded queue → *queueSeries
	httpSeries sync.Map // httpKey → *httpSeries
}

// Bounds of the labels that Config does not set (routeUnmatched counts
// among the routes).
const (
	maxRoutes = 128
	maxOps    = 32
)

// routeUnmatched is the route of a request that matched no route.
const routeUnmatched = "unmatched"

// Histogram buckets, in seconds.
var (
	taskBuckets = []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60}
	httpBuckets = []float64{.0001, .00025, .0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10}
)

// New returns a Metrics with every metric registered. It does no I/O.
func New(cfg *Config) (*Metrics, error) {
	var c Config
	if cfg != nil {
		c = *cfg
	}
	switch {
	case c.MaxQueues < 0:
		return nil, &dtq.ValidationError{Field: "metrics.Config.MaxQueues", Problem: "must not be negative (got " + strconv.Itoa(c.MaxQueues) + ")"}
	case c.MaxQueues == 0:
		c.MaxQueues = 64
	}
	switch {
	case c.MaxTaskTypes < 0:
		return nil, &dtq.ValidationError{Field: "metrics.Config.MaxTaskTypes", Problem: "must not be negative (got " + strconv.Itoa(c.MaxTaskTypes) + ")"}
	case c.MaxTaskTypes == 0:
		c.MaxTaskTypes = 100
	}
	switch {
	case c.ScrapeTimeout < 0:
		return nil, &dtq.ValidationError{Field: "metrics.Config.ScrapeTimeout", Problem: "must not be negative (got " + c.ScrapeTimeout.String() + ")"}
	case c.ScrapeTimeout == 0:
		c.ScrapeTimeout = 2 * time.Second
	}
	m := &Metrics{
		reg:     prometheus.NewRegistry(),
		known:   map[string]bool{},
		types:   newBounded(c.MaxTaskTypes),
		queues:  newBounded(c.MaxQueues),
		routes:  newBounded(maxRoutes),
		ops:     newBounded(maxOps),
		timeout: c.ScrapeTimeout,
	}
	for _, t := range c.TaskTypes {
		m.known[t] = true
	}
	m.routes.get(routeUnmatched)
	taskCounter := func(name, help string) *prometheus.CounterVec {
		return prometheus.NewCounterVec(prometheus.CounterOpts{Name: name, Help: help}, []string{"queue", "task_type"})
	}
	m.submitted = taskCounter("dtq_tasks_submitted_total", "Tasks created by this process's submissions (not idempotent duplicates).")
	m.started = taskCounter("dtq_tasks_started_total", "Executions started by this process's workers.")
	m.succeeded = taskCounter("dtq_tasks_succeeded_total", "Executions of this process that succeeded.")
	m.failed = taskCounter("dtq_tasks_failed_total", "Executions of this process that failed (then retried or dead).")
	m.retried = taskCounter("dtq_tasks_retried_total", "Executions of this process that failed and will be retried.")
	m.dead = taskCounter("dtq_tasks_dead_total", "Tasks that went DEAD in this process (a failed execution, or taken over past the crash limit).")
	m.cancelled = taskCounter("dtq_tasks_cancelled_total", "Tasks that ended CANCELLED in this process (while running here, or cancelled while waiting).")
	m.lost = taskCounter("dtq_tasks_lost_total", "Executions of this process whose outcome was not recorded (taken over elsewhere, or Redis unreachable): the task runs again.")
	m.suspended = taskCounter("dtq_tasks_suspended_total", "Executions of this process that suspended (a durable sleep, a wait for a signal): the task waits SCHEDULED.")
	m.running = prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "dtq_tasks_running", Help: "Tasks this process's workers are running now."}, []string{"queue"})
	m.pickup = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name: "dtq_task_pickup_seconds", Help: "Time from a task being ready (submitted, or due) to its start, on the Redis clock (ms precision).", Buckets: taskBuckets,
	}, []string{"queue"})
	m.run = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name: "dtq_task_run_seconds", Help: "Time a handler ran, per execution.", Buckets: taskBuckets,
	}, []string{"queue"})
	m.reclaimed = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "dtq_tasks_reclaimed_total", Help: "Tasks this process's workers took over from lost workers."}, []string{"queue"})
	m.throttled = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "dtq_throttled_total",
		Help: "Claims this process's workers wanted and the queue's limits (concurrency, rate, a RetryAfter pause) held back; those tasks stayed queued."}, []string{"queue"})
	m.redisErrors = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "dtq_redis_errors_total", Help: "Failed Redis calls of the engine, by operation."}, []string{"op"})
	m.httpRequests = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "dtq_http_requests_total", Help: "HTTP API requests, by matched route and status code."}, []string{"route", "code"})
	m.httpDurations = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name: "dtq_http_request_seconds", Help: "HTTP API request durations, by matched route.", Buckets: httpBuckets,
	}, []string{"route"})
	m.flow = newFlowCounters()
	m.reg.MustRegister(
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		m.submitted, m.started, m.succeeded, m.failed, m.retried, m.dead, m.cancelled, m.lost, m.suspended,
		m.running, m.pickup, m.run, m.reclaimed, m.throttled, m.redisErrors, m.httpRequests, m.httpDurations,
	)
	m.reg.MustRegister(m.flow.collectors()...)
	return m, nil
}

// Registry returns the registry holding the metrics, to add others to.
func (m *Metrics) Registry() *prometheus.Registry { return m.reg }

// Handler returns the handler of GET /metrics: the registry in the
// Prometheus text format (or OpenMetrics, if asked).
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError})
}

// taskKey is a (queue, task type) pair of bounded label values.
type taskKey struct{ queue, typ string }

// taskSeries are the counters of one taskKey, and its queue's series.
type taskSeries struct {
	submitted, started, succeeded, failed, retried, dead, cancelled, lost, suspended prometheus.Counter
	queue                                                                            *queueSeries
}

// queueSeries are the per-queue series of one bounded queue.
type queueSeries struct {
	running     prometheus.Gauge
	pickup, run prometheus.Observer
	reclaimed   prometheus.Counter
}

// taskType returns the label value of task type t.
func (m *Metrics) taskType(t string) string {
	if m.known[t] {
		return t
	}
	return m.types.get(t)
}

// task returns the series of queue and type (raw values).
func (m *Metrics) task(queue, typ string) *taskSeries {
	k := taskKey{m.queues.get(queue), m.taskType(typ)}
	if s, ok := m.tasks.Load(k); ok {
		return s.(*taskSeries)
	}
	l := []string{k.queue, k.typ}
	s := &taskSeries{
		submitted: m.submitted.WithLabelValues(l...), started: m.started.WithLabelValues(l...),
		succeeded: m.succeeded.WithLabelValues(l...), failed: m.failed.WithLabelValues(l...),
		retried: m.retried.WithLabelValues(l...), dead: m.dead.WithLabelValues(l...),
		cancelled: m.cancelled.WithLabelValues(l...), lost: m.lost.WithLabelValues(l...), suspended: m.suspended.WithLabelValues(l...),
		queue: m.queue(k.queue),
	}
	got, _ := m.tasks.LoadOrStore(k, s)
	return got.(*taskSeries)
}

// queue returns the per-queue series of queue (a raw value).
func (m *Metrics) queue(queue string) *queueSeries {
	q := m.queues.get(queue)
	if s, ok := m.perQueue.Load(q); ok {
		return s.(*queueSeries)
	}
	s := &queueSeries{
		running: m.running.WithLabelValues(q), pickup: m.pickup.WithLabelValues(q),
		run: m.run.WithLabelValues(q), reclaimed: m.reclaimed.WithLabelValues(q),
	}
	got, _ := m.perQueue.LoadOrStore(q, s)
	return got.(*queueSeries)
}

var _ dtq.LimitObserver = (*Metrics)(nil)

// ClaimsThrottled implements dtq.LimitObserver.
func (m *Metrics) ClaimsThrottled(queue string, n int) {
	m.throttled.WithLabelValues(m.queues.get(queue)).Add(float64(n))
}

// TaskSubmitted implements dtq.Observer.
func (m *Metrics) TaskSubmitted(queue, taskType string) { m.task(queue, taskType).submitted.Inc() }

// TaskStarted implements dtq.Observer.
func (m *Metrics) TaskStarted(queue, taskType string, pickup time.Duration) {
	s := m.task(queue, taskType)
	s.started.Inc()
	q := s.queue
	q.running.Inc()
	q.pickup.Observe(max(0, pickup.Seconds()))
}

// TaskFinished implements dtq.Observer.
func (m *Metrics) TaskFinished(queue, taskType string, outcome dtq.Outcome, run time.Duration) {
	s := m.task(queue, taskType)
	q := s.queue
	q.running.Dec()
	q.run.Observe(max(0, run.Seconds()))
	switch outcome {
	case dtq.OutcomeSucceeded:
		s.succeeded.Inc()
	case dtq.OutcomeRetried:
		s.failed.Inc()
		s.retried.Inc()
	case dtq.OutcomeDead:
		s.failed.Inc()
		s.dead.Inc()
	case dtq.OutcomeCancelled:
		s.cancelled.Inc()
	case dtq.OutcomeLost:
		s.lost.Inc()
	case dtq.OutcomeSuspended:
		s.suspended.Inc()
	}
}

// TaskEnded implements dtq.Observer.
func (m *Metrics) TaskEnded(queue, taskType string, outcome dtq.Outcome) {
	s := m.task(queue, taskType)
	switch outcome {
	case dtq.OutcomeDead:
		s.dead.Inc()
	case dtq.OutcomeCancelled:
		s.cancelled.Inc()
	}
}

// TasksReclaimed implements dtq.Observer.
func (m *Metrics) TasksReclaimed(queue string, n int) { m.queue(queue).reclaimed.Add(float64(n)) }

// RedisError implements dtq.Observer; the metrics' own scrape-time reads
// count under op "queues".
func (m *Metrics) RedisError(op string, _ error) {
	m.redisErrors.WithLabelValues(m.ops.get(op)).Inc()
}

// bounded maps label values to at most max distinct ones, first come first
// served; the others map to Other. It is safe for concurrent use; a value
// already admitted costs one lock-free map read.
type bounded struct {
	max  int
	seen sync.Map // value → struct{}
	n    atomic.Int64
	mu   sync.Mutex // admits new values
}

func newBounded(max int) *bounded { return &bounded{max: max} }

func (b *bounded) get(v string) string {
	if _, ok := b.seen.Load(v); ok {
		return v
	}
	if b.n.Load() >= int64(b.max) {
		return Other
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if _, ok := b.seen.Load(v); ok {
		return v
	}
	if b.n.Load() >= int64(b.max) {
		return Other
	}
	b.seen.Store(v, struct{}{})
	b.n.Add(1)
	return v
}
