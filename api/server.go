// Package api is dtq's HTTP API: JSON over net/http, on the task engine.
// Handlers validate, call the engine and map its errors to status codes;
// docs/api.md and docs/CONTRACT.md give the routes and shapes.
package api

import (
	"context"
	"crypto/sha256"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/dtq-dev/dtq"
	"github.com/dtq-dev/dtq/api/wire"
	"github.com/dtq-dev/dtq/conn"
	"github.com/dtq-dev/dtq/internal/redisconn"
	"github.com/dtq-dev/dtq/queue"
)

// Config configures a Server. The zero value of every field means its
// default.
type Config struct {
	// APIKey, when set, is required in the X-API-Key header of every
	// mutating and admin route. Defaults to none: no authentication.
	APIKey string
	// APIKeyReads requires the key on read routes too. Defaults to false.
	APIKeyReads bool
	// MaxBodyBytes bounds a request body. Defaults to 2 MiB.
	MaxBodyBytes int64
	// MaxBatch bounds the tasks of one batch submission. Defaults to 1000.
	MaxBatch int
	// RequestTimeout bounds how long a request (not the WebSocket route)
	// waits for Redis: past it the request answers 503. Without it, reads
	// would wait as long as Redis is unreachable. (A submit also gives up
	// with the engine's batch, after 10s.) Defaults to 10s.
	RequestTimeout time.Duration
	// Logger receives request failures. Defaults to discarding them.
	Logger *slog.Logger
	// ObserveRequest, when set, is called after every request with the
	// route pattern it matched ("POST /api/v1/tasks"; "unmatched" for a
	// 404 or 405), the status code written (101 for a WebSocket upgrade)
	// and the time until its handler returned. It must not block. Defaults
	// to none.
	ObserveRequest func(route string, code int, d time.Duration)
	// WSBuffer is how many events a WebSocket client of GET /ws/events may
	// have waiting to be written; a client that falls further behind is
	// dropped (close status 1008). Defaults to 256.
	WSBuffer int
	// AllowedOrigins lists the browser origins, besides the request's own
	// host, that may open GET /ws/events: host patterns as
	// websocket.AcceptOptions.OriginPatterns take them ("*.example.com", or
	// "https://app.example.com" to match the scheme too). Requests without
	// an Origin header are always allowed. Defaults to none: same host only.
	AllowedOrigins []string
	// MessageQueue configures the message queues of /api/v1/mq (package
	// queue): tombstones, message size, dead-letter cap. Its Namespace and
	// Logger are the server's. Defaults to queue's defaults.
	MessageQueue queue.Config
}

// Server serves the API. Build it with New; serve Handler.
type Server struct {
	c       *dtq.Client
	admin   *dtq.Admin
	leases  *dtq.LeaseServer // runs from New to Close
	redis   *conn.Redis
	cfg     Config
	log     *slog.Logger
	keyHash []byte
	mux     *http.ServeMux
	csrf    *http.CrossOriginProtection
	hub     *wsHub
	mqs     mqQueues
	// patterns lists the routes registered on mux, in order.
	patterns []string
}

