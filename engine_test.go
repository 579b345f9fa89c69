package dtq_test

import (
	"context"
	"encoding/json"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/dtq-dev/dtq"
	"github.com/dtq-dev/dtq/internal/redisconn"
)

func TestEnqueueRunSucceed(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		e.worker(nil, map[string]dtq.HandlerFunc{
			"echo": func(ctx context.Context, task *dtq.Task) (any, error) {
				var p map[string]any
				json.Unmarshal(task.Payload, &p)
				return map[string]any{"echo": p, "attempt": task.Attempt}, nil
			},
		})
		task := e.enqueue("echo", map[string]string{"hello": "world"}, &dtq.EnqueueOpts{Priority: dtq.Ptr(9)})
		if task.Status != dtq.StatusQueued || task.Queue != "default" || task.Priority != 9 {
			t.Fatalf("enqueued %+v", task)
		}
		done := e.waitStatus(task.ID, dtq.StatusSucceeded, 10*time.Second)
		if string(done.Result) != `{"attempt":1,"echo":{"hello":"world"}}` {
			t.Fatalf("result %s", done.Result)
		}
		if len(done.History) != 1 || done.History[0].Outcome != dtq.OutcomeSucceeded || done.Attempt != 1 || done.FinishedAt == nil {
			t.Fatalf("history %+v attempt %d finished %v", done.History, done.Attempt, done.FinishedAt)
		}
	})
}

// Processes meeting a fresh namespace at once all take it: none reads the
// queue set another just registered as data of the first layout (the check
// reads the layout record and the queue set in two steps: CI met the race
// with 100 concurrent enqueues). A stress test: the window is narrow and
// 40 rounds here did not hit it without the fix; TestRecheckLayout (store)
// is the test that fails without it.
func TestConcurrentFirstUseOfANamespace(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		for round := range 40 {
			ns := e.Namespace + "-fresh" + strconv.Itoa(round)
			var wg sync.WaitGroup
			for range 8 {
				wg.Go(func() {
					// a connection of its own, as another process has
					var addr string
					if e.Server != nil {
						addr = e.Server.Addr
					} else {
						addr = e.Embedded.Server.Addr()
					}
					rc, err := rueidis.NewClient(rueidis.ClientOption{InitAddress: []string{addr}, DisableCache: true, ForceSingleClient: true})
					if err != nil {
						t.Error(err)
						return
					}
					defer rc.Close()
					c, err := dtq.NewClient(redisconn.Wrap(rc), &dtq.Config{Namespace: ns})
					if err != nil {
						t.Error(err)
						return
					}
					if _, err := c.Enqueue(t.Context(), "x", nil, nil); err != nil {
						t.Errorf("round %d: %v", round, err)
					}
				})
			}
			wg.Wait()
		}
	})
}
