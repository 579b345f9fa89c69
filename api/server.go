// Package api is dtq's HTTP API: JSON over net/http, on the task engine.
// Handlers validate, call the engine and map its errors to status codes;
// docs/api.md and docs/CONTRACT.md give the routes and shapes.
package api

import (
	"context"
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
	// APIKey, when set, is an admin key (RoleAdmin): it may call every
	// route. With it or any key of Keys configured, every route that
	// changes state needs a key in the X-API-Key header whose role allows
	// it (401 without a known key, 403 with one whose role does not).
	// Defaults to none: with no Keys either, no authentication.
	APIKey string
	// Keys are API keys with their roles, besides APIKey. A key appears
	// once; New panics on an unknown role, an empty key or a key given
	// twice (Config.CheckKeys reports them as errors). Defaults to none.
	Keys []Key
	// APIKeyReads requires a key on read routes too (any role may read).
	// Defaults to false: reads are open, whatever the keys.
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
	keyring keyring
	mux     *http.ServeMux
	csrf    *http.CrossOriginProtection
	hub     *wsHub
	mqs     mqQueues
	// table lists the routes registered on mux, in order, with their
	// roles.
	table []route
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
	if err := c.CheckKeys(); err != nil {
		panic("api: Config." + err.Error())
	}
	s := &Server{c: client, admin: dtq.NewAdmin(client), leases: leases, redis: redis, cfg: c,
		log: c.Logger.With("component", "api"), mux: http.NewServeMux()}
	s.keyring = newKeyring(&c)
	s.hub = newWSHub(client, c.WSBuffer, c.Logger)
	s.csrf = s.crossOriginProtection()
	s.warnBadOrigins()
	s.routes()
	return s
}

