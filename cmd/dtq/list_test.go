package main

import (
	"slices"
	"strings"
	"testing"

	"github.com/dtq-dev/dtq"
)

func TestList(t *testing.T) {
	forEachAPI(t, nil, func(t *testing.T, e *apiEnv) {
		if out := e.ok("list", "--queue", "parked"); out != "no tasks\n" {
			t.Errorf("dtq list of an empty queue printed %q", out)
		}
		var ids []string
		for range 3 {
			ids = append(ids, e.submit("echo", "--queue", "parked", "--priority", "3", "--max-attempts", "3"))
		}
		other := e.submit("fail", "--queue", "parked")

		out := e.ok("list", "--queue", "parked", "--type", "echo", "--limit", "2")
		ls := lines(out)
		if h := strings.Fields(ls[0]); !slices.Equal(h, []string{"ID", "TYPE", "STATUS", "PRIO", "ATTEMPT", "CREATED"}) {
			t.Fatalf("dtq list header %q:\n%s", ls[0], out)
		}
		// In run order: the first two submitted, then the cursor.
		for _, id := range ids[:2] {
			if row := rowOf(t, out, id); row[1] != "echo" || row[2] != "QUEUED" || row[3] != "3" || row[4] != "0/3" {
				t.Errorf("dtq list row of %s: %q", id, row)
			}
		}
		if strings.Contains(out, ids[2]) || strings.Contains(out, other) {
			t.Errorf("dtq list --type echo --limit 2 shows too much:\n%s", out)
		}
		last := ls[len(ls)-1]
		cursor, ok := strings.CutPrefix(last, "next page: --cursor ")
		if !ok || len(ls) != 4 {
			t.Fatalf("dtq list --limit 2: want a header, 2 rows and a cursor line:\n%s", out)
		}
		out = e.ok("list", "--queue", "parked", "--type", "echo", "--limit", "2", "--cursor", cursor)
		rowOf(t, out, ids[2])
		if strings.Contains(out, "next page") || len(lines(out)) != 2 {
			t.Errorf("dtq list second page:\n%s", out)
		}

		// --json: the page; --status in any case.
		v := e.json("list", "--queue", "parked", "--status", "queued")
		if tasks, _ := v["tasks"].([]any); len(tasks) != 4 {
			t.Errorf("dtq list --json: %v", v)
		}
		if _, ok := v["next_cursor"]; !ok {
			t.Errorf("dtq list --json has no next_cursor: %v", v)
		}
		if out := e.ok("list", "--queue", "parked", "--status", "SUCCEEDED"); out != "no tasks\n" {
			t.Errorf("dtq list --status SUCCEEDED printed %q", out)
		}

		e.fails([]string{"list", "--status", "done"}, "400 invalid_field: status must be one of")
		e.fails([]string{"list", "--limit", "0"}, "400 invalid_field: limit")
		e.fails([]string{"list", "--cursor", "x"}, "400 invalid_field: cursor")
		e.fails([]string{"list", "extra"}, `unknown command "extra"`)
	})
}

// TestListSearch: --id-prefix, --error and the creation range reach the
// API's search.
func TestListSearch(t *testing.T) {
	forEachAPI(t, nil, func(t *testing.T, e *apiEnv) {
		ctx := t.Context()
		a, err := e.c.Enqueue(ctx, "idle", nil, &dtq.EnqueueOpts{Queue: "find"})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := e.c.Enqueue(ctx, "idle", nil, &dtq.EnqueueOpts{Queue: "find"}); err != nil {
			t.Fatal(err)
		}
		out := e.ok("list", "--queue", "find", "--id-prefix", a.Task.ID)
		if !strings.Contains(out, a.Task.ID) || strings.Count(out, "find-") != 1 {
			t.Fatalf("by id prefix:\n%s", out)
		}
		out = e.ok("list", "--queue", "find", "--created-before", "2020-01-01T00:00:00Z", "--error", "x")
		if strings.Contains(out, "find-") {
			t.Fatalf("created before 2020:\n%s", out)
		}
		e.fails([]string{"list", "--queue", "find", "--created-after", "yesterday"}, "created_after")
	})
}

// The help of list says the order the API lists tasks in (not "newest
// first"), and each of its examples runs: the --cursor one with a cursor a
// page printed (issue 30: its made-up cursor answered 400).
func TestListHelp(t *testing.T) {
	cmd := newListCmd(nil)
	if strings.Contains(cmd.Short, "newest first") || !strings.Contains(cmd.Short, "in the order they run") ||
		!strings.Contains(cmd.Long, "running and\nqueued tasks in the order they run") {
		t.Errorf("dtq list help: %q\n%s", cmd.Short, cmd.Long)
	}
	forEachAPI(t, &apiEnvOpts{noWorker: true}, func(t *testing.T, e *apiEnv) {
		for range 21 {
			e.submit("email.send", "--queue", "emails")
		}
		next, ok := strings.CutPrefix(lastLine(e.ok("list", "--queue", "emails", "--type", "email.send", "--limit", "20")), "next page: --cursor ")
		if !ok {
			t.Fatal("no next page")
		}
		examples := 0
		for _, line := range lines(cmd.Example) {
			args := strings.Fields(line)
			if len(args) < 2 || args[0] != "dtq" {
				t.Fatalf("example %q", line)
			}
			for i, a := range args {
				if a == "CURSOR" {
					args[i] = next
				}
			}
			examples++
			e.ok(args[1:]...)
		}
		if examples < 3 {
			t.Errorf("%d examples", examples)
		}
	})
}

// lastLine is the last line of out.
func lastLine(out string) string {
	ls := lines(out)
	return ls[len(ls)-1]
}

// TestListSuspended: --suspended lists only the tasks in a durable sleep
// or a wait for a signal (not one merely delayed), with what they wait
// for in --json.
func TestListSuspended(t *testing.T) {
	forEachAPI(t, nil, func(t *testing.T, e *apiEnv) {
		nap := e.submit("nap")
		approve := e.submit("approve")
		delayed := e.submit("echo", "--delay", "1h")
		e.waitStatus(nap, dtq.StatusScheduled)
		e.waitStatus(approve, dtq.StatusScheduled)

		out := e.ok("list", "--suspended")
		if len(lines(out)) != 3 || strings.Contains(out, delayed) {
			t.Fatalf("dtq list --suspended: want a header and 2 rows, not the delayed task %s:\n%s", delayed, out)
		}
		for _, id := range []string{nap, approve} {
			if row := rowOf(t, out, id); row[2] != "SCHEDULED" {
				t.Errorf("dtq list --suspended row of %s: %q", id, row)
			}
		}
		v := e.json("list", "--suspended", "--type", "approve")
		tasks, _ := v["tasks"].([]any)
		if len(tasks) != 1 {
			t.Fatalf("dtq list --suspended --type approve --json: %v", v)
		}
		if s, _ := tasks[0].(map[string]any)["suspended"].(map[string]any); s["for"] != "signal" || s["name"] != "approval" {
			t.Errorf("dtq list --suspended --json: suspended %v", tasks[0].(map[string]any)["suspended"])
		}
		if out := e.ok("list", "--suspended", "--status", "queued"); out != "no tasks\n" {
			t.Errorf("dtq list --suspended --status queued printed %q", out)
		}
		if out := e.ok("list"); !strings.Contains(out, delayed) || !strings.Contains(out, nap) {
			t.Errorf("dtq list without --suspended lacks a task:\n%s", out)
		}
	})
}
