package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"strings"
	"time"

	"github.com/dtq-dev/dtq"
	"github.com/dtq-dev/dtq/api"
	"github.com/dtq-dev/dtq/cmd/dtq/internal/metrics"
	"github.com/dtq-dev/dtq/dashboard"
	"github.com/dtq-dev/dtq/examples/tasks"
	"github.com/dtq-dev/dtq/internal/embedded"
	"github.com/dtq-dev/dtq/internal/redisconn"
	"github.com/dtq-dev/dtq/queue"
	"github.com/redis/rueidis"
	"github.com/spf13/cobra"
)

// role is what a dtq process runs.
type role struct {
	name   string // serve, api, worker or relay
	api    bool   // the HTTP API (and dashboard route)
	worker bool   // workers running the example handlers
	relay  bool   // only the outbox relay: --outbox is required
}

// processOptions configure `dtq serve`, `dtq api` and `dtq worker`; each
// field is a flag with a DTQ_* environment variable (docs/deployment.md).
type processOptions struct {
	addr      string
	redisURL  string
	namespace string
	logLevel  string

	apiKey         string
	apiKeys        string
	apiKeyReads    bool
	maxBodyBytes   int64
	maxBatch       int
	allowedOrigins []string
	traceURL       string

	mqAckTombstoneTTL time.Duration

	maxPayloadBytes int
	maxDepth        int64
	retention       time.Duration

	queues            []string
	concurrency       int
	visibilityTimeout time.Duration
	schedulesFile     string
	queueWeights      map[string]int

	shutdownTimeout time.Duration
	pprofAddr       string

	durableReplicas int
	durableTimeout  time.Duration

	outboxURL string
}