// New returns a Server on client, whose Redis connection redis also
// answers the readiness probe.
func New(client *dtq.Client, redis *conn.Redis, cfg *Config) *Server {
	var c Config
	if cfg != nil {
		c = *cfg
	}
	if c.MaxBodyBytes <= 0 {
		c.MaxBodyBytes = 2 << 20
	}
	if c.MaxBatch <= 0 {
		c.MaxBatch = 1000
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.RequestTimeout <= 0 {
		c.RequestTimeout = 10 * time.Second
	}
	if c.WSBuffer <= 0 {
		c.WSBuffer = 256
	}
	leases, err := dtq.NewLeaseServer(client, nil)
	if err != nil {
		panic(err) // the default configuration is valid
	}
	_ = leases.Start(context.Background()) // a new server starts; its schedulers stop at Close
	s := &Server{c: client, admin: dtq.NewAdmin(client), leases: leases, redis: redis, cfg: c,
		log: c.Logger.With("component", "api"), mux: http.NewServeMux()}
	if c.APIKey != "" {
		h := sha256.Sum256([]byte(c.APIKey))
		s.keyHash = h[:]
	}
	s.hub = newWSHub(client, c.WSBuffer, c.Logger)
	s.csrf = s.crossOriginProtection()
	s.warnBadOrigins()
	s.routes()
	return s
}

func (s *Server) routes() {
	const read, write = true, false
	m := routeRecorder{s.mux, &s.patterns}
	m.HandleFunc("POST /api/v1/tasks", s.auth(write, s.submit))
	m.HandleFunc("POST /api/v1/tasks/batch", s.auth(write, s.submitBatch))
	m.HandleFunc("GET /api/v1/tasks/{id}", s.auth(read, s.getTask))
	m.HandleFunc("GET /api/v1/tasks", s.auth(read, s.listTasks))
	m.HandleFunc("POST /api/v1/tasks/{id}/cancel", s.auth(write, s.cancelTask))
	m.HandleFunc("POST /api/v1/tasks/{id}/signals/{name}", s.auth(write, s.signalTask))
	m.HandleFunc("POST /api/v1/workflows", s.auth(write, s.submitWorkflow))
	m.HandleFunc("GET /api/v1/workflows/{id}", s.auth(read, s.getWorkflow))
	m.HandleFunc("POST /api/v1/workflows/{id}/cancel", s.auth(write, s.cancelWorkflow))
	m.HandleFunc("POST /api/v1/leases", s.authFor(write, maxHTTPLeaseWait, s.lease))
	m.HandleFunc("POST /api/v1/leases/outcomes", s.auth(write, s.endLeases))
	m.HandleFunc("POST /api/v1/leases/{lease}/extend", s.auth(write, s.extendLease))
	m.HandleFunc("POST /api/v1/leases/{lease}/complete", s.auth(write, s.completeLease))
	m.HandleFunc("POST /api/v1/leases/{lease}/fail", s.auth(write, s.failLease))
	m.HandleFunc("POST /api/v1/leases/{lease}/progress", s.auth(write, s.leaseProgress))
	m.HandleFunc("GET /api/v1/leases/{lease}/steps", s.auth(write, s.leaseSteps))
	m.HandleFunc("PUT /api/v1/leases/{lease}/steps/{name}", s.auth(write, s.recordLeaseStep))
	m.HandleFunc("POST /api/v1/leases/{lease}/sleep", s.auth(write, s.sleepLease))
	m.HandleFunc("POST /api/v1/leases/{lease}/wait", s.auth(write, s.waitLease))
	m.HandleFunc("POST /api/v1/leases/{lease}/child", s.auth(write, s.childLease))
	m.HandleFunc("POST /api/v1/mq/{queue}/topics/{topic}/messages", s.auth(write, s.mqPut))
	m.HandleFunc("GET /api/v1/mq/{queue}/topics/{topic}", s.auth(read, s.mqTopic))
	m.HandleFunc("GET /api/v1/mq/{queue}/dead", s.auth(read, s.mqDead))
	m.HandleFunc("POST /api/v1/mq/{queue}/leases", s.authFor(write, maxHTTPLeaseWait, s.mqLeases))
	m.HandleFunc("POST /api/v1/mq/{queue}/leases/{lease}/ack", s.auth(write, s.mqAck))
	m.HandleFunc("POST /api/v1/mq/{queue}/leases/{lease}/extend", s.auth(write, s.mqExtend))
	m.HandleFunc("POST /api/v1/mq/{queue}/leases/{lease}/release", s.auth(write, s.mqRelease))
	m.HandleFunc("POST /api/v1/mq/{queue}/leases/{lease}/nak", s.auth(write, s.mqNak))
	m.HandleFunc("POST /api/v1/mq/{queue}/leases/{lease}/term", s.auth(write, s.mqTerm))
	m.HandleFunc("GET /api/v1/dlq", s.auth(read, s.listDead))
	m.HandleFunc("POST /api/v1/dlq/{id}/requeue", s.auth(write, s.requeue))
	m.HandleFunc("DELETE /api/v1/dlq/{id}", s.auth(write, s.discard))
	m.HandleFunc("POST /api/v1/dlq/requeue", s.auth(write, s.requeueAll))
	m.HandleFunc("POST /api/v1/dlq/redrive", s.authFor(write, maxHTTPRedrive, s.redrive))
	m.HandleFunc("DELETE /api/v1/dlq", s.auth(write, s.purge))
	m.HandleFunc("GET /api/v1/queues", s.auth(read, s.listQueues))
	m.HandleFunc("GET /api/v1/queues/{name}", s.auth(read, s.getQueue))
	m.HandleFunc("DELETE /api/v1/queues/{name}", s.auth(write, s.deleteQueue))
	m.HandleFunc("POST /api/v1/queues/{name}/pause", s.auth(write, s.pause))
	m.HandleFunc("POST /api/v1/queues/{name}/resume", s.auth(write, s.resume))
	m.HandleFunc("GET /api/v1/schedules", s.auth(read, s.listSchedules))
	m.HandleFunc("GET /api/v1/schedules/{queue}/{name}", s.auth(read, s.getSchedule))
	m.HandleFunc("PUT /api/v1/schedules/{queue}/{name}", s.auth(write, s.putSchedule))
	m.HandleFunc("DELETE /api/v1/schedules/{queue}/{name}", s.auth(write, s.deleteSchedule))
	m.HandleFunc("POST /api/v1/schedules/{queue}/{name}/pause", s.auth(write, s.pauseSchedule))
	m.HandleFunc("POST /api/v1/schedules/{queue}/{name}/resume", s.auth(write, s.resumeSchedule))
	m.HandleFunc("GET /api/v1/limits", s.auth(read, s.listLimits))
	m.HandleFunc("GET /api/v1/limits/{queue}", s.auth(read, s.getLimit))
	m.HandleFunc("PUT /api/v1/limits/{queue}", s.auth(write, s.putLimit))
	m.HandleFunc("DELETE /api/v1/limits/{queue}", s.auth(write, s.deleteLimit))
	m.HandleFunc("GET /api/v1/queues/{name}/groups", s.auth(read, s.listGroups))
	m.HandleFunc("PUT /api/v1/queues/{name}/groups/{group}", s.auth(write, s.putGroup))
	m.HandleFunc("DELETE /api/v1/queues/{name}/groups/{group}", s.auth(write, s.deleteGroup))
	m.HandleFunc("GET /api/v1/queues/{name}/order-keys", s.auth(read, s.listOrderKeys))
	m.HandleFunc("GET /api/v1/queues/{name}/order-keys/{key}", s.auth(read, s.getOrderKey))
	m.HandleFunc("PUT /api/v1/limits/{queue}/types/{type}", s.auth(write, s.putTypeLimit))
	m.HandleFunc("DELETE /api/v1/limits/{queue}/types/{type}", s.auth(write, s.deleteTypeLimit))
	m.HandleFunc("PUT /api/v1/limits/{queue}/keys/{key}", s.auth(write, s.putKeyLimit))
	m.HandleFunc("DELETE /api/v1/limits/{queue}/keys/{key}", s.auth(write, s.deleteKeyLimit))
	m.HandleFunc("GET /api/v1/workers", s.auth(read, s.workers))
	m.HandleFunc("GET /api/v1/audit", s.auth(read, s.audit))
	m.HandleFunc("GET /api/v1/history", s.auth(read, s.history))
	m.HandleFunc("GET /health", s.health)
	m.HandleFunc("GET /ready", s.ready)
	m.HandleFunc("GET /api/v1/openapi.json", s.openapi)
	m.HandleFunc("GET /ws/events", s.events) // checks the API key itself: header or query
}

// Close stops the WebSocket event hub and closes every connection of
// GET /ws/events with status 1001 (going away), waiting for them to end: at
// most about 10 seconds for a client that does not answer the close
// handshake. Later WebSocket requests get 503. The HTTP routes keep working.
// http.Server.Shutdown does not wait for WebSocket connections (they are
// hijacked): call Close after it. Close also stops the schedulers the
// lease routes run (leases handed out stay valid). Close may be called
// more than once.
func (s *Server) Close() {
	s.hub.close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := s.leases.Stop(ctx); err != nil {
		s.log.Warn("closing the API", "err", err)
	}
}

// Handler returns the API's handler. Unknown paths answer 404 and known
// paths with another method 405 (with Allow), in the API's error shape.
func (s *Server) Handler() http.Handler {
	return observe(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, pattern := s.mux.Handler(r); pattern == "" {
			var allowed []string
			for _, m := range []string{http.MethodGet, http.MethodPost, http.MethodPut, http.MethodDelete} {
				probe := r.Clone(r.Context())
				probe.Method = m
				if _, p := s.mux.Handler(probe); p != "" {
					allowed = append(allowed, m)
				}
			}
			if len(allowed) == 0 {
				writeError(w, http.StatusNotFound, wire.CodeNotFound, "no such route: "+r.URL.Path)
				return
			}
			w.Header().Set("Allow", strings.Join(allowed, ", "))
			writeError(w, http.StatusMethodNotAllowed, wire.CodeMethod, r.Method+" is not allowed here")
			return
		}
		if err := s.csrf.Check(r); err != nil {
			writeError(w, http.StatusForbidden, wire.CodeForbiddenOrigin,
				"cross-origin browser request refused: state-changing routes take requests from the server's own origin or an allowed one")
			return
		}
		s.mux.ServeHTTP(w, r)
	}), s.cfg.ObserveRequest)
}

