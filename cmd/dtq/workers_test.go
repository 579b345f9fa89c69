package main

import (
	"slices"
	"strings"
	"testing"
	"time"
)

func TestWorkers(t *testing.T) {
	forEachAPI(t, nil, func(t *testing.T, e *apiEnv) {
		// The worker's first heartbeat is written after Start returns.
		deadline := time.Now().Add(waitLimit)
		for {
			v := e.json("workers")
			if ws, _ := v["workers"].([]any); len(ws) == 1 {
				w, _ := ws[0].(map[string]any)
				if w["id"] != testWorkerID || w["concurrency"] != 10.0 {
					t.Errorf("dtq workers --json: %v", v)
				}
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("dtq workers --json: %v after %v, want the test worker", v, waitLimit)
			}
			time.Sleep(10 * time.Millisecond)
		}
		out := e.ok("workers")
		if h := strings.Fields(lines(out)[0]); !slices.Equal(h, []string{"ID", "HOST", "PID", "QUEUES", "BUSY", "STATE", "STARTED", "HEARTBEAT"}) {
			t.Fatalf("dtq workers header:\n%s", out)
		}
		if row := rowOf(t, out, testWorkerID); len(row) != 8 || row[3] != "default,other" || !strings.HasSuffix(row[4], "/10") || row[5] != "running" {
			t.Errorf("dtq workers row: %q", row)
		}
		e.fails([]string{"workers", "extra"}, `unknown command "extra"`)
	})
}

func TestWorkersNone(t *testing.T) {
	forEachAPI(t, &apiEnvOpts{noWorker: true}, func(t *testing.T, e *apiEnv) {
		if out := e.ok("workers"); out != "no live workers\n" {
			t.Errorf("dtq workers with none printed %q", out)
		}
		if v := e.json("workers"); v["workers"] == nil {
			t.Errorf("dtq workers --json with none: %v", v)
		}
	})
}

// dtq workers quiet and stop ask the worker; dtq workers shows its state.
func TestWorkersQuietAndStop(t *testing.T) {
	forEachAPI(t, nil, func(t *testing.T, e *apiEnv) {
		deadline := time.Now().Add(waitLimit)
		for !strings.Contains(e.ok("workers"), testWorkerID) {
			if time.Now().After(deadline) {
				t.Fatal("the test worker is not listed")
			}
			time.Sleep(10 * time.Millisecond)
		}
		if out := e.ok("workers", "quiet", testWorkerID); out != "worker "+testWorkerID+" asked to quiet (it hears it at once, or at its next heartbeat within 5 s)\n" {
			t.Errorf("dtq workers quiet printed %q", out)
		}
		for deadline := time.Now().Add(waitLimit); rowOf(t, e.ok("workers"), testWorkerID)[5] != "quiet"; time.Sleep(10 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("the worker is not quiet:\n%s", e.ok("workers"))
			}
		}
		if v := e.json("workers", "stop", testWorkerID); v["requested"] != "stop" {
			t.Errorf("dtq workers stop --json: %v", v)
		}
		for deadline := time.Now().Add(waitLimit); rowOf(t, e.ok("workers"), testWorkerID)[5] != "stopping"; time.Sleep(10 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("the worker is not stopping:\n%s", e.ok("workers"))
			}
		}
		e.fails([]string{"workers", "stop", "nobody"}, "404 not_found: no such worker")
		e.fails([]string{"workers", "quiet"}, "accepts 1 arg(s), received 0")
	})
}
