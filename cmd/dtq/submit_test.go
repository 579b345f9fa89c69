package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dtq-dev/dtq"
)

func TestSubmit(t *testing.T) {
	forEachAPI(t, nil, func(t *testing.T, e *apiEnv) {
		// Human output: the id and status.
		out := e.ok("submit", "echo", "--payload", `{"n": 1}`, "--queue", "parked", "--priority", "7")
		first := lines(out)[0]
		id, ok := strings.CutPrefix(first, "submitted ")
		if !ok || !strings.HasPrefix(id, "parked-") {
			t.Fatalf("dtq submit printed %q, want a first line \"submitted <id>\"", out)
		}
		for _, want := range []string{"queue:", "parked", "type:", "echo", "status:", "QUEUED", "priority:", "7"} {
			if !strings.Contains(out, want) {
				t.Errorf("dtq submit output lacks %q:\n%s", want, out)
			}
		}
		task, err := e.c.Get(t.Context(), id)
		if err != nil {
			t.Fatal(err)
		}
		if task.Type != "echo" || task.Priority != 7 || string(task.Payload) != `{"n":1}` {
			t.Errorf("submitted task: %+v", task)
		}

		// --json: the task; durations go as seconds.
		before := time.Now()
		v := e.json("submit", "echo", "--queue", "parked", "--delay", "1h30m", "--task-timeout", "1m30s", "--max-attempts", "4")
		if v["status"] != "SCHEDULED" || v["timeout_seconds"] != 90.0 || v["max_attempts"] != 4.0 || v["priority"] != 5.0 || v["payload"] != nil {
			t.Errorf("dtq submit --json: %v", v)
		}
		at, err := time.Parse(time.RFC3339Nano, v["scheduled_at"].(string))
		if err != nil || at.Before(before.Add(89*time.Minute)) || at.After(time.Now().Add(91*time.Minute)) {
			t.Errorf("scheduled_at %v (%v), want about 1h30m from now", v["scheduled_at"], err)
		}
		out = e.ok("submit", "echo", "--queue", "parked", "--delay", "10m")
		if !strings.Contains(out, "SCHEDULED") || !strings.Contains(out, "scheduled at:") {
			t.Errorf("dtq submit --delay printed:\n%s", out)
		}

		// A task on a served queue runs with its payload.
		id = e.submit("echo", "--payload", `"hello"`)
		if done := e.waitStatus(id, dtq.StatusSucceeded); string(done.Result) != `"hello"` {
			t.Errorf("result %s, want \"hello\"", done.Result)
		}

		// The server's validation, as one line.
		e.fails([]string{"submit", "echo", "--priority", "10"}, "400 invalid_field: priority must be an integer from 0 to 9")
		e.fails([]string{"submit", "echo", "--queue", "no spaces"}, "400 invalid_field: queue")
		e.fails([]string{"submit", "echo", "--max-attempts", "0"}, "400 invalid_field: max_attempts")
	})
}