func (s *Server) health(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, wire.Health{Status: "ok"})
}

func (s *Server) ready(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), readyTimeout)
	defer cancel()
	rc := redisconn.Client(s.redis)
	if err := rc.Do(ctx, rc.B().Ping().Build()).Error(); err != nil {
		w.Header().Set("Retry-After", "1")
		writeError(w, http.StatusServiceUnavailable, wire.CodeUnavailable, "Redis is not reachable")
		return
	}
	writeJSON(w, http.StatusOK, wire.Health{Status: "ready"})
}

// crossOriginProtection refuses state-changing requests that a browser
// sends from another site (CSRF: a page elsewhere posting to this API with
// its visitor's network position). Non-browser clients send neither
// Sec-Fetch-Site nor Origin and are not affected. Origins listed in
// AllowedOrigins with their scheme ("https://app.example.com") are trusted.
func (s *Server) crossOriginProtection() *http.CrossOriginProtection {
	c := http.NewCrossOriginProtection()
	for _, o := range s.cfg.AllowedOrigins {
		if strings.Contains(o, "://") && !strings.Contains(o, "*") {
			if err := c.AddTrustedOrigin(o); err != nil {
				s.log.Warn("AllowedOrigins entry is not a valid origin for state-changing requests", "origin", o, "error", err)
			}
		}
	}
	return c
}
