package main

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// TestWorkflowList: the workflows of a queue, newest first, with status,
// progress and times; filters, pages with --cursor, --json, and bad flags
// refused with the API's message.
func TestWorkflowList(t *testing.T) {
	forEachAPI(t, &apiEnvOpts{noWorker: true}, func(t *testing.T, e *apiEnv) {
		file := writeWorkflowFile(t, pipeline) // queue parked
		older := workflowID(t, e.ok("workflow", "submit", "--file", file))
		newer := workflowID(t, e.ok("workflow", "submit", "--file", file))
		e.ok("workflow", "cancel", older)

		out := e.ok("workflow", "list", "--queue", "parked")
		ls := lines(out)
		if len(ls) != 3 || !strings.HasPrefix(ls[0], "ID") || !strings.Contains(ls[0], "PROGRESS") ||
			!strings.HasPrefix(ls[1], newer) || !strings.Contains(ls[1], "RUNNING") || !strings.Contains(ls[1], "0/4 1 active") ||
			!strings.HasPrefix(ls[2], older) || !strings.Contains(ls[2], "CANCELLED") || !strings.Contains(ls[2], "0/4 4 cancelled") {
			t.Errorf("dtq workflow list --queue parked printed\n%s", out)
		}
		out = e.ok("workflow", "list", "--queue", "parked", "--status", "cancelled")
		if ls := lines(out); len(ls) != 2 || !strings.HasPrefix(ls[1], older) {
			t.Errorf("dtq workflow list --status cancelled printed\n%s", out)
		}
		future := time.Now().Add(time.Hour).UTC().Format(time.RFC3339)
		if out := e.ok("workflow", "list", "--queue", "parked", "--created-after", future); out != "no workflows\n" {
			t.Errorf("dtq workflow list --created-after an hour from now printed\n%s", out)
		}
		if out := e.ok("workflow", "list", "--queue", "parked", "--created-before", future, "--status", "running"); !strings.Contains(out, newer) {
			t.Errorf("dtq workflow list --created-before printed\n%s", out)
		}

		out = e.ok("workflow", "list", "--queue", "parked", "--limit", "1")
		ls = lines(out)
		if len(ls) != 3 || !strings.HasPrefix(ls[1], newer) || !strings.HasPrefix(ls[2], "next page: --cursor ") {
			t.Fatalf("dtq workflow list --limit 1 printed\n%s", out)
		}
		cursor := strings.TrimPrefix(ls[2], "next page: --cursor ")
		out = e.ok("workflow", "list", "--queue", "parked", "--limit", "1", "--cursor", cursor)
		if ls := lines(out); len(ls) != 2 || !strings.HasPrefix(ls[1], older) {
			t.Errorf("dtq workflow list --cursor printed\n%s", out)
		}

		v := e.json("workflow", "list", "--queue", "parked")
		ws, _ := v["workflows"].([]any)
		if len(ws) != 2 || fmt.Sprint(ws[0].(map[string]any)["id"]) != newer || v["next_cursor"] != "" {
			t.Errorf("dtq workflow list --json: %v", v)
		}

		e.fails([]string{"workflow", "list", "--status", "done"}, "status must be one of RUNNING")
		e.fails([]string{"workflow", "list", "--limit", "0"}, "limit must be an integer from 1 to 500")
		e.fails([]string{"workflow", "list", "--created-after", "yesterday"}, "created_after must be an RFC 3339 time")
		e.fails([]string{"workflow", "list", "--cursor", "nope"}, "cursor is not a cursor from a previous page")
	})
}
