package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// /ws/events streams a task's lifecycle; SIGTERM closes the stream with
// 1001 (going away) and the process still exits 0.
func TestEventsOverWebSocket(t *testing.T) {
	t.Parallel()
	p := start(t, nil, "serve", "--addr", "127.0.0.1:0")
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	conn, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(p.URL, "http")+"/ws/events?queue=default", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.CloseNow()
	// One reader: a Read whose context ends closes the connection.
	type frame struct {
		TaskID string `json:"task_id"`
		Status string `json:"status"`
	}
	frames, ended := make(chan frame, 1024), make(chan error, 1)
	go func() {
		for {
			_, b, err := conn.Read(ctx)
			if err != nil {
				ended <- err
				return
			}
			var f frame
			if err := json.Unmarshal(b, &f); err != nil {
				ended <- err
				return
			}
			frames <- f
		}
	}()
	// Until the hub's subscription is live, events may be missed (also
	// the first of a task whose later ones arrive): submit until one task's
	// QUEUED, RUNNING and SUCCEEDED have all arrived.
	seen := map[string]bool{}
	var id string
	all := func() bool { return seen[id+" QUEUED"] && seen[id+" RUNNING"] && seen[id+" SUCCEEDED"] }
	for id == "" || !all() {
		id = p.Must(http.StatusCreated, "POST", "/api/v1/tasks", `{"task_type":"echo"}`).Str("id")
		wait := time.After(time.Second)
	collect:
		for !all() {
			select {
			case f := <-frames:
				seen[f.TaskID+" "+f.Status] = true
			case err := <-ended:
				t.Fatalf("event stream ended: %v", err)
			case <-wait:
				break collect
			}
		}
		if ctx.Err() != nil {
			t.Fatalf("no task's QUEUED, RUNNING and SUCCEEDED events within a minute: %v", seen)
		}
	}
	p.Signal(syscall.SIGTERM)
	select {
	case err := <-ended:
		if websocket.CloseStatus(err) != websocket.StatusGoingAway {
			t.Errorf("on SIGTERM the stream ended with %v, want 1001", err)
		}
	case <-ctx.Done():
		t.Fatal("the stream did not end after SIGTERM")
	}
	if err := p.Stop(); err != nil && !errors.Is(err, context.Canceled) {
		t.Fatalf("exit: %v\n%s", err, p.Stderr())
	}
}
