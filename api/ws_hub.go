package api

import (
	"context"
	"encoding/json"
	"log/slog"
	"sync"
	"time"

	"github.com/coder/websocket"
	"github.com/dtq-dev/dtq"
)

// WebSocket timings.
const (
	wsPingInterval = 30 * time.Second // between pings to a client
	wsWriteTimeout = 5 * time.Second  // for one frame, and for a ping's pong
	wsRetryMin     = 100 * time.Millisecond
	wsRetryMax     = 5 * time.Second // backoff cap of the event subscription
)

// Close reasons sent to WebSocket clients.
const (
	wsReasonSlow     = "too slow: event buffer full"
	wsReasonShutdown = "server shutting down"
)

// wsHub fans the engine's lifecycle events out to WebSocket clients: one
// Client.Events subscription to every queue of the namespace, started by the
// first client and ended by close. Fan-out never blocks: a client whose
// buffer is full is dropped.
type wsHub struct {
	c      *dtq.Client
	log    *slog.Logger
	buffer int
	// ping and writeTimeout are wsPingInterval and wsWriteTimeout; tests
	// shorten them before the server serves.
	ping         time.Duration
	writeTimeout time.Duration

	mu      sync.Mutex
	clients map[*wsClient]struct{}
	started bool
	closed  bool
	cancel  context.CancelFunc // ends the subscription
	closing chan struct{}      // closed by close: clients say goodbye
	wg      sync.WaitGroup     // the subscription and every client
}

// wsClient is one connection's place in the hub.
type wsClient struct {
	queues map[string]bool // nil: every queue
	events chan []byte     // JSON frames
	slow   chan struct{}   // closed when the hub drops the client
}

func newWSHub(c *dtq.Client, buffer int, log *slog.Logger) *wsHub {
	return &wsHub{
		c:            c,
		log:          log.With("component", "ws"),
		buffer:       buffer,
		ping:         wsPingInterval,
		writeTimeout: wsWriteTimeout,
		clients:      make(map[*wsClient]struct{}),
		closing:      make(chan struct{}),
	}
}

// add registers a client for the events of queues (all when nil), starting
// the subscription if it is the first. It returns false after close. ctx is
// the request's: the subscription keeps its values, not its cancellation.
// Every successful add must be followed by one remove.
func (h *wsHub) add(ctx context.Context, queues map[string]bool) (*wsClient, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return nil, false
	}
	if !h.started {
		h.started = true
		var sub context.Context
		sub, h.cancel = context.WithCancel(context.WithoutCancel(ctx))
		h.wg.Add(1)
		go h.run(sub)
	}
	cl := &wsClient{queues: queues, events: make(chan []byte, h.buffer), slow: make(chan struct{})}
	h.clients[cl] = struct{}{}
	h.wg.Add(1)
	return cl, true
}

// remove unregisters a client whose connection has ended.
func (h *wsHub) remove(cl *wsClient) {
	h.mu.Lock()
	delete(h.clients, cl)
	h.mu.Unlock()
	h.wg.Done()
}

// count is the number of registered clients.
func (h *wsHub) count() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.clients)
}

// close ends the subscription, tells every client to close and waits for
// them. It is idempotent.
func (h *wsHub) close() {
	h.mu.Lock()
	if !h.closed {
		h.closed = true
		close(h.closing)
		if h.cancel != nil {
			h.cancel()
		}
	}
	h.mu.Unlock()
	h.wg.Wait()
}

// run holds the subscription until ctx ends, subscribing again after a
// failure with a backoff from wsRetryMin doubling to wsRetryMax. Clients
// stay connected meanwhile; the events published in the gap are lost.
func (h *wsHub) run(ctx context.Context) {
	defer h.wg.Done()
	backoff := wsRetryMin
	for {
		began := time.Now()
		err := h.c.Events(ctx, nil, h.publish)
		if ctx.Err() != nil {
			return
		}
		if time.Since(began) > wsRetryMax {
			backoff = wsRetryMin
		}
		h.log.Warn("event subscription ended; subscribing again", "error", err, "backoff", backoff)
		t := time.NewTimer(backoff)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
		backoff = min(2*backoff, wsRetryMax)
	}
}

// publish hands e to every client that wants it. It runs on the
// subscription's goroutine and never blocks: a client whose buffer is full
// is removed and told to close.
func (h *wsHub) publish(e dtq.Event) {
	var frame []byte
	h.mu.Lock()
	defer h.mu.Unlock()
	for cl := range h.clients {
		if cl.queues != nil && !cl.queues[e.Queue] {
			continue
		}
		if frame == nil {
			var err error
			if frame, err = json.Marshal(eventOf(&e)); err != nil {
				h.log.Warn("encoding an event failed", "task_id", e.TaskID, "error", err)
				return
			}
		}
		select {
		case cl.events <- frame:
		default:
			delete(h.clients, cl)
			close(cl.slow)
		}
	}
}

// serve writes cl's events to conn until the connection ends, the hub drops
// cl (close 1008) or the hub closes (close 1001). A separate goroutine pings
// the client every h.ping and ends the connection when a pong does not come
// within h.writeTimeout. Frames the client sends are not read: a data frame
// closes the connection (1008, by websocket.Conn.CloseRead).
func (h *wsHub) serve(ctx context.Context, conn *websocket.Conn, cl *wsClient) {
	ctx = conn.CloseRead(ctx)
	stop, pinged := make(chan struct{}), make(chan struct{})
	defer func() {
		close(stop)
		<-pinged
	}()
	go func() {
		defer close(pinged)
		h.pingLoop(ctx, conn, stop)
	}()
	for {
		// The drop and the shutdown go before the buffered events.
		select {
		case <-cl.slow:
			h.goodbye(conn, websocket.StatusPolicyViolation, wsReasonSlow)
			return
		case <-h.closing:
			h.goodbye(conn, websocket.StatusGoingAway, wsReasonShutdown)
			return
		default:
		}
		select {
		case frame := <-cl.events:
			wctx, cancel := context.WithTimeout(ctx, h.writeTimeout)
			err := conn.Write(wctx, websocket.MessageText, frame)
			cancel()
			if err != nil {
				h.log.Debug("websocket write failed", "error", err)
				conn.CloseNow()
				return
			}
		case <-cl.slow:
		case <-h.closing:
		case <-ctx.Done(): // the client closed or the connection broke
			conn.CloseNow()
			return
		}
	}
}

// pingLoop pings conn every h.ping until stop is closed, and closes conn
// when a ping is not answered within h.writeTimeout.
func (h *wsHub) pingLoop(ctx context.Context, conn *websocket.Conn, stop <-chan struct{}) {
	t := time.NewTicker(h.ping)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
			pctx, cancel := context.WithTimeout(ctx, h.writeTimeout)
			err := conn.Ping(pctx)
			cancel()
			if err != nil {
				h.log.Debug("websocket ping failed", "error", err)
				conn.CloseNow()
				return
			}
		}
	}
}

// goodbye closes conn with a status and reason, with the close handshake
// (bounded by the websocket package: 5 s to write, 5 s for the answer).
func (h *wsHub) goodbye(conn *websocket.Conn, code websocket.StatusCode, reason string) {
	if err := conn.Close(code, reason); err != nil {
		h.log.Debug("websocket close failed", "error", err)
	}
}