// addProcessFlags defines the flags of a process with role r.
func addProcessFlags(cmd *cobra.Command, o *processOptions, r role, defaultAddr string) {
	f := cmd.Flags()
	f.StringVar(&o.addr, "addr", defaultAddr, "listen address of the HTTP server")
	bindEnv(cmd, "addr", "DTQ_ADDR")
	redisHelp := "Redis URL: redis://[user:password@]host:port[/db], redis+cluster://host:port,host:port, redis+sentinel://host:port,…/master (rediss… for TLS)"
	if r.api && r.worker {
		redisHelp += "; empty (or memory://) runs the embedded in-memory backend"
	}
	f.StringVar(&o.redisURL, "redis", "", redisHelp)
	bindEnv(cmd, "redis", "DTQ_REDIS_URL")
	f.StringVar(&o.namespace, "namespace", "dtq", "prefix of every Redis key; processes that share work share it")
	bindEnv(cmd, "namespace", "DTQ_NAMESPACE")
	f.StringVar(&o.logLevel, "log-level", "info", "debug, info, warn or error")
	bindEnv(cmd, "log-level", "DTQ_LOG_LEVEL")
	f.Int64Var(&o.maxDepth, "max-depth", 0, "most queued, scheduled and running tasks per queue before submits get 429 (0: unbounded)")
	bindEnv(cmd, "max-depth", "DTQ_MAX_DEPTH")
	f.IntVar(&o.maxPayloadBytes, "max-payload-bytes", 1<<20, "largest task payload accepted, in bytes")
	bindEnv(cmd, "max-payload-bytes", "DTQ_MAX_PAYLOAD_BYTES")
	f.DurationVar(&o.retention, "retention", 24*time.Hour, "how long finished tasks are kept (0: a succeeded task is deleted as it succeeds)")
	bindEnv(cmd, "retention", "DTQ_RETENTION")
	f.DurationVar(&o.shutdownTimeout, "shutdown-timeout", 30*time.Second, "on SIGTERM/SIGINT, how long running tasks and requests get to finish")
	bindEnv(cmd, "shutdown-timeout", "DTQ_SHUTDOWN_TIMEOUT")
	f.IntVar(&o.durableReplicas, "durable-replicas", 0, "a submit and a task's outcome count as done only once this many replicas have them (Redis WAIT); 0: once the master has them")
	bindEnv(cmd, "durable-replicas", "DTQ_DURABLE_REPLICAS")
	f.DurationVar(&o.durableTimeout, "durable-timeout", time.Second, "how long a write waits for --durable-replicas before the submit fails (503)")
	bindEnv(cmd, "durable-timeout", "DTQ_DURABLE_TIMEOUT")
	outboxHelp := "PostgreSQL URL of an outbox to relay to dtq (postgres://…; docs/outbox.md); empty: none"
	if r.relay {
		outboxHelp = "PostgreSQL URL of the outbox to relay to dtq (postgres://…; docs/outbox.md); required"
	}
	f.StringVar(&o.outboxURL, "outbox", "", outboxHelp)
	bindEnv(cmd, "outbox", "DTQ_OUTBOX_URL")
	f.StringVar(&o.pprofAddr, "pprof-addr", "", "serve Go's /debug/pprof profiles on this address (keep it private; empty: off)")
	bindEnv(cmd, "pprof-addr", "DTQ_PPROF_ADDR")
	if r.api {
		f.StringVar(&o.apiKey, "api-key", "", "the admin key: with any key set, mutating and admin routes require a key in X-API-Key whose role allows them")
		bindEnv(cmd, "api-key", "DTQ_API_KEY")
		f.StringVar(&o.apiKeys, "api-keys", "", "more API keys with roles, comma-separated role:key entries; roles: read, submit (producers), worker (HTTP workers' leases), admin")
		bindEnv(cmd, "api-keys", "DTQ_API_KEYS")
		f.BoolVar(&o.apiKeyReads, "api-key-reads", false, "require an API key (of any role) on read routes too")
		bindEnv(cmd, "api-key-reads", "DTQ_API_KEY_READS")
		f.Int64Var(&o.maxBodyBytes, "max-body-bytes", 2<<20, "largest request body accepted, in bytes")
		bindEnv(cmd, "max-body-bytes", "DTQ_MAX_BODY_BYTES")
		f.IntVar(&o.maxBatch, "max-batch", 1000, "most tasks in one batch submission")
		bindEnv(cmd, "max-batch", "DTQ_MAX_BATCH")
		f.StringSliceVar(&o.allowedOrigins, "allowed-origins", nil, "browser origins allowed besides the server's own: host patterns for /ws/events; entries with a scheme (https://ui.example.com) are also trusted for state-changing requests")
		bindEnv(cmd, "allowed-origins", "DTQ_ALLOWED_ORIGINS")
		f.StringVar(&o.traceURL, "trace-url", "", "the dashboard links a task's trace id to this URL of your tracing UI, {trace_id} standing for it, e.g. https://jaeger.example/trace/{trace_id} (empty: the id is shown as text)")
		bindEnv(cmd, "trace-url", "DTQ_TRACE_URL")
		f.DurationVar(&o.mqAckTombstoneTTL, "mq-ack-tombstone-ttl", 0, "message queues (/api/v1/mq): how long the key of an acked or termed message stays blocked, so a put of it again is a duplicate (0: none, the key is free at once)")
		bindEnv(cmd, "mq-ack-tombstone-ttl", "DTQ_MQ_ACK_TOMBSTONE_TTL")
	}
	if r.worker {
		f.StringSliceVar(&o.queues, "queues", []string{dtq.DefaultQueue}, "queues the workers serve, comma-separated")
		bindEnv(cmd, "queues", "DTQ_QUEUES")
		f.StringToIntVar(&o.queueWeights, "queue-weights", nil, "each queue's share of --concurrency, e.g. a=3,b=1 (a queue left out weighs 1)")
		bindEnv(cmd, "queue-weights", "DTQ_QUEUE_WEIGHTS")
		f.IntVar(&o.concurrency, "concurrency", 10, "most tasks the worker runs at once")
		bindEnv(cmd, "concurrency", "DTQ_CONCURRENCY")
		f.DurationVar(&o.visibilityTimeout, "visibility-timeout", 30*time.Second, "how long a task of a dead worker stays claimed before another worker takes it over")
		bindEnv(cmd, "visibility-timeout", "DTQ_VISIBILITY_TIMEOUT")
		f.StringVar(&o.schedulesFile, "schedules", "", "a YAML file of schedules (periodic tasks) to create or update at start; schedules it does not name are left alone")
		bindEnv(cmd, "schedules", "DTQ_SCHEDULES")
	}
}

