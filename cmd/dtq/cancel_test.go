package main

import (
	"strings"
	"testing"

	"github.com/dtq-dev/dtq"
)

func TestCancel(t *testing.T) {
	forEachAPI(t, nil, func(t *testing.T, e *apiEnv) {
		queued := e.submit("echo", "--queue", "parked")
		if out := e.ok("cancel", queued); out != "cancelled "+queued+" (status CANCELLED)\n" {
			t.Errorf("dtq cancel printed %q", out)
		}
		if task := e.waitStatus(queued, dtq.StatusCancelled); task.FinishedAt == nil {
			t.Errorf("cancelled task: %+v", task)
		}
		scheduled := e.submit("echo", "--delay", "1h")
		if v := e.json("cancel", scheduled); v["id"] != scheduled || v["status"] != "CANCELLED" {
			t.Errorf("dtq cancel --json: %v", v)
		}

		done := e.submit("echo")
		e.waitStatus(done, dtq.StatusSucceeded)
		e.fails([]string{"cancel", done}, "409 not_cancellable: the task has already finished")
		e.fails([]string{"cancel", "default-01ARZ3NDEKTSV4RRFFQ69G5FAV"}, "404 not_found: no such task")
		e.fails([]string{"cancel"}, "accepts 1 arg(s), received 0")
		out := e.ok("get", done)
		if !strings.Contains(out, "SUCCEEDED") {
			t.Errorf("a refused cancel changed the task:\n%s", out)
		}
	})
}

// TestCancelRunning: a running task's cancel is either done at once or
// requested (the handler is told and the task ends CANCELLED).
func TestCancelRunning(t *testing.T) {
	forEachAPI(t, nil, func(t *testing.T, e *apiEnv) {
		id := e.submit("block")
		e.waitStatus(id, dtq.StatusRunning)
		out := e.ok("cancel", id)
		requested := out == "cancel requested for "+id+": it is RUNNING and ends CANCELLED when its handler returns\n"
		if !requested && out != "cancelled "+id+" (status CANCELLED)\n" {
			t.Errorf("dtq cancel of a running task printed %q", out)
		}
		e.waitStatus(id, dtq.StatusCancelled)
		out = e.ok("get", id)
		if !strings.Contains(out, "CANCELLED") || strings.Contains(out, "cancel:") {
			t.Errorf("dtq get of the cancelled task:\n%s", out)
		}
		// A cancel done at once may catch the task claimed by its worker but
		// not yet started (attempt 0, no execution); any run it ended is a
		// cancelled row.
		if requested || !strings.Contains(out, "attempt:     0/") {
			if row := rowOf(t, out, " cancelled "); row[1] != "cancelled" {
				t.Errorf("history row: %q", row)
			}
		} else if strings.Contains(out, "history:") {
			t.Errorf("a task cancelled before it started has a history:\n%s", out)
		}
	})
}
