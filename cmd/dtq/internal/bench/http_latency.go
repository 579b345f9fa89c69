package bench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/coder/websocket"
)

// HTTPLatency measures, against a running server, submit→start and
// submit→done: from sending POST /api/v1/tasks to receiving the task's
// RUNNING and SUCCEEDED events on /ws/events. One at a time (perSec 0) or
// perSec a second on a fixed schedule.
func HTTPLatency(ctx context.Context, o HTTPOpts, perSec float64) (Result, error) {
	o.defaults()
	n := o.N
	if n == 100_000 { // the default of the throughput measures
		n = 2000
	}
	t := newTracker(n)
	evCtx, stopEvents := context.WithCancel(ctx)
	defer stopEvents()
	conn, err := dialEvents(evCtx, o)
	if err != nil {
		return nil, err
	}
	defer conn.CloseNow()
	readErr := make(chan error, 1)
	go func() {
		for {
			_, b, err := conn.Read(evCtx)
			if err != nil {
				readErr <- err
				return
			}
			at := time.Now()
			var e struct {
				TaskID string `json:"task_id"`
				Status string `json:"status"`
			}
			if json.Unmarshal(b, &e) != nil {
				continue
			}
			switch e.Status {
			case "RUNNING":
				t.started(e.TaskID, at)
			case "SUCCEEDED", "DEAD", "CANCELLED":
				t.done(e.TaskID, at)
			}
		}
	}()
	c := client(max(o.Connections, 8))
	body := []byte(fmt.Sprintf(`{"task_type":%q,"queue":%q,"payload":%s}`, o.TaskType, o.Queue, Payload))
	submit := func(ctx context.Context) (string, time.Time, error) {
		at := time.Now()
		code, b, err := o.post(ctx, c, "/api/v1/tasks", body)
		if err != nil || code != http.StatusCreated {
			return "", at, fmt.Errorf("POST /api/v1/tasks: %d %v %.200s", code, err, b)
		}
		var task struct {
			ID string `json:"id"`
		}
		if err := json.Unmarshal(b, &task); err != nil {
			return "", at, err
		}
		return task.ID, at, nil
	}
	// Warm up: until one task's SUCCEEDED event arrives.
	deadline := time.Now().Add(30 * time.Second)
	for {
		select {
		case err := <-readErr:
			return nil, fmt.Errorf("events: %w", err)
		default:
		}
		id, at, err := submit(ctx)
		if err != nil {
			return nil, err
		}
		t.expect(id, at)
		if t.wait(ctx, id, time.Second) {
			t.reset()
			break
		}
		if time.Now().After(deadline) {
			return nil, errors.New("no SUCCEEDED event within 30s: does the server run workers for " + o.Queue + "?")
		}
	}
	r, err := t.run(ctx, "latency", n, perSec, submit)
	if r != nil {
		r["via"] = "http+ws"
	}
	return r, err
}

// dialEvents opens /ws/events for o.Queue.
func dialEvents(ctx context.Context, o HTTPOpts) (*websocket.Conn, error) {
	u, err := url.Parse(o.URL + "/ws/events")
	if err != nil {
		return nil, err
	}
	u.Scheme = strings.Replace(u.Scheme, "http", "ws", 1)
	q := url.Values{"queue": {o.Queue}}
	u.RawQuery = q.Encode()
	h := http.Header{}
	if o.APIKey != "" {
		h.Set("X-API-Key", o.APIKey)
	}
	dialCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	conn, _, err := websocket.Dial(dialCtx, u.String(), &websocket.DialOptions{HTTPHeader: h}) //nolint:bodyclose // the websocket owns it
	if err != nil {
		return nil, fmt.Errorf("events: %w", err)
	}
	conn.SetReadLimit(1 << 20)
	return conn, nil
}
