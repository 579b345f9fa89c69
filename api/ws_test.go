package api_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/dtq-dev/dtq"
	"github.com/dtq-dev/dtq/api"
	"github.com/dtq-dev/dtq/internal/redisconn"
	"github.com/dtq-dev/dtq/internal/redistest"
)

// wsWait bounds every wait of these tests: things that take milliseconds.
const wsWait = 10 * time.Second

// wsServer is an API server of its own on an env's engine, so that a test
// can configure it, shorten its timings and Close it.
type wsServer struct {
	e   *env
	api *api.Server
	srv *httptest.Server
}

type wsOpts struct {
	api         api.Config
	ping, write time.Duration // api.SetWSTimings, when ping > 0
	sndBuf      int           // SO_SNDBUF of the server's connections, when > 0
	timeouts    time.Duration // the http.Server's read and write timeouts, when > 0
}

func (e *env) wsServer(o *wsOpts) *wsServer {
	e.t.Helper()
	if o == nil {
		o = &wsOpts{}
	}
	s := api.New(e.c, redisconn.Wrap(e.b.Client), &o.api)
	if o.ping > 0 {
		api.SetWSTimings(s, o.ping, o.write)
	}
	srv := httptest.NewUnstartedServer(s.Handler())
	if o.sndBuf > 0 {
		srv.Config.ConnState = func(c net.Conn, st http.ConnState) {
			if st == http.StateNew {
				c.(*net.TCPConn).SetWriteBuffer(o.sndBuf)
			}
		}
	}
	srv.Config.ReadTimeout, srv.Config.WriteTimeout = o.timeouts, o.timeouts
	srv.Start()
	// Runs before the backend's cleanup, after the connections' (LIFO).
	e.t.Cleanup(func() {
		srv.Close()
		closed := make(chan struct{})
		go func() {
			s.Close()
			close(closed)
		}()
		select {
		case <-closed:
		case <-time.After(2 * wsWait):
			e.t.Errorf("api.Server.Close did not return within %v", 2*wsWait)
		}
	})
	return &wsServer{e: e, api: s, srv: srv}
}

func (w *wsServer) url(query string) string {
	return "ws" + strings.TrimPrefix(w.srv.URL, "http") + "/ws/events" + query
}

// dialResp opens /ws/events with headers (name, value pairs); on a refused
// handshake it returns the answer with its body decoded.
func (w *wsServer) dialResp(query string, o *websocket.DialOptions, headers ...string) (*wsConn, *resp) {
	t := w.e.t
	t.Helper()
	if o == nil {
		o = &websocket.DialOptions{}
	}
	o.HTTPHeader = http.Header{}
	for i := 0; i+1 < len(headers); i += 2 {
		o.HTTPHeader.Set(headers[i], headers[i+1])
	}
	ctx, cancel := context.WithTimeout(t.Context(), wsWait)
	defer cancel()
	conn, res, err := websocket.Dial(ctx, w.url(query), o)
	if err == nil {
		t.Cleanup(func() { conn.CloseNow() })
		return &wsConn{t: t, c: conn, frames: make(chan []byte, 1<<16), done: make(chan struct{})}, nil
	}
	if res == nil {
		t.Fatalf("dial %s: %v", query, err)
	}
	raw, _ := io.ReadAll(res.Body)
	r := &resp{status: res.StatusCode, header: res.Header, raw: raw}
	if err := json.Unmarshal(raw, &r.body); err != nil || res.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("dial %s: %d %q is not a JSON error: %s", query, res.StatusCode, res.Header.Get("Content-Type"), raw)
	}
	return nil, r
}

// dial opens /ws/events and starts reading it.
func (w *wsServer) dial(query string, headers ...string) *wsConn {
	w.e.t.Helper()
	c, r := w.dialResp(query, nil, headers...)
	if c == nil {
		w.e.t.Fatalf("dial %s: status %d: %s", query, r.status, r.raw)
	}
	c.start()
	return c
}

// refused dials and wants the handshake answered with status and code.
func (w *wsServer) refused(status int, code, query string, headers ...string) *resp {
	w.e.t.Helper()
	c, r := w.dialResp(query, nil, headers...)
	if c != nil {
		w.e.t.Fatalf("dial %s %v: connected, want %d %s", query, headers, status, code)
	}
	if r.status != status || r.errCode() != code {
		w.e.t.Fatalf("dial %s %v: %d %s, want %d %s", query, headers, r.status, r.raw, status, code)
	}
	return r
}

