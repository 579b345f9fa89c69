package main

import (
	"testing"

	"github.com/dtq-dev/dtq"
)

func TestRetryDLQ(t *testing.T) {
	forEachAPI(t, nil, func(t *testing.T, e *apiEnv) {
		a, b := e.deadTask("other"), e.deadTask("other")
		c := e.deadTask("default")

		// Neither --queue nor --all-queues: refused, nothing requeued
		// (issue 30: it acted on every queue).
		e.fails([]string{"retry-dlq"}, "give --queue NAME or --all-queues")
		e.fails([]string{"retry-dlq", "--queue", ""}, "give --queue NAME or --all-queues")
		e.fails([]string{"retry-dlq", "--queue", "other", "--all-queues"}, "none of the others can be")
		if st, err := dtq.NewAdmin(e.c).Stats(t.Context(), "other"); err != nil || st.Dead != 2 {
			t.Fatalf("after refused retry-dlq: %+v %v", st, err)
		}

		if out := e.ok("retry-dlq", "--queue", "other"); out != "requeued 2 dead letters of queue other\n" {
			t.Errorf("dtq retry-dlq --queue other printed %q", out)
		}
		// They run again (and fail again); c was not touched.
		for _, id := range []string{a, b} {
			if task := e.waitStatus(id, dtq.StatusDead); len(task.History) != 2 {
				t.Errorf("task %s ran %d times in all, want 2", id, len(task.History))
			}
		}
		if task, err := e.c.Get(t.Context(), c); err != nil || len(task.History) != 1 || task.Status != dtq.StatusDead {
			t.Errorf("task %s of another queue: %+v, %v", c, task, err)
		}

		// Every queue: the three dead letters there now.
		if v := e.json("retry-dlq", "--all-queues"); v["requeued"] != 3.0 {
			t.Errorf("dtq retry-dlq --json: %v", v)
		}
		for _, id := range []string{a, b, c} {
			e.waitStatus(id, dtq.StatusDead)
		}
		e.fails([]string{"retry-dlq", "--queue", "bad name"}, "400 invalid_field: queue")
		e.fails([]string{"retry-dlq", "--queue", "no-such-queue"}, `404 not_found: no such queue "no-such-queue"`)
		if out := e.ok("retry-dlq", "--all-queues"); out != "requeued 3 dead letters of every queue\n" {
			t.Errorf("dtq retry-dlq --all-queues printed %q", out)
		}
		e.fails([]string{"retry-dlq", "extra"}, `unknown command "extra"`)
	})
}
