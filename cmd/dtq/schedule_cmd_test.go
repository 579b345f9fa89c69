package main

import (
	"slices"
	"strings"
	"testing"
	"time"
)

func TestScheduleCommands(t *testing.T) {
	forEachAPI(t, nil, func(t *testing.T, e *apiEnv) {
		if out := e.ok("schedule", "list"); out != "no schedules\n" {
			t.Errorf("dtq schedule list with none printed %q", out)
		}
		out := e.ok("schedule", "add", "nightly", "--cron", "30 2 * * *", "--tz", "Europe/Berlin", "--type", "echo",
			"--payload", `{"k":1}`, "--queue", "other", "--missed", "catch_up", "--catch-up-max", "3",
			"--task-timeout", "90s", "--timeout", "5s") // the task's execution timeout; the API call's
		if !strings.HasPrefix(out, "schedule other/nightly (30 2 * * *, Europe/Berlin): next run ") {
			t.Errorf("dtq schedule add printed %q", out)
		}
		e.ok("schedule", "add", "beat", "--cron", "@every 1s", "--type", "echo")
		out = e.ok("schedule", "list")
		if h := strings.Fields(lines(out)[0]); !slices.Equal(h, []string{"QUEUE", "NAME", "CRON", "TIME", "ZONE", "TASK", "TYPE", "STATE", "NEXT", "RUN", "LAST", "TASK"}) {
			t.Fatalf("dtq schedule list header:\n%s", out)
		}
		v := e.json("schedule", "list", "--queue", "other")
		ss, _ := v["schedules"].([]any)
		if len(ss) != 1 || ss[0].(map[string]any)["name"] != "nightly" || ss[0].(map[string]any)["catch_up_max"] != 3.0 ||
			ss[0].(map[string]any)["timeout_seconds"] != 90.0 {
			t.Errorf("dtq schedule list --queue other --json: %v", v)
		}
		// the worker runs default's ticks: the list shows the last task
		deadline := time.Now().Add(10 * time.Second)
		for {
			s := e.json("schedule", "list", "--queue", "default")["schedules"].([]any)[0].(map[string]any)
			if id, _ := s["last_task_id"].(string); id != "" {
				if got := e.json("get", id); got["schedule"] != "beat" {
					t.Errorf("the tick's task: %v", got)
				}
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("no tick of beat fired: %v", s)
			}
			time.Sleep(100 * time.Millisecond)
		}
		if out := e.ok("schedule", "pause", "beat"); out != "schedule default/beat (@every 1s, UTC): paused\n" {
			t.Errorf("dtq schedule pause printed %q", out)
		}
		if out := e.ok("schedule", "resume", "beat"); !strings.Contains(out, "next run") {
			t.Errorf("dtq schedule resume printed %q", out)
		}
		if out := e.ok("schedule", "rm", "beat"); out != "schedule beat deleted\n" {
			t.Errorf("dtq schedule rm printed %q", out)
		}
		e.fails([]string{"schedule", "rm", "beat"}, "404 not_found: no such schedule")
		e.fails([]string{"schedule", "add", "x", "--cron", "61 * * * *", "--type", "echo"}, "400 invalid_field: cron")
		e.fails([]string{"schedule", "add", "x", "--type", "echo"}, `required flag(s) "cron" not set`)
		e.fails([]string{"schedule", "add", "x", "--cron", "@hourly", "--type", "echo", "--payload", "{"}, "--payload is not valid JSON")
		e.fails([]string{"schedule", "add", "x", "--cron", "@hourly", "--type", "echo", "--missed", "all"}, "400 invalid_field: missed")
		e.fails([]string{"schedule", "add", "x", "--cron", "@hourly", "--type", "echo", "--task-timeout", "0s"}, "--task-timeout must be positive")
		e.fails([]string{"schedule", "add", "x", "--cron", "@hourly", "--type", "echo", "--timeout", "0s"}, "--timeout must be positive")
		e.fails([]string{"schedule", "pause", "nope"}, "404 not_found")
		e.fails([]string{"schedule", "add", "bad name", "--cron", "@hourly", "--type", "echo"}, "400 invalid_field: name")
		e.fails([]string{"schedule", "rm", ""}, "the schedule name must not be empty")
		e.fails([]string{"schedule", "rm", ".."}, "400 invalid_field: name")
		e.fails([]string{"schedule", "pause", "x", "--queue", ".."}, "400 invalid_field: queue")
	})
}