func TestSubmitPayloadSources(t *testing.T) {
	forEachAPI(t, &apiEnvOpts{noWorker: true}, func(t *testing.T, e *apiEnv) {
		file := filepath.Join(t.TempDir(), "payload.json")
		if err := os.WriteFile(file, []byte("{\n  \"from\": \"file\"\n}\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		v := e.json("submit", "echo", "--payload-file", file)
		if p, _ := v["payload"].(map[string]any); p["from"] != "file" {
			t.Errorf("--payload-file: payload %v", v["payload"])
		}
		e.fails([]string{"submit", "echo", "--payload-file", filepath.Join(t.TempDir(), "missing.json")}, "--payload-file", "no such file")

		// Standard input, by "-" and by --payload-file -.
		for _, args := range [][]string{{"submit", "echo", "-"}, {"submit", "echo", "--payload-file", "-"}} {
			out, err := executeIn(t, `{"from":"stdin"}`, append(args, "--api-url", e.url, "--json")...)
			if err != nil {
				t.Fatalf("dtq %s: %v", strings.Join(args, " "), err)
			}
			if p, _ := decodeOne(t, out)["payload"].(map[string]any); p["from"] != "stdin" {
				t.Errorf("dtq %s: output %s", strings.Join(args, " "), out)
			}
		}
		if _, err := executeIn(t, `{}`, "submit", "echo", "-", "--payload", "1", "--api-url", e.url); err == nil || !strings.Contains(err.Error(), "give the payload once") {
			t.Errorf("- with --payload: error %v", err)
		}
	})
}

// TestSubmitChecksLocally: what is cheap to check fails before any request
// (the API URL is unreachable, so a request would fail differently).
func TestSubmitChecksLocally(t *testing.T) {
	t.Parallel()
	e := &apiEnv{t: t, url: closedURL(t)}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--payload", `{"a":`}, "the payload is not valid JSON"},
		{[]string{"--payload", `{a:1}`}, "the payload is not valid JSON"},
		{[]string{"--payload", `{} {}`}, "the payload is not valid JSON: unexpected data after the first value"},
		{[]string{"--payload", ""}, "the payload is empty"},
		{[]string{"--payload", "\"\xff\""}, "not valid UTF-8"},
		{[]string{"--delay", "-1s"}, "--delay must not be negative"},
		{[]string{"--task-timeout", "0s"}, "--task-timeout must be positive"},
		{[]string{"--delay", "soon"}, `invalid argument "soon" for "--delay"`},
		{[]string{"--payload", "1", "--payload-file", "x"}, "[payload payload-file] were all set"},
		{[]string{"extra"}, `unexpected argument "extra"`},
		{[]string{"--debounce-key", "k"}, "needs --debounce-key and --debounce-period"},
		{[]string{"--debounce-period", "2s", "--debounce-keep-first"}, "needs --debounce-key and --debounce-period"},
	} {
		e.fails(append([]string{"submit", "echo"}, tc.args...), tc.want)
	}
	e.fails([]string{"submit"}, "accepts between 1 and 2 arg(s), received 0")
	e.fails([]string{"submit", ""}, "the task type must not be empty")
}

// TestSubmitIdempotencyKey: a replay after the task finished prints the
// original task; one while it is still queued is a 409 naming it.
func TestSubmitIdempotencyKey(t *testing.T) {
	forEachAPI(t, nil, func(t *testing.T, e *apiEnv) {
		id := e.submit("echo", "--idempotency-key", "k1", "--payload", "1")
		e.waitStatus(id, dtq.StatusSucceeded)
		out := e.ok("submit", "echo", "--idempotency-key", "k1", "--payload", "1")
		if !strings.HasPrefix(out, "already submitted (same Idempotency-Key) "+id+"\n") || !strings.Contains(out, "SUCCEEDED") {
			t.Errorf("replay printed:\n%s", out)
		}
		if v := e.json("submit", "echo", "--idempotency-key", "k1", "--payload", "1"); v["id"] != id {
			t.Errorf("replay --json: %v, want task %s", v, id)
		}
		e.fails([]string{"submit", "echo", "--idempotency-key", "k1", "--payload", "2"}, "422 idempotency_key_reused", id)

		parked := e.submit("echo", "--queue", "parked", "--idempotency-key", "k2")
		e.fails([]string{"submit", "echo", "--queue", "parked", "--idempotency-key", "k2"}, "409 in_progress", "(task "+parked+")")
	})
}

// executeIn runs dtq with args and stdin as its standard input.
func executeIn(t *testing.T, stdin string, args ...string) (string, error) {
	t.Helper()
	var out, errOut bytes.Buffer
	root := newRootCmd(&out, &errOut)
	root.SetIn(strings.NewReader(stdin))
	root.SetArgs(args)
	ctx, cancel := context.WithTimeout(t.Context(), runTimeout)
	defer cancel()
	err := root.ExecuteContext(ctx)
	if ctx.Err() != nil {
		t.Fatalf("dtq %s: still running after %v", strings.Join(args, " "), runTimeout)
	}
	return out.String(), err
}

// TestSubmitQueueFull: a 429 says when to try again.
func TestSubmitQueueFull(t *testing.T) {
	forEachAPI(t, &apiEnvOpts{engine: dtq.Config{QueueMaxDepth: map[string]int64{"parked": 1}}, noWorker: true}, func(t *testing.T, e *apiEnv) {
		e.submit("echo", "--queue", "parked")
		msg := e.fails([]string{"submit", "echo", "--queue", "parked"}, "429 queue_full: ", `queue "parked" is full`, "retry after ")
		if strings.Count(msg, "retry after") != 1 {
			t.Errorf("error %q, want one \"retry after\"", msg)
		}
	})
}

func TestSubmitUnique(t *testing.T) {
	forEachAPI(t, &apiEnvOpts{noWorker: true}, func(t *testing.T, e *apiEnv) {
		out := e.ok("submit", "echo", "--payload", `{"a":1}`, "--unique")
		if !strings.HasPrefix(out, "submitted ") {
			t.Fatalf("first unique submit printed %q", out)
		}
		id := strings.Fields(lines(out)[0])[1]
		out = e.ok("submit", "echo", "--payload", `{"a":1}`, "--unique")
		if !strings.HasPrefix(out, "not submitted: a unique task holds the lock: "+id) {
			t.Errorf("second unique submit printed %q", out)
		}
		if v := e.json("submit", "echo", "--payload", `{"a":2}`, "--unique-key", "k", "--unique-period", "1h"); v["duplicate"] != nil {
			t.Errorf("a new unique key: %v", v)
		}
		if v := e.json("submit", "echo", "--payload", `{"a":3}`, "--unique-key", "k", "--unique-period", "1h"); v["duplicate"] != true {
			t.Errorf("the same key in the period: %v", v)
		}
		e.fails([]string{"submit", "echo", "--unique-period", "10ms"}, "400 invalid_field: unique.period_seconds")
		e.fails([]string{"submit", "echo", "--unique", "--idempotency-key", "x"}, "400 invalid_field: unique")
	})
}

// A debounced submission prints "submitted" when it created the task and
// "joined" when it joined the pending one; the flags come together.
func TestSubmitDebounce(t *testing.T) {
	forEachAPI(t, &apiEnvOpts{noWorker: true}, func(t *testing.T, e *apiEnv) {
		deb := []string{"--debounce-key", "doc-7", "--debounce-period", "1h", "--debounce-max-wait", "2h"}
		out := e.ok(append([]string{"submit", "echo", "--payload", "1"}, deb...)...)
		if !strings.HasPrefix(out, "submitted ") || !strings.Contains(out, "SCHEDULED") {
			t.Fatalf("first debounced submit printed %q", out)
		}
		id := strings.Fields(lines(out)[0])[1]
		out = e.ok(append([]string{"submit", "echo", "--payload", "2"}, deb...)...)
		if !strings.HasPrefix(out, "joined the pending debounced task "+id) {
			t.Errorf("second debounced submit printed %q", out)
		}
		v := e.json(append([]string{"submit", "echo", "--payload", "3", "--debounce-keep-first"}, deb...)...)
		if v["debounced"] != true || v["id"] != id || v["payload"] != 2.0 {
			t.Errorf("--debounce-keep-first: %v, want %s with payload 2", v, id)
		}
		if v := e.json("submit", "echo", "--payload", "4", "--debounce-key", "doc-8", "--debounce-period", "1h"); v["debounced"] != nil || v["id"] == id {
			t.Errorf("another key: %v", v)
		}
		e.fails([]string{"submit", "echo", "--debounce-key", "k", "--debounce-period", "2s", "--debounce-max-wait", "1s"}, "400 invalid_field: debounce.max_wait_seconds")
		e.fails([]string{"submit", "echo", "--debounce-key", "k", "--debounce-period", "2s", "--idempotency-key", "x"}, "400 invalid_field: debounce")
		e.fails([]string{"submit", "echo", "--debounce-key", "k", "--debounce-period", "0s"}, "400 invalid_field: debounce.period_seconds")
	})
}

// --unique-period alone buckets the lock by period but keeps the default
// states: the lock ends as the task succeeds, and a later submission in the
// same period is a new task. --unique-states with the end states keeps it
// for the period (issue 30: the help promised one task per period, and the
// CLI could not name the states).
func TestSubmitUniqueStates(t *testing.T) {
	forEachAPI(t, nil, func(t *testing.T, e *apiEnv) {
		// A period of a year: the test never straddles two.
		const period = "8760h"
		first := e.submit("echo", "--unique-key", "default-states", "--unique-period", period)
		e.waitStatus(first, dtq.StatusSucceeded)
		if out := e.ok("submit", "echo", "--unique-key", "default-states", "--unique-period", period); !strings.HasPrefix(out, "submitted ") {
			t.Errorf("after the holder succeeded, with the default states: %q, want a new task", out)
		}

		all := []string{"--unique-key", "all-states", "--unique-period", period,
			"--unique-states", "QUEUED,SCHEDULED,RUNNING,succeeded,DEAD", "--unique-states", "CANCELLED"}
		first = e.submit("echo", all...)
		e.waitStatus(first, dtq.StatusSucceeded)
		if out := e.ok(append([]string{"submit", "echo"}, all...)...); !strings.HasPrefix(out, "not submitted: a unique task holds the lock: "+first) {
			t.Errorf("after the holder succeeded, with the end states: %q, want %s", out, first)
		}
		// --unique-states alone makes the task unique (by its payload).
		id := e.submit("block", "--payload", `{"s":1}`, "--unique-states", "QUEUED,RUNNING,SCHEDULED")
		if v := e.json("submit", "block", "--payload", `{"s":1}`, "--unique-states", "RUNNING,QUEUED,SCHEDULED"); v["duplicate"] != true || v["id"] != id {
			t.Errorf("--unique-states alone: %v, want a duplicate of %s", v, id)
		}
		e.fails([]string{"submit", "echo", "--unique-states", "DONE"}, "400 invalid_field: unique.states", `"DONE"`)
	})
}

// The help of submit says what the period and the states do.
func TestSubmitUniqueHelp(t *testing.T) {
	t.Parallel()
	out, _, err := execute(t, "submit", "--help")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"--unique-states", "default QUEUED,SCHEDULED,RUNNING", "the lock still ends when its task leaves --unique-states",
		"QUEUED,SCHEDULED,RUNNING,SUCCEEDED,DEAD,CANCELLED", "--retention"} {
		if !strings.Contains(out, want) {
			t.Errorf("dtq submit --help lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "one unique task per period") {
		t.Errorf("dtq submit --help still promises one task per period:\n%s", out)
	}
}