// newProcessCmd builds `dtq serve`, `dtq api` or `dtq worker`.
func newProcessCmd(out, errOut io.Writer, r role, short, long, defaultAddr string) *cobra.Command {
	var o processOptions
	cmd := &cobra.Command{
		Use:   r.name,
		Short: short,
		Long:  long,
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := applyEnv(cmd); err != nil {
				return err
			}
			if r.relay && o.outboxURL == "" {
				return errors.New("dtq relay needs --outbox or DTQ_OUTBOX_URL: the PostgreSQL URL of the outbox to relay")
			}
			return runProcess(cmd.Context(), out, errOut, o, r)
		},
	}
	addProcessFlags(cmd, &o, r, defaultAddr)
	return cmd
}

// collectAtScrape adds to m the metrics a dtq process reads from Redis at
// each scrape: the queues' depths and the live workers.
func collectAtScrape(m *metrics.Metrics, client *dtq.Admin) error {
	if err := m.CollectLimits(client); err != nil {
		return err
	}
	if err := m.CollectQueues(client); err != nil {
		return err
	}
	return m.CollectWorkers(client)
}

// runProcess runs a dtq process until ctx ends (or an admin asks its worker
// to stop: Admin.StopWorker), then shuts it down
// gracefully: it stops accepting requests and taking tasks, lets running
// requests and tasks finish within the shutdown timeout, and hands back the
// rest. It logs to errOut; the console trace exporter writes to out.
func runProcess(ctx context.Context, out, errOut io.Writer, o processOptions, r role) error {
	log, err := newLogger(errOut, o.logLevel)
	if err != nil {
		return err
	}
	if d := o.mqAckTombstoneTTL; d < 0 || (d > 0 && d < time.Millisecond) {
		return fmt.Errorf("--mq-ack-tombstone-ttl must be 0 (no tombstones) or at least 1ms (got %v)", d)
	}
	keys, err := apiKeys(o)
	if err != nil {
		return err
	}
	var dash http.Handler
	if r.api {
		if dash, err = dashboard.Handler(&dashboard.Config{TraceURL: o.traceURL}); err != nil {
			return fmt.Errorf("--trace-url: %w", err)
		}
	}
	redis, closeRedis, err := connectBackend(ctx, log, o, r)
	if err != nil {
		return err
	}
	defer closeRedis()
	tracer, stopTracing, err := setupTracing(ctx, log, out)
	if err != nil {
		return err
	}
	defer stopTracing()

	m, err := metrics.New(&metrics.Config{TaskTypes: tasks.Types()})
	if err != nil {
		return err
	}
	client, err := dtq.NewClient(redisconn.Wrap(redis), &dtq.Config{
		Namespace:       o.namespace,
		MaxPayloadBytes: o.maxPayloadBytes,
		MaxDepth:        o.maxDepth,
		Retention:       retention(o.retention),
		Logger:          log,
		Observer:        m,
		DurableReplicas: o.durableReplicas,
		DurableTimeout:  o.durableTimeout,
		TracerProvider:  tracer,
	})
	if err != nil {
		return err
	}
	if err := collectAtScrape(m, dtq.NewAdmin(client)); err != nil {
		return err
	}
	relay, err := startRelay(ctx, log, client, m, o.outboxURL)
	if err != nil {
		return err
	}

	var worker *dtq.Worker
	if r.worker && o.schedulesFile != "" {
		if err := applySchedules(ctx, log, dtq.NewAdmin(client), o.schedulesFile); err != nil {
			return err
		}
	}
	if r.worker {
		worker, err = dtq.NewWorker(client, &dtq.WorkerConfig{
			Queues:            o.queues,
			Concurrency:       o.concurrency,
			QueueWeights:      o.queueWeights,
			VisibilityTimeout: o.visibilityTimeout,
		})
		if err != nil {
			return err
		}
		tasks.Register(worker)
	}

	mux := http.NewServeMux()
	mux.Handle("GET /metrics", m.Handler())
	var apiServer *api.Server
	if r.api {
		apiServer = api.New(client, redisconn.Wrap(redis), &api.Config{
			APIKey:         o.apiKey,
			Keys:           keys,
			APIKeyReads:    o.apiKeyReads,
			MaxBodyBytes:   o.maxBodyBytes,
			MaxBatch:       o.maxBatch,
			AllowedOrigins: o.allowedOrigins,
			Logger:         log,
			ObserveRequest: m.ObserveHTTP,
			MessageQueue:   queue.Config{AckTombstoneTTL: o.mqAckTombstoneTTL},
		})
		defer apiServer.Close()
		mux.Handle("/", apiServer.Handler())
		// The dashboard: its page at exactly "/", its assets under /ui/;
		// every other path stays the API's (and its JSON 404 and 405).
		mux.Handle("GET /{$}", dash)
		mux.Handle("GET "+dashboard.AssetPrefix, dash)
	} else {
		probes := api.New(client, redisconn.Wrap(redis), &api.Config{Logger: log, ObserveRequest: m.ObserveHTTP})
		defer probes.Close()
		mux.Handle("GET /health", probes.Handler())
		mux.Handle("GET /ready", probes.Handler())
	}

	if o.pprofAddr != "" {
		stopPprof, err := servePprof(o.pprofAddr, log)
		if err != nil {
			return err
		}
		defer stopPprof()
	}

	ln, err := net.Listen("tcp", o.addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", o.addr, err)
	}
	srv := newHTTPServer(mux, log)
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()

	if worker != nil {
		if err := worker.Start(context.WithoutCancel(ctx)); err != nil {
			srv.Close()
			return err
		}
	}
	log.Info("dtq is ready", "role", r.name, "addr", ln.Addr().String(), "queues", strings.Join(o.queues, ","))

	var serveErr error
	var stopAsked <-chan struct{} // (nil: never)
	if worker != nil {
		stopAsked = worker.StopRequested()
	}
	select {
	case <-ctx.Done():
	case serveErr = <-served:
	case <-stopAsked:
		// Admin.StopWorker (dtq workers stop): as on SIGTERM, then exit 0.
		log.Info("stop requested by an admin", "worker", worker.ID())
	}
	log.Info("shutting down", "timeout", o.shutdownTimeout)
	stopCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), o.shutdownTimeout)
	defer cancel()
	if apiServer != nil {
		// WebSocket clients get 1001 now (Shutdown does not wait for them:
		// they are hijacked); later upgrades get 503.
		apiServer.Close()
	}
	if err := srv.Shutdown(stopCtx); err != nil {
		log.Warn("requests still running at the shutdown timeout were cut off", "error", err)
		srv.Close()
	}
	if worker != nil {
		if err := worker.Stop(stopCtx); err != nil {
			log.Warn("tasks still running at the shutdown timeout were cancelled and will be retried", "error", err)
		}
	}
	if relay != nil {
		if err := relay.Stop(stopCtx); err != nil {
			log.Warn("the outbox relay did not stop within the shutdown timeout", "error", err)
		}
	}
	log.Info("stopped")
	if serveErr != nil && !errors.Is(serveErr, http.ErrServerClosed) {
		return serveErr
	}
	return nil
}

