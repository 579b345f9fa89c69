package main

import (
	"strings"
	"testing"

	"github.com/dtq-dev/dtq"
)

// dtq bulk cancel over a filter counts first (--dry-run), refuses without
// --yes, then cancels; over ids it names what it skipped and why.
func TestBulkCancel(t *testing.T) {
	forEachAPI(t, nil, func(t *testing.T, e *apiEnv) {
		var ids []string
		for range 3 {
			ids = append(ids, e.submit("echo", "--queue", "parked", "--delay", "1h"))
		}
		other := e.submit("fail", "--queue", "parked", "--delay", "1h")
		if out := e.ok("bulk", "cancel", "--queue", "parked", "--type", "echo", "--dry-run"); out != "dry run: 3 tasks selected, 3 would be cancelled, 0 skipped; nothing changed\n" {
			t.Errorf("dry run printed %q", out)
		}
		e.fails([]string{"bulk", "cancel", "--queue", "parked", "--type", "echo"}, "count them first with --dry-run, then add --yes")
		e.fails([]string{"bulk", "cancel", "--type", "echo"}, "needs task ids or --queue NAME")
		e.fails([]string{"bulk", "cancel", ids[0], "--queue", "parked"}, "give ids or --queue with filters, not both")
		e.fails([]string{"bulk", "cancel", "--queue", "parked", "--status", "dead", "--yes"}, "400 invalid_field: status cancel takes RUNNING, QUEUED, SCHEDULED tasks (got DEAD)")
		e.fails([]string{"bulk", "cancel", "--queue", "nowhere", "--yes"}, "404 not_found")
		if out := e.ok("bulk", "cancel", "--queue", "parked", "--type", "echo", "--yes", "--limit", "2"); out != "cancelled 3 of 3 tasks selected, 0 skipped\n" {
			t.Errorf("dtq bulk cancel printed %q", out)
		}
		for _, id := range ids {
			e.waitStatus(id, dtq.StatusCancelled)
		}
		if task := e.waitStatus(other, dtq.StatusScheduled); task.Type != "fail" {
			t.Errorf("a task the filter did not match: %+v", task)
		}
		out := e.ok("bulk", "cancel", ids[0], other)
		if !strings.HasPrefix(out, "cancelled 1 of 2 tasks selected, 1 skipped\n") || !strings.Contains(out, "skipped "+ids[0]+": cancelled_already") {
			t.Errorf("dtq bulk cancel of ids printed %q", out)
		}
		if v := e.json("bulk", "cancel", ids[1]); v["skipped_count"] != 1.0 || v["action"] != "cancel" {
			t.Errorf("--json: %v", v)
		}
	})
}

// dtq bulk requeue takes dead letters; dtq bulk delete finished tasks.
func TestBulkRequeueAndDelete(t *testing.T) {
	forEachAPI(t, nil, func(t *testing.T, e *apiEnv) {
		dead := e.deadTask("default")
		if out := e.ok("bulk", "requeue", "--queue", "default", "--yes"); out != "requeued 1 of 1 tasks selected, 0 skipped\n" {
			t.Errorf("dtq bulk requeue printed %q", out)
		}
		e.waitStatus(dead, dtq.StatusDead)
		done := e.submit("echo")
		e.waitStatus(done, dtq.StatusSucceeded)
		out := e.ok("bulk", "delete", done, dead)
		if out != "deleted 1 of 2 tasks selected, 1 skipped\n  skipped "+dead+": dead_letter\n" {
			t.Errorf("dtq bulk delete printed %q", out)
		}
		e.fails([]string{"get", done}, "404 not_found")
	})
}
