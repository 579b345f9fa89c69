package main

import (
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// dtq history reads the stored history: the tasks run on the queue are
// counted in its buckets (once the process added its counts, within
// seconds), as a table and as JSON; bad flags are the API's 400s.
func TestHistory(t *testing.T) {
	forEachAPI(t, nil, func(t *testing.T, e *apiEnv) {
		for range 2 {
			e.waitStatus(e.submit("echo", "--queue", "other"), "SUCCEEDED")
		}
		deadline := time.Now().Add(15 * time.Second)
		var succeeded float64
		for time.Now().Before(deadline) {
			succeeded = 0
			v := e.json("history", "--queue", "other", "--last", "10m")
			bs, _ := v["buckets"].([]any)
			for _, b := range bs {
				succeeded += b.(map[string]any)["succeeded"].(float64)
			}
			if succeeded == 2 {
				break
			}
			time.Sleep(200 * time.Millisecond)
		}
		if succeeded != 2 {
			t.Fatalf("dtq history --json: %v succeeded, want 2", succeeded)
		}
		out := e.ok("history", "--queue", "other", "--type", "echo", "--last", "10m")
		ls := lines(out)
		if h := strings.Fields(ls[0]); !slices.Equal(h[:4], []string{"AT", "SUBMITTED", "SUCCEEDED", "RETRIED"}) {
			t.Fatalf("dtq history header:\n%s", out)
		}
		var sum int
		for _, l := range ls[1:] {
			if f := strings.Fields(l); len(f) > 2 {
				n, _ := strconv.Atoi(f[2])
				sum += n
			}
		}
		if sum != 2 || len(ls) > 3 {
			t.Errorf("dtq history (buckets with counts only): %d succeeded:\n%s", sum, out)
		}
		if out := e.ok("history", "--queue", "other", "--type", "nothing", "--last", "10m"); !strings.HasPrefix(out, "nothing counted in these") {
			t.Errorf("dtq history of a type never run: %q", out)
		}
		if n := len(lines(e.ok("history", "--queue", "other", "--last", "10m", "--all"))); n < 11 {
			t.Errorf("dtq history --all: %d lines, want a row per bucket", n)
		}
		e.fails([]string{"history", "--step", "day"}, "400 invalid_field: step")
		e.fails([]string{"history", "--last", "48h", "--step", "minute"}, "400 invalid_field: since")
		e.fails([]string{"history", "--queue", "nope"}, "404")
	})
}
