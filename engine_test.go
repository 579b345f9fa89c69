package dtq_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/dtq-dev/dtq"
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
		if len(done.History) != 1 || done.History[0].Outcome != "ok" || done.Attempt != 1 || done.FinishedAt == nil {
			t.Fatalf("history %+v attempt %d finished %v", done.History, done.Attempt, done.FinishedAt)
		}
	})
}
