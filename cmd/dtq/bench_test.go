package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/dtq-dev/dtq"
	"github.com/dtq-dev/dtq/internal/redisconn"
	"github.com/dtq-dev/dtq/internal/redistest"
)

// benchLine parses the one JSON line a bench command prints.
func benchLine(t *testing.T, out string) map[string]any {
	t.Helper()
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 1 {
		t.Fatalf("bench printed %d lines, want 1:\n%s", len(lines), out)
	}
	var r map[string]any
	if err := json.Unmarshal([]byte(lines[0]), &r); err != nil {
		t.Fatalf("bench line %q: %v", lines[0], err)
	}
	return r
}

// The direct measures really submit and run what they report, on a real
// redis-server.
func TestBenchDirect(t *testing.T) {
	t.Parallel()
	srv := redistest.Shared(t)
	ns := redistest.Namespace(t)
	c, err := dtq.NewClient(redisconn.Wrap(redistest.Client(t, srv)), &dtq.Config{Namespace: ns})
	if err != nil {
		t.Fatal(err)
	}
	common := []string{"--redis", "redis://" + srv.Addr, "--namespace", ns}

	out, _, err := execute(t, append([]string{"bench", "enqueue", "--n", "300", "--batch", "50", "--queue", "q1"}, common...)...)
	if err != nil {
		t.Fatal(err)
	}
	r := benchLine(t, out)
	if r["bench"] != "enqueue" || r["tasks"] != 300.0 || r["backend"] != "redis" || r["tasks_per_sec"].(float64) <= 0 {
		t.Fatalf("enqueue: %v", r)
	}
	if st, err := dtq.NewAdmin(c).Stats(t.Context(), "q1"); err != nil || st.Submitted != 300 {
		t.Fatalf("enqueue reported 300 tasks; queue has %+v (%v)", st, err)
	}

	out, _, err = execute(t, append([]string{"bench", "drain", "--n", "200", "--queue", "q2", "--concurrency", "8"}, common...)...)
	if err != nil {
		t.Fatal(err)
	}
	if r := benchLine(t, out); r["bench"] != "drain" || r["tasks"] != 200.0 {
		t.Fatalf("drain: %v", r)
	}
	if st, err := dtq.NewAdmin(c).Stats(t.Context(), "q2"); err != nil || st.Succeeded != 200 {
		t.Fatalf("drain reported 200 tasks; queue has %+v (%v)", st, err)
	}

	for _, extra := range [][]string{nil, {"--rate", "200"}} {
		args := append([]string{"bench", "latency", "--n", "30", "--queue", "q3"}, common...)
		out, _, err = execute(t, append(args, extra...)...)
		if err != nil {
			t.Fatal(err)
		}
		r = benchLine(t, out)
		if r["tasks"] != 30.0 || r["done_p50_ms"] == nil || r["start_p99_ms"] == nil {
			t.Fatalf("latency %v: %v", extra, r)
		}
		if r["done_p50_ms"].(float64) < r["start_p50_ms"].(float64) {
			t.Fatalf("latency %v: done before start: %v", extra, r)
		}
	}
}

// On a Redis of its own, enqueue and drain report what Redis spent per
// task: commands (an enqueue is at least one XADD per task) and CPU, and
// the memory queued tasks hold.
func TestBenchRedisCost(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t, nil)
	common := []string{"--redis", "redis://" + srv.Addr, "--n", "2000"}
	for _, args := range [][]string{{"bench", "enqueue", "--queue", "q1"}, {"bench", "drain", "--queue", "q2"}} {
		out, _, err := execute(t, append(args, common...)...)
		if err != nil {
			t.Fatal(err)
		}
		r := benchLine(t, out)
		cpu, _ := r["redis_cpu_us_per_task"].(float64)
		cmds, _ := r["redis_cmds_per_task"].(float64)
		if cpu <= 0 || cmds <= 0 {
			t.Errorf("%s: redis cpu %v µs, %v commands per task, want both measured: %v", args[1], cpu, cmds, r)
		}
		if _, ok := r["redis_memory_bytes_per_task"].(float64); !ok {
			t.Errorf("%s: no redis_memory_bytes_per_task: %v", args[1], r)
		}
		if mem, _ := r["redis_memory_bytes_per_task"].(float64); args[1] == "enqueue" && (mem < 80 || mem > 2000) {
			t.Errorf("enqueue: %v bytes per queued task with an 80-byte payload", mem)
		}
		if cmds < 1 && args[1] == "enqueue" {
			t.Errorf("enqueue: %v commands per task, want an XADD each", cmds)
		}
	}
	// The embedded backend cannot say what it spent, and does not pretend.
	out, _, err := execute(t, "bench", "enqueue", "--n", "100")
	if err != nil {
		t.Fatal(err)
	}
	if r := benchLine(t, out); r["redis_cpu_us_per_task"] != nil {
		t.Errorf("embedded backend reported Redis CPU: %v", r)
	}
}

// The HTTP measures against a live API server report what the server
// accepted.
func TestBenchHTTP(t *testing.T) {
	forEachAPI(t, nil, func(t *testing.T, e *apiEnv) {
		out, err := e.run("bench", "http", "--duration", "300ms", "--connections", "4", "--batch", "3", "--queue", "parked")
		if err != nil {
			t.Fatal(err)
		}
		r := benchLine(t, out)
		tasks := int64(r["tasks"].(float64))
		if tasks == 0 || r["statuses"].(map[string]any)["200"] == nil || len(r["statuses"].(map[string]any)) != 1 {
			t.Fatalf("http: %v", r)
		}
		st, err := dtq.NewAdmin(e.c).Stats(t.Context(), "parked")
		// The measure sends one warm-up request before it starts counting.
		if err != nil || st.Submitted != tasks+3 {
			t.Fatalf("http reported %d tasks (+3 warm-up); the queue has %+v (%v)", tasks, st, err)
		}

		out, err = e.run("bench", "drain", "--n", "150")
		if err != nil {
			t.Fatal(err)
		}
		if r := benchLine(t, out); r["tasks"] != 150.0 || r["backend"] != "http" {
			t.Fatalf("drain: %v", r)
		}
		if st, err := dtq.NewAdmin(e.c).Stats(t.Context(), "default"); err != nil || st.Succeeded < 150 {
			t.Fatalf("drain: %+v (%v)", st, err)
		}
	})
}

func TestBenchHTTPNeedsURL(t *testing.T) {
	t.Setenv("DTQ_API_URL", "")
	_, _, err := execute(t, "bench", "http")
	if err == nil || !strings.Contains(err.Error(), "--api-url") {
		t.Fatalf("bench http without a URL: %v", err)
	}
}