// routes registers every route with the least role that may call it
// (Role; docs/api.md has the table).
func (s *Server) routes() {
	m := routeTable{s, &s.table}
	m.handle("POST /api/v1/tasks", RoleSubmit, s.submit)
	m.handle("POST /api/v1/tasks/batch", RoleSubmit, s.submitBatch)
	m.handleWait("POST /api/v1/tasks/bulk", RoleAdmin, maxHTTPRedrive, s.bulk)
	m.handle("GET /api/v1/tasks/{id}", RoleRead, s.getTask)
	m.handle("GET /api/v1/tasks", RoleRead, s.listTasks)
	m.handle("POST /api/v1/tasks/{id}/cancel", RoleSubmit, s.cancelTask)
	m.handle("POST /api/v1/tasks/{id}/signals/{name}", RoleSubmit, s.signalTask)
	m.handle("POST /api/v1/tasks/{id}/run-now", RoleAdmin, s.runNow)
	m.handle("POST /api/v1/workflows", RoleSubmit, s.submitWorkflow)
	m.handle("GET /api/v1/workflows", RoleRead, s.listWorkflows)
	m.handle("GET /api/v1/workflows/{id}", RoleRead, s.getWorkflow)
	m.handle("POST /api/v1/workflows/{id}/cancel", RoleSubmit, s.cancelWorkflow)
	m.handleWait("POST /api/v1/leases", RoleWorker, maxHTTPLeaseWait, s.lease)
	m.handle("POST /api/v1/leases/outcomes", RoleWorker, s.endLeases)
	m.handle("POST /api/v1/leases/{lease}/extend", RoleWorker, s.extendLease)
	m.handle("POST /api/v1/leases/{lease}/complete", RoleWorker, s.completeLease)
	m.handle("POST /api/v1/leases/{lease}/fail", RoleWorker, s.failLease)
	m.handle("POST /api/v1/leases/{lease}/progress", RoleWorker, s.leaseProgress)
	m.handle("GET /api/v1/leases/{lease}/steps", RoleWorker, s.leaseSteps)
	m.handle("PUT /api/v1/leases/{lease}/steps/{name}", RoleWorker, s.recordLeaseStep)
	m.handle("POST /api/v1/leases/{lease}/sleep", RoleWorker, s.sleepLease)
	m.handle("POST /api/v1/leases/{lease}/wait", RoleWorker, s.waitLease)
	m.handle("POST /api/v1/leases/{lease}/child", RoleWorker, s.childLease)
	m.handle("POST /api/v1/mq/{queue}/topics/{topic}/messages", RoleSubmit, s.mqPut)
	m.handle("GET /api/v1/mq", RoleRead, s.mqQueueList)
	m.handle("GET /api/v1/mq/{queue}/topics", RoleRead, s.mqTopicList)
	m.handle("GET /api/v1/mq/{queue}/topics/{topic}", RoleRead, s.mqTopic)
	m.handle("GET /api/v1/mq/{queue}/dead", RoleRead, s.mqDead)
	m.handleWait("POST /api/v1/mq/{queue}/leases", RoleWorker, maxHTTPLeaseWait, s.mqLeases)
	m.handle("POST /api/v1/mq/{queue}/leases/{lease}/ack", RoleWorker, s.mqAck)
	m.handle("POST /api/v1/mq/{queue}/leases/{lease}/extend", RoleWorker, s.mqExtend)
	m.handle("POST /api/v1/mq/{queue}/leases/{lease}/release", RoleWorker, s.mqRelease)
	m.handle("POST /api/v1/mq/{queue}/leases/{lease}/nak", RoleWorker, s.mqNak)
	m.handle("POST /api/v1/mq/{queue}/leases/{lease}/term", RoleWorker, s.mqTerm)
	m.handle("GET /api/v1/dlq", RoleRead, s.listDead)
	m.handle("POST /api/v1/dlq/{id}/requeue", RoleAdmin, s.requeue)
	m.handle("DELETE /api/v1/dlq/{id}", RoleAdmin, s.discard)
	m.handle("POST /api/v1/dlq/requeue", RoleAdmin, s.requeueAll)
	m.handleWait("POST /api/v1/dlq/redrive", RoleAdmin, maxHTTPRedrive, s.redrive)
	m.handle("DELETE /api/v1/dlq", RoleAdmin, s.purge)
	m.handle("GET /api/v1/queues", RoleRead, s.listQueues)
	m.handle("GET /api/v1/queues/{name}", RoleRead, s.getQueue)
	m.handle("DELETE /api/v1/queues/{name}", RoleAdmin, s.deleteQueue)
	m.handle("POST /api/v1/queues/{name}/pause", RoleAdmin, s.pause)
	m.handle("POST /api/v1/queues/{name}/resume", RoleAdmin, s.resume)
	m.handle("GET /api/v1/schedules", RoleRead, s.listSchedules)
	m.handle("GET /api/v1/schedules/{queue}/{name}", RoleRead, s.getSchedule)
	m.handle("PUT /api/v1/schedules/{queue}/{name}", RoleAdmin, s.putSchedule)
	m.handle("DELETE /api/v1/schedules/{queue}/{name}", RoleAdmin, s.deleteSchedule)
	m.handle("POST /api/v1/schedules/{queue}/{name}/pause", RoleAdmin, s.pauseSchedule)
	m.handle("POST /api/v1/schedules/{queue}/{name}/resume", RoleAdmin, s.resumeSchedule)
	m.handle("GET /api/v1/limits", RoleRead, s.listLimits)
	m.handle("GET /api/v1/limits/{queue}", RoleRead, s.getLimit)
	m.handle("PUT /api/v1/limits/{queue}", RoleAdmin, s.putLimit)
	m.handle("DELETE /api/v1/limits/{queue}", RoleAdmin, s.deleteLimit)
	m.handle("GET /api/v1/queues/{name}/groups", RoleRead, s.listGroups)
	m.handle("PUT /api/v1/queues/{name}/groups/{group}", RoleAdmin, s.putGroup)
	m.handle("DELETE /api/v1/queues/{name}/groups/{group}", RoleAdmin, s.deleteGroup)
	m.handle("GET /api/v1/queues/{name}/order-keys", RoleRead, s.listOrderKeys)
	m.handle("GET /api/v1/queues/{name}/order-keys/{key}", RoleRead, s.getOrderKey)
	m.handle("PUT /api/v1/limits/{queue}/types/{type}", RoleAdmin, s.putTypeLimit)
	m.handle("DELETE /api/v1/limits/{queue}/types/{type}", RoleAdmin, s.deleteTypeLimit)
	m.handle("PUT /api/v1/limits/{queue}/keys/{key}", RoleAdmin, s.putKeyLimit)
	m.handle("DELETE /api/v1/limits/{queue}/keys/{key}", RoleAdmin, s.deleteKeyLimit)
	m.handle("GET /api/v1/workers", RoleRead, s.workers)
	m.handle("POST /api/v1/workers/{id}/quiet", RoleAdmin, s.quietWorker)
	m.handle("POST /api/v1/workers/{id}/stop", RoleAdmin, s.stopWorker)
	m.handle("GET /api/v1/audit", RoleRead, s.audit)
	m.handle("GET /api/v1/history", RoleRead, s.history)
	m.handle("GET /api/v1/whoami", RoleRead, s.whoami)
	m.open("GET /health", s.health)
	m.open("GET /ready", s.ready)
	m.open("GET /api/v1/openapi.json", s.openapi)
	m.own("GET /ws/events", RoleRead, s.events) // checks the key itself: header or query
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