// apiKeys parses --api-keys (DTQ_API_KEYS), which may not repeat the
// admin key of --api-key. An error names the entry, never a key.
func apiKeys(o processOptions) ([]api.Key, error) {
	keys, err := api.ParseKeys(o.apiKeys)
	if err != nil {
		return nil, fmt.Errorf("--api-keys (DTQ_API_KEYS): %w", err)
	}
	for i, k := range keys {
		if o.apiKey != "" && k.Key == o.apiKey {
			return nil, fmt.Errorf("--api-keys (DTQ_API_KEYS): entry %d: its key is the admin key of --api-key (one key has one role)", i+1)
		}
	}
	return keys, nil
}

// connectBackend connects to Redis, or starts the embedded backend when no
// URL is given and the process runs everything; it logs which as its first
// line.
func connectBackend(ctx context.Context, log *slog.Logger, o processOptions, r role) (rueidis.Client, func(), error) {
	if o.redisURL == "" || o.redisURL == redisconn.Memory {
		if !(r.api && r.worker) {
			return nil, nil, fmt.Errorf("dtq %s needs --redis or DTQ_REDIS_URL: separate processes share work only through Redis (dtq serve runs everything in one process on the embedded backend)", r.name)
		}
		b, err := embedded.Start()
		if err != nil {
			return nil, nil, err
		}
		log.Info("using the embedded in-memory backend: for trying dtq only, nothing is kept after exit; pass --redis for real Redis",
			"backend", "embedded")
		return b.Client, b.Close, nil
	}
	log.Info("using Redis", "backend", "redis", "url", redisconn.Redact(o.redisURL))
	c, err := redisconn.Connect(ctx, o.redisURL)
	if err != nil {
		return nil, nil, err
	}
	warnings, err := redisconn.CheckSettings(ctx, c)
	if err != nil {
		log.Warn("could not check the Redis settings", "error", err)
	}
	for _, w := range warnings {
		log.Warn("Redis setting puts accepted work at risk", "node", w.Node, "problem", w.Problem)
	}
	return c, c.Close, nil
}

