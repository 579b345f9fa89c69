package main

import (
	"encoding/json"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/dtq-dev/dtq"
)

func TestGet(t *testing.T) {
	forEachAPI(t, nil, func(t *testing.T, e *apiEnv) {
		id := e.submit("echo", "--payload", `{"n":1}`, "--priority", "8", "--task-timeout", "90s")
		e.waitStatus(id, dtq.StatusSucceeded)
		out := e.ok("get", id)
		for _, want := range []string{"id:", id, "queue:", "default", "type:", "echo", "status:", "SUCCEEDED",
			"priority:", "8", "attempt:", "1/", "timeout:", "1m30s", "created:", "finished:", "worker:", testWorkerID,
			`payload:`, `{"n":1}`, "result:", "history:", "RUN", "OUTCOME", " succeeded "} {
			if !strings.Contains(out, want) {
				t.Errorf("dtq get output lacks %q:\n%s", want, out)
			}
		}
		if strings.Contains(out, "last error:") {
			t.Errorf("dtq get shows an empty last error:\n%s", out)
		}
		v := e.json("get", id)
		if v["id"] != id || v["status"] != "SUCCEEDED" || v["priority"] != 8.0 {
			t.Errorf("dtq get --json: %v", v)
		}
		if h, _ := v["history"].([]any); len(h) != 1 {
			t.Errorf("dtq get --json history: %v", v["history"])
		}
		// Times: --json has the API's, in UTC to the millisecond, fixed
		// width; the table, in UTC to the second.
		h0, _ := v["history"].([]any)[0].(map[string]any)
		for _, at := range []any{v["created_at"], v["started_at"], v["finished_at"], h0["started_at"], h0["finished_at"]} {
			if s, _ := at.(string); !msTimeRE.MatchString(s) {
				t.Errorf("dtq get --json: time %v is not RFC 3339 in UTC with milliseconds", at)
			}
		}
		if row := rowOf(t, out, "created:"); len(row) != 2 || !secTimeRE.MatchString(row[1]) {
			t.Errorf("dtq get: created %q, want a time in UTC to the second", row)
		}

		dead := e.deadTask("default")
		out = e.ok("get", dead)
		if !strings.Contains(out, "DEAD") || !strings.Contains(out, "last error:") || !strings.Contains(out, "boom") {
			t.Errorf("dtq get of a dead task:\n%s", out)
		}

		e.fails([]string{"get", "default-01ARZ3NDEKTSV4RRFFQ69G5FAV"}, "404 not_found: no such task")
		e.fails([]string{"get", "nonsense"}, "404 not_found")
		// Escaped: still the task route.
		for _, id := range []string{"a/b?c#d", "..", ".", "%2F"} {
			e.fails([]string{"get", id}, "404 not_found: no such task")
		}
		e.fails([]string{"get"}, "accepts 1 arg(s), received 0")
		e.fails([]string{"get", "a", "b"}, "accepts 1 arg(s), received 2")
		e.fails([]string{"get", ""}, "the task id must not be empty")
	})
}

// TestGetShowsProgress: a running task's progress report, and its
// workflow, are lines of dtq get.
func TestGetShowsProgress(t *testing.T) {
	forEachAPI(t, nil, func(t *testing.T, e *apiEnv) {
		ctx := t.Context()
		w, err := e.c.EnqueueWorkflow(ctx, dtq.Call("transcode", nil, nil), &dtq.WorkflowOpts{Queue: "remote"})
		if err != nil {
			t.Fatal(err)
		}
		ls, err := e.leaseServer().Lease(ctx, dtq.LeaseRequest{Worker: "py-1", Queues: []string{"remote"}})
		if err != nil || len(ls) != 1 {
			t.Fatalf("lease: %d %v", len(ls), err)
		}
		if err := e.leaseServer().LeaseProgress(ctx, ls[0].Token, 0.25, "pass 1 of 4"); err != nil {
			t.Fatal(err)
		}
		out := e.ok("get", ls[0].Task.ID)
		for _, want := range []string{"progress:  25% pass 1 of 4\n", "workflow:  " + w.ID + "\n"} {
			if !strings.Contains(out, want) {
				t.Errorf("dtq get: want %q in\n%s", want, out)
			}
		}
	})
}

// TestGetShowsSteps: a task's durable steps are a table of dtq get, after
// its fields.
func TestGetShowsSteps(t *testing.T) {
	forEachAPI(t, nil, func(t *testing.T, e *apiEnv) {
		ctx := t.Context()
		id := e.submit("order", "--queue", "remote")
		ls, err := e.leaseServer().Lease(ctx, dtq.LeaseRequest{Worker: "py-1", Queues: []string{"remote"}})
		if err != nil || len(ls) != 1 || ls[0].Task.ID != id {
			t.Fatalf("lease: %d %v", len(ls), err)
		}
		if _, _, err := e.leaseServer().RecordLeaseStep(ctx, ls[0].Token, "charge", json.RawMessage(`{"id":"ch_42"}`)); err != nil {
			t.Fatal(err)
		}
		out := e.ok("get", id)
		_, steps, ok := strings.Cut(out, "\nsteps:\n")
		if !ok {
			t.Fatalf("dtq get: no steps table in\n%s", out)
		}
		if row := rowOf(t, steps, "charge"); len(row) < 4 || row[1] != "1" || row[len(row)-1] != `{"id":"ch_42"}` {
			t.Errorf("dtq get: the step's row %q in\n%s", row, out)
		}
	})
}

// The forms of times: the API's (--json), and the tables'.
var (
	msTimeRE  = regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$`)
	secTimeRE = regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$`)
)

// TestGetShowsSuspension: a suspended task's line says what it waits for
// and until when; a wait's record made by a signal shows "signal" for its
// run.
func TestGetShowsSuspension(t *testing.T) {
	forEachAPI(t, nil, func(t *testing.T, e *apiEnv) {
		nap := e.submit("nap")
		sleeping := e.waitStatus(nap, dtq.StatusScheduled)
		out := e.ok("get", nap)
		until := sleeping.Suspended.Until.UTC().Format(time.RFC3339)
		if row := rowOf(t, out, "suspended:"); !slices.Equal(row, []string{"suspended:", "sleep", "nap", "until", until}) {
			t.Errorf("dtq get: suspended %q, want sleep nap until %s, in\n%s", row, until, out)
		}
		if row := rowOf(t, out, "status:"); row[1] != "SCHEDULED" {
			t.Errorf("dtq get: status %q", row)
		}

		approve := e.submit("approve")
		e.waitStatus(approve, dtq.StatusScheduled)
		if row := rowOf(t, e.ok("get", approve), "suspended:"); len(row) != 5 || row[1] != "signal" || row[2] != "approval" {
			t.Errorf("dtq get of a waiting task: suspended %q", row)
		}
		e.ok("signal", approve, "approval", "--payload", `{"by":"ann"}`)
		e.waitStatus(approve, dtq.StatusSucceeded)
		out = e.ok("get", approve)
		if strings.Contains(out, "suspended:") {
			t.Errorf("dtq get of a task that ran on: a suspended line in\n%s", out)
		}
		_, steps, ok := strings.Cut(out, "\nsteps:\n")
		if !ok {
			t.Fatalf("dtq get: no steps table in\n%s", out)
		}
		if row := rowOf(t, steps, "approval"); len(row) < 4 || row[1] != "signal" || row[3] != `{"by":"ann"}` {
			t.Errorf("dtq get: the signal's step row %q in\n%s", row, out)
		}
	})
}