// waitClients waits until the server has n WebSocket clients.
func (w *wsServer) waitClients(n int) {
	w.e.t.Helper()
	deadline := time.Now().Add(wsWait)
	for api.WSClients(w.api) != n {
		if time.Now().After(deadline) {
			w.e.t.Fatalf("%d WebSocket clients, want %d", api.WSClients(w.api), n)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// ready waits until the server's event subscription delivers: it submits
// tasks to queue "wsprobe" (which no worker serves) until a client sees an
// event. The server subscribes when its first client connects, and Redis
// has no way to say when a subscription is in place.
func (w *wsServer) ready() {
	t := w.e.t
	t.Helper()
	before := api.WSClients(w.api)
	probe := w.dial("?queue=wsprobe")
	deadline := time.Now().Add(wsWait)
	for {
		w.e.must(http.StatusCreated, "POST", "/api/v1/tasks", `{"task_type":"echo","queue":"wsprobe"}`)
		select {
		case <-probe.frames:
			probe.c.Close(websocket.StatusNormalClosure, "")
			w.waitClients(before)
			return
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatal("the event subscription delivers nothing")
		}
	}
}

// wsConn is a client connection; start reads it into frames.
type wsConn struct {
	t      *testing.T
	c      *websocket.Conn
	frames chan []byte
	done   chan struct{} // closed when reading ends, with err set
	err    error
	seen   []dtq.Event // the events next and waitEvents returned
}

func (c *wsConn) start() {
	go func() {
		defer close(c.done)
		for {
			typ, b, err := c.c.Read(c.t.Context())
			if err != nil {
				c.err = err
				return
			}
			if typ != websocket.MessageText {
				c.err = &websocket.CloseError{Code: -2, Reason: "binary frame"}
				return
			}
			c.frames <- b
		}
	}()
}

// next returns the next event, checking that its frame is exactly the JSON
// of a dtq.Event.
func (c *wsConn) next() dtq.Event {
	c.t.Helper()
	var frame []byte
	select {
	case frame = <-c.frames:
	case <-c.done:
		select {
		case frame = <-c.frames:
		default:
			c.t.Fatalf("connection ended after %d events: %v", len(c.seen), c.err)
		}
	case <-time.After(wsWait):
		c.t.Fatalf("no event within %v after %d events", wsWait, len(c.seen))
	}
	var e dtq.Event
	if err := json.Unmarshal(frame, &e); err != nil {
		c.t.Fatalf("frame %s: %v", frame, err)
	}
	if again, _ := json.Marshal(e); !bytes.Equal(again, frame) {
		c.t.Fatalf("frame %s is not the JSON of a dtq.Event (%s)", frame, again)
	}
	c.seen = append(c.seen, e)
	return e
}

// waitEvents reads events until every task of want has had each of its
// statuses, and returns those events by task and status.
func (c *wsConn) waitEvents(want map[string][]dtq.Status) map[string]map[dtq.Status]dtq.Event {
	c.t.Helper()
	got := make(map[string]map[dtq.Status]dtq.Event)
	missing := 0
	for _, st := range want {
		missing += len(st)
	}
	for missing > 0 {
		e := c.next()
		if !slices.Contains(want[e.TaskID], e.Status) {
			continue
		}
		if got[e.TaskID] == nil {
			got[e.TaskID] = make(map[dtq.Status]dtq.Event)
		}
		if _, dup := got[e.TaskID][e.Status]; !dup {
			missing--
		}
		got[e.TaskID][e.Status] = e
	}
	return got
}

// closed waits for the server to end the connection and returns why.
func (c *wsConn) closed() error {
	c.t.Helper()
	select {
	case <-c.done:
		return c.err
	case <-time.After(wsWait):
		c.t.Fatalf("the connection is still open after %v", wsWait)
		return nil
	}
}

func (e *env) wsSubmit(body string) string {
	e.t.Helper()
	return e.must(http.StatusCreated, "POST", "/api/v1/tasks", body).str("id")
}

var wsDone = []dtq.Status{dtq.StatusQueued, dtq.StatusRunning, dtq.StatusSucceeded}

func TestWSEvents(t *testing.T) {
	forEachBackend(t, nil, func(t *testing.T, e *env) {
		w := e.wsServer(nil)
		w.ready()
		c := w.dial("")
		begin := time.Now().Add(-time.Minute)
		ok := e.wsSubmit(`{"task_type":"echo","priority":7,"payload":{"a":1}}`)
		bad := e.wsSubmit(`{"task_type":"fail","max_attempts":1}`)
		got := c.waitEvents(map[string][]dtq.Status{
			ok:  wsDone,
			bad: {dtq.StatusQueued, dtq.StatusRunning, dtq.StatusDead},
		})
		for id, byStatus := range got {
			for st, ev := range byStatus {
				if ev.Queue != "default" || ev.Time.Before(begin) || ev.Time.After(time.Now().Add(time.Minute)) {
					t.Errorf("%s %s: %+v", id, st, ev)
				}
				if st != dtq.StatusQueued && ev.Attempt != 1 {
					t.Errorf("%s %s: attempt %d, want 1", id, st, ev.Attempt)
				}
			}
		}
		for _, ev := range got[ok] {
			if ev.Type != "echo" || ev.Priority != 7 || ev.Error != "" {
				t.Errorf("echo task: %+v", ev)
			}
		}
		for st, ev := range got[bad] {
			if ev.Type != "fail" || ev.Priority != 5 {
				t.Errorf("fail task: %+v", ev)
			}
			if (st == dtq.StatusDead) != strings.Contains(ev.Error, "boom") {
				t.Errorf("fail task %s: error %q", st, ev.Error)
			}
		}
		// A client that closes is gone from the hub.
		c.c.Close(websocket.StatusNormalClosure, "")
		w.waitClients(0)
	})
}

func TestWSQueueFilter(t *testing.T) {
	forEachBackend(t, &opts{queues: []string{"a", "b", "c"}}, func(t *testing.T, e *env) {
		w := e.wsServer(nil)
		w.ready()
		all := w.dial("")
		onlyA := w.dial("?queue=a")
		bc := w.dial("?queue=c,b")
		ab := w.dial("?queue=b&queue=a")
		ta := e.wsSubmit(`{"task_type":"echo","queue":"a"}`)
		tb := e.wsSubmit(`{"task_type":"echo","queue":"b"}`)
		// The events of both queues were published and reached the hub ...
		all.waitEvents(map[string][]dtq.Status{ta: wsDone, tb: wsDone})
		ab.waitEvents(map[string][]dtq.Status{ta: wsDone, tb: wsDone})
		// ... and the hub hands out events in order: a filtered client that
		// sees a later task of its queue has seen all it will of the others.
		sa := e.wsSubmit(`{"task_type":"echo","queue":"a"}`)
		sb := e.wsSubmit(`{"task_type":"echo","queue":"b"}`)
		onlyA.waitEvents(map[string][]dtq.Status{ta: wsDone, sa: wsDone})
		bc.waitEvents(map[string][]dtq.Status{tb: wsDone, sb: wsDone})
		for _, ev := range onlyA.seen {
			if ev.Queue != "a" {
				t.Errorf("?queue=a got %+v", ev)
			}
		}
		for _, ev := range bc.seen {
			if ev.Queue != "b" && ev.Queue != "c" {
				t.Errorf("?queue=c,b got %+v", ev)
			}
		}
	})
}

func TestWSBadRequests(t *testing.T) {
	forEachBackend(t, &opts{noWorker: true}, func(t *testing.T, e *env) {
		w := e.wsServer(nil)
		for _, q := range []string{"?queue=a%20b", "?queue=a,,b", "?queue=ok&queue=", "?queue=a{b}", "?queue=" + strings.Repeat("x", 65)} {
			r := w.refused(http.StatusBadRequest, "invalid_field", q)
			if !strings.HasPrefix(r.errMessage(), "queue ") {
				t.Errorf("%s: %s", q, r.raw)
			}
		}
		// Not a WebSocket handshake.
		if r := e.do("GET", "/ws/events", ""); r.status != http.StatusUpgradeRequired || r.errCode() != "upgrade_required" {
			t.Errorf("plain GET: %d %s", r.status, r.raw)
		}
		if r := e.do("GET", "/ws/events", "", "Connection", "Upgrade", "Upgrade", "websocket", "Sec-WebSocket-Version", "13"); r.status != http.StatusBadRequest || r.errCode() != "bad_request" {
			t.Errorf("no Sec-WebSocket-Key: %d %s", r.status, r.raw)
		}
		if r := e.do("POST", "/ws/events", ""); r.status != http.StatusMethodNotAllowed {
			t.Errorf("POST: %d %s", r.status, r.raw)
		}
		w.waitClients(0)
	})
}

func TestWSOrigin(t *testing.T) {
	forEachBackend(t, &opts{noWorker: true}, func(t *testing.T, e *env) {
		w := e.wsServer(&wsOpts{api: api.Config{AllowedOrigins: []string{"*.example.com", "https://app.example.org", "[bad"}}})
		host := strings.TrimPrefix(w.srv.URL, "http://")
		for _, origin := range []string{"", "http://" + host, "https://" + host, "https://ui.example.com", "https://app.example.org"} {
			var c *wsConn
			if origin == "" {
				c = w.dial("")
			} else {
				c = w.dial("", "Origin", origin)
			}
			c.c.Close(websocket.StatusNormalClosure, "")
		}
		for _, origin := range []string{"https://evil.test", "http://app.example.org", "https://example.com.evil.test", "null", "http://" + host + ".evil.test"} {
			r := w.refused(http.StatusForbidden, "forbidden_origin", "", "Origin", origin)
			if r.errMessage() == "" {
				t.Errorf("%s: %s", origin, r.raw)
			}
		}
		// Without AllowedOrigins, only the same host.
		same := e.wsServer(nil)
		same.refused(http.StatusForbidden, "forbidden_origin", "", "Origin", "https://ui.example.com")
		same.dial("", "Origin", "http://"+strings.TrimPrefix(same.srv.URL, "http://")).c.Close(websocket.StatusNormalClosure, "")
	})
}

func TestWSAuth(t *testing.T) {
	forEachBackend(t, &opts{noWorker: true}, func(t *testing.T, e *env) {
		w := e.wsServer(&wsOpts{api: api.Config{APIKey: "s3cret", APIKeyReads: true}})
		w.refused(http.StatusUnauthorized, "unauthorized", "")
		w.refused(http.StatusUnauthorized, "unauthorized", "", "X-API-Key", "wrong")
		w.refused(http.StatusUnauthorized, "unauthorized", "?api_key=wrong")
		w.refused(http.StatusUnauthorized, "unauthorized", "?api_key=")
		w.dial("", "X-API-Key", "s3cret").c.Close(websocket.StatusNormalClosure, "")
		w.dial("?api_key=s3cret&queue=a").c.Close(websocket.StatusNormalClosure, "")
		// The key comes before the filter.
		w.refused(http.StatusUnauthorized, "unauthorized", "?queue=a%20b")
		// Reads are open without APIKeyReads.
		open := e.wsServer(&wsOpts{api: api.Config{APIKey: "s3cret"}})
		open.dial("").c.Close(websocket.StatusNormalClosure, "")
	})
}

// TestWSSlowClient: a client that does not read is dropped with 1008 once
// its buffer is full, and a client that reads gets every event meanwhile.
// Small socket buffers make the slow client's connection fill up after a
// few dozen events; each task is submitted after the fast client has all
// the events of the one before, so the fast client never has more than
// three waiting (WSBuffer is 4).
func TestWSSlowClient(t *testing.T) {
	forEachBackend(t, nil, func(t *testing.T, e *env) {
		w := e.wsServer(&wsOpts{api: api.Config{WSBuffer: 4}, ping: time.Hour, write: time.Hour, sndBuf: 4096})
		w.ready()
		tr := &http.Transport{DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			c, err := (&net.Dialer{}).DialContext(ctx, network, addr)
			if err == nil {
				err = c.(*net.TCPConn).SetReadBuffer(4096)
			}
			return c, err
		}}
		t.Cleanup(tr.CloseIdleConnections)
		slow, r := w.dialResp("", &websocket.DialOptions{HTTPClient: &http.Client{Transport: tr}})
		if slow == nil {
			t.Fatalf("dial: %s", r.raw)
		}
		fast := w.dial("")
		w.waitClients(2)
		deadline := time.Now().Add(3 * wsWait)
		tasks := 0
		for api.WSClients(w.api) == 2 {
			if time.Now().After(deadline) {
				t.Fatalf("the slow client is still served after %d tasks", tasks)
			}
			id := e.wsSubmit(`{"task_type":"echo"}`)
			fast.waitEvents(map[string][]dtq.Status{id: wsDone})
			tasks++
		}
		t.Logf("the slow client was dropped after %d tasks", tasks)
		slow.start()
		err := slow.closed()
		if websocket.CloseStatus(err) != websocket.StatusPolicyViolation || !strings.Contains(err.Error(), "too slow: event buffer full") {
			t.Fatalf("slow client: %v, want close 1008", err)
		}
		n := 0
		for range len(slow.frames) {
			slow.next()
			n++
		}
		if n >= 3*tasks {
			t.Fatalf("slow client got all %d events", n)
		}
		// The fast client is still served.
		id := e.wsSubmit(`{"task_type":"echo"}`)
		fast.waitEvents(map[string][]dtq.Status{id: wsDone})
		if n := api.WSClients(w.api); n != 1 {
			t.Fatalf("%d clients, want 1", n)
		}
	})
}

// TestWSPing: a client that does not answer pings is dropped; one that
// reads (and so answers them) stays.
func TestWSPing(t *testing.T) {
	forEachBackend(t, nil, func(t *testing.T, e *env) {
		w := e.wsServer(&wsOpts{ping: 20 * time.Millisecond, write: 3 * time.Second})
		quiet, r := w.dialResp("", nil)
		if quiet == nil {
			t.Fatalf("dial: %s", r.raw)
		}
		var pings atomic.Int64
		alive, r := w.dialResp("", &websocket.DialOptions{OnPingReceived: func(context.Context, []byte) bool {
			pings.Add(1)
			return true
		}})
		if alive == nil {
			t.Fatalf("dial: %s", r.raw)
		}
		alive.start()
		w.waitClients(1)
		if pings.Load() < 3 {
			t.Fatalf("%d pings before the quiet client was dropped", pings.Load())
		}
		quiet.start()
		quiet.closed()
		w.ready() // alive sees the probes, it is the one still served
		id := e.wsSubmit(`{"task_type":"echo"}`)
		alive.waitEvents(map[string][]dtq.Status{id: wsDone})
	})
}

func TestWSClose(t *testing.T) {
	forEachBackend(t, &opts{noWorker: true}, func(t *testing.T, e *env) {
		w := e.wsServer(nil)
		c1, c2 := w.dial(""), w.dial("?queue=a")
		w.waitClients(2)
		closed := make(chan struct{})
		go func() {
			w.api.Close()
			close(closed)
		}()
		for _, c := range []*wsConn{c1, c2} {
			if err := c.closed(); websocket.CloseStatus(err) != websocket.StatusGoingAway {
				t.Fatalf("after Close: %v, want close 1001", err)
			}
		}
		select {
		case <-closed:
		case <-time.After(wsWait):
			t.Fatal("Close did not return")
		}
		w.refused(http.StatusServiceUnavailable, "unavailable", "")
		w.api.Close() // again
		// The HTTP routes still work.
		if r := e.do("GET", "/health", ""); r.status != http.StatusOK {
			t.Fatalf("health: %d", r.status)
		}
	})
}

// TestWSResubscribe: when the subscription's connection is killed, the hub
// subscribes again and its clients, still connected, get events again.
func TestWSResubscribe(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t, nil)
	b := &redistest.Backend{Name: "redis", Client: redistest.Client(t, srv), Namespace: redistest.Namespace(t), Server: srv}
	e := newEnv(t, b, &opts{noWorker: true})
	w := e.wsServer(nil)
	w.ready()
	c := w.dial("")
	admin := redistest.Client(t, srv)
	killed, err := admin.Do(t.Context(), admin.B().ClientKill().TypePubsub().Build()).AsInt64()
	if err != nil || killed < 1 {
		t.Fatalf("CLIENT KILL TYPE pubsub: %d, %v", killed, err)
	}
	deadline := time.Now().Add(wsWait)
	for {
		id := e.wsSubmit(`{"task_type":"echo"}`)
		select {
		case frame := <-c.frames:
			if !strings.Contains(string(frame), id) {
				continue // an earlier task's
			}
			return
		case <-c.done:
			t.Fatalf("the client was disconnected: %v", c.err)
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatal("no events after the subscription was killed")
		}
	}
}

// A WebSocket lives longer than the http.Server's read and write timeouts
// (which dtq's processes set for ordinary requests).
func TestWSOutlivesServerTimeouts(t *testing.T) {
	forEachBackend(t, nil, func(t *testing.T, e *env) {
		w := e.wsServer(&wsOpts{timeouts: 300 * time.Millisecond})
		w.ready()
		c := w.dial("")
		time.Sleep(time.Second)
		id := e.wsSubmit(`{"task_type":"echo"}`)
		c.waitEvents(map[string][]dtq.Status{id: wsDone})
	})
}
