package main

import (
	"slices"
	"strings"
	"testing"

	"github.com/dtq-dev/dtq"
)

func TestQueueCommands(t *testing.T) {
	forEachAPI(t, nil, func(t *testing.T, e *apiEnv) {
		// Before any submission: the queues its workers serve, and no other
		// (a worker reading a queue makes it, CONTRACT 4.3.0).
		out := e.ok("queue", "list")
		if n := len(lines(out)); n != 3 {
			t.Errorf("dtq queue list before any submission printed %d lines, want the header and the workers' two queues:\n%s", n, out)
		}
		for _, q := range []string{"default", "other"} {
			if row := rowOf(t, out, q); !slices.Equal(row, []string{q, "active", "0", "0", "0", "0", "0", "0"}) {
				t.Errorf("dtq queue list row of %s, served and empty: %q", q, row)
			}
		}
		for _, p := range []string{"1", "1", "8"} {
			e.submit("echo", "--queue", "parked", "--priority", p)
		}
		e.submit("echo", "--queue", "parked", "--delay", "1h")
		dead := e.deadTask("other")

		out = e.ok("queue", "list")
		if h := strings.Fields(lines(out)[0]); !slices.Equal(h, []string{"NAME", "STATE", "QUEUED", "SCHEDULED", "RUNNING", "DEAD", "SUBMITTED", "SUCCEEDED"}) {
			t.Fatalf("dtq queue list header:\n%s", out)
		}
		if row := rowOf(t, out, "parked"); !slices.Equal(row, []string{"parked", "active", "3", "1", "0", "0", "4", "0"}) {
			t.Errorf("dtq queue list row of parked: %q", row)
		}
		if row := rowOf(t, out, "other"); row[5] != "1" || row[6] != "1" {
			t.Errorf("dtq queue list row of other (one dead letter, %s): %q", dead, row)
		}
		v := e.json("queue", "list")
		if qs, _ := v["queues"].([]any); len(qs) != 3 {
			t.Errorf("dtq queue list --json: %v", v)
		}

		out = e.ok("queue", "stats", "parked")
		for _, want := range []string{"name:", "parked", "state:", "active", "queued:", "3", "by priority:", "p8=1 p1=2", "scheduled:", "1", "submitted:", "4"} {
			if !strings.Contains(out, want) {
				t.Errorf("dtq queue stats output lacks %q:\n%s", want, out)
			}
		}
		v = e.json("queue", "stats", "parked")
		if v["name"] != "parked" || v["queued"] != 3.0 || v["scheduled"] != 1.0 || v["paused"] != false {
			t.Errorf("dtq queue stats --json: %v", v)
		}

		if out := e.ok("queue", "pause", "parked"); out != "queue parked is paused (3 queued, 0 running)\n" {
			t.Errorf("dtq queue pause printed %q", out)
		}
		if row := rowOf(t, e.ok("queue", "list"), "parked"); row[1] != "paused" {
			t.Errorf("dtq queue list after pause: %q", row)
		}
		if v := e.json("queue", "stats", "parked"); v["paused"] != true {
			t.Errorf("dtq queue stats --json after pause: %v", v)
		}
		if v := e.json("queue", "resume", "parked"); v["paused"] != false || v["name"] != "parked" {
			t.Errorf("dtq queue resume --json: %v", v)
		}
		if out := e.ok("queue", "resume", "parked"); out != "queue parked is active (3 queued, 0 running)\n" {
			t.Errorf("dtq queue resume printed %q", out)
		}
		if v := e.json("queue", "pause", "parked"); v["paused"] != true {
			t.Errorf("dtq queue pause --json: %v", v)
		}

		for _, args := range [][]string{{"queue", "stats", "bad name"}, {"queue", "pause", "a{b}"}, {"queue", "resume", "bad name"}} {
			e.fails(args, "400 invalid_field: queue")
		}
		// Sent escaped, a name of dots reaches the queue route, whose rule
		// refuses it (unescaped, it would name another route).
		for _, name := range []string{".", ".."} {
			for _, verb := range []string{"stats", "pause", "resume"} {
				e.fails([]string{"queue", verb, name}, "400 invalid_field: queue \""+name+"\" is not a queue name")
			}
		}
		msg := e.fails([]string{"queue", "rm", "parked"}, "409 queue_not_empty",
			`queue "parked" holds 3 queued, 1 scheduled, 0 running and 0 dead tasks: nothing was deleted; dtq queue rm --force deletes them too`)
		if strings.Contains(msg, "?force=true") {
			t.Errorf("dtq queue rm tells a CLI user to add ?force=true: %q", msg)
		}
		if out := e.ok("queue", "rm", "parked", "--force"); out != "deleted queue parked (it held 3 queued, 1 scheduled, 0 running, 0 dead)\n" {
			t.Errorf("dtq queue rm --force printed %q", out)
		}
		// Deleted, the queue is gone: an admin action on it is 404 and
		// makes no queue.
		e.fails([]string{"queue", "stats", "parked"}, `404 not_found: no such queue "parked"`)
		if row := rowOf(t, e.ok("queue", "list"), "other"); row[0] != "other" {
			t.Errorf("dtq queue list after rm: %q", row)
		}
		e.fails([]string{"queue", "rm", "never-used"}, `404 not_found: no such queue "never-used"`)
		// A misspelt queue is no new queue (issue 30: pause made one).
		for _, verb := range []string{"pause", "resume", "stats"} {
			e.fails([]string{"queue", verb, "no-such-queue"}, `404 not_found: no such queue "no-such-queue"`)
		}
		if out := e.ok("queue", "list"); strings.Contains(out, "no-such-queue") || strings.Contains(out, "never-used") {
			t.Errorf("dtq queue list after actions on queues that do not exist:\n%s", out)
		}
		e.fails([]string{"queue", "rm", "bad name"}, "400 invalid_field: queue")
		e.fails([]string{"queue", "stats"}, "accepts 1 arg(s), received 0")
		e.fails([]string{"queue", "pause", "a", "b"}, "accepts 1 arg(s), received 2")
		e.fails([]string{"queue", "stats", ""}, "the queue name must not be empty")
		e.fails([]string{"queue", "list", "extra"}, `unknown command "extra"`)
		if out := e.ok("queue"); !strings.Contains(out, "pause") || !strings.Contains(out, "stats") {
			t.Errorf("dtq queue without a subcommand printed:\n%s", out)
		}
	})
}

// TestQueueStatsCountsSuspended: dtq queue stats shows the suspended
// tasks, part of the scheduled ones.
func TestQueueStatsCountsSuspended(t *testing.T) {
	forEachAPI(t, nil, func(t *testing.T, e *apiEnv) {
		nap := e.submit("nap")
		e.submit("echo", "--delay", "1h")
		e.waitStatus(nap, dtq.StatusScheduled)
		out := e.ok("queue", "stats", "default")
		for label, want := range map[string]string{"scheduled:": "2", "suspended:": "1"} {
			if row := rowOf(t, out, label); len(row) != 2 || row[1] != want {
				t.Errorf("dtq queue stats: %q, want %s %s, in\n%s", row, label, want, out)
			}
		}
		if v := e.json("queue", "stats", "default"); v["suspended"] != 1.0 || v["scheduled"] != 2.0 {
			t.Errorf("dtq queue stats --json: %v", v)
		}
	})
}