func newLogger(w io.Writer, level string) (*slog.Logger, error) {
	var l slog.Level
	if err := l.UnmarshalText([]byte(level)); err != nil {
		return nil, fmt.Errorf("--log-level must be debug, info, warn or error (got %q)", level)
	}
	return slog.New(slog.NewJSONHandler(w, &slog.HandlerOptions{Level: l})), nil
}

// HTTP server limits: a client gets this long to send its headers and its
// whole request, and at most maxHeaderBytes of headers.
const (
	readHeaderTimeout = 5 * time.Second
	readTimeout       = 30 * time.Second
	writeTimeout      = 30 * time.Second
	idleTimeout       = 2 * time.Minute
	maxHeaderBytes    = 64 << 10
)

func newHTTPServer(h http.Handler, log *slog.Logger) *http.Server {
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: readHeaderTimeout,
		ReadTimeout:       readTimeout,
		WriteTimeout:      writeTimeout,
		IdleTimeout:       idleTimeout,
		MaxHeaderBytes:    maxHeaderBytes,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelDebug),
	}
}

// servePprof serves net/http/pprof on its own listener, apart from the
// API: profiles reveal internals and cost CPU, so they stay off unless
// asked for, on an address the operator keeps private.
func servePprof(addr string, log *slog.Logger) (stop func(), err error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("listen on %s (--pprof-addr): %w", addr, err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: readHeaderTimeout}
	go func() { _ = srv.Serve(ln) }() // ends with ErrServerClosed at stop
	log.Info("serving pprof profiles", "addr", ln.Addr().String())
	return func() { srv.Close() }, nil
}

// retention maps --retention to Config.Retention: 0 is dtq.RetainNone.
func retention(d time.Duration) time.Duration {
	if d == 0 {
		return dtq.RetainNone
	}
	return d
}
