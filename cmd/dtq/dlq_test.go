package main

import (
	"slices"
	"strings"
	"testing"

	"github.com/dtq-dev/dtq"
)

func TestDLQListRequeueDiscard(t *testing.T) {
	forEachAPI(t, nil, func(t *testing.T, e *apiEnv) {
		if out := e.ok("dlq", "list"); out != "no dead letters\n" {
			t.Errorf("dtq dlq list of an empty queue printed %q", out)
		}
		a, b := e.deadTask("default"), e.deadTask("default")
		c := e.deadTask("other")

		out := e.ok("dlq", "list")
		if h := strings.Fields(lines(out)[0]); !slices.Equal(h, []string{"ID", "TYPE", "ATTEMPTS", "DIED", "REASON"}) {
			t.Fatalf("dtq dlq list header:\n%s", out)
		}
		for _, id := range []string{a, b} {
			if row := rowOf(t, out, id); row[1] != "fail" || row[2] != "1/1" || !strings.Contains(strings.Join(row[4:], " "), "boom") {
				t.Errorf("dtq dlq list row of %s: %q", id, row)
			}
		}
		if strings.Contains(out, c) {
			t.Errorf("dtq dlq list (queue default) shows %s of queue other:\n%s", c, out)
		}
		rowOf(t, e.ok("dlq", "list", "--queue", "other"), c)

		// --json and paging.
		v := e.json("dlq", "list", "--limit", "1")
		letters, _ := v["dead_letters"].([]any)
		if len(letters) != 1 || v["next_cursor"] == "" {
			t.Fatalf("dtq dlq list --limit 1 --json: %v", v)
		}
		first, _ := letters[0].(map[string]any)
		if task, _ := first["task"].(map[string]any); task["id"] != b || first["reason"] == "" || first["dead_at"] == "" {
			t.Errorf("dtq dlq list --json, newest first: %v", first)
		}
		out = e.ok("dlq", "list", "--limit", "1")
		cursor, ok := strings.CutPrefix(lines(out)[2], "next page: --cursor ")
		if !ok {
			t.Fatalf("dtq dlq list --limit 1 prints no cursor:\n%s", out)
		}
		rowOf(t, e.ok("dlq", "list", "--limit", "1", "--cursor", cursor), a)

		// Requeue one: it runs again (and fails again).
		out = e.ok("dlq", "requeue", a)
		if !strings.HasPrefix(out, "requeued "+a+" (status ") {
			t.Errorf("dtq dlq requeue printed %q", out)
		}
		// Its attempts were reset: it died again on attempt 1 of 1.
		if task := e.waitStatus(a, dtq.StatusDead); len(task.History) != 2 || task.Attempt != 1 {
			t.Errorf("requeued task ran %d times in all, now on attempt %d; want 2, attempt 1", len(task.History), task.Attempt)
		}
		ok1 := e.submit("echo")
		e.waitStatus(ok1, dtq.StatusSucceeded)
		e.fails([]string{"dlq", "requeue", ok1}, "409 not_dead: the task is not in the dead-letter stream")
		e.fails([]string{"dlq", "requeue", "default-01ARZ3NDEKTSV4RRFFQ69G5FAV"}, "404 not_found")
		if v := e.json("dlq", "requeue", c); v["id"] != c {
			t.Errorf("dtq dlq requeue --json: %v", v)
		}

		// Discard one: gone from the list.
		if out := e.ok("dlq", "discard", b); out != "discarded "+b+"\n" {
			t.Errorf("dtq dlq discard printed %q", out)
		}
		if out := e.ok("dlq", "list"); strings.Contains(out, b) {
			t.Errorf("%s is still listed after discard:\n%s", b, out)
		}
		if v := e.json("dlq", "discard", b); v["discarded"] != b { // idempotent
			t.Errorf("dtq dlq discard --json: %v", v)
		}
		if out := e.ok("dlq", "discard", b); out != "discarded "+b+"\n" {
			t.Errorf("dtq dlq discard, a third time, printed %q", out)
		}
		if out := e.ok("list"); strings.Count(out, b) != 1 {
			t.Errorf("dtq list after three discards of %s lists it %d times:\n%s", b, strings.Count(out, b), out)
		}
		e.fails([]string{"dlq", "requeue", b}, "409 not_dead: the task is not in the dead-letter stream (not DEAD, or discarded)")
		e.fails([]string{"dlq", "discard", ok1}, "409 not_dead")
		e.fails([]string{"dlq", "discard", "default-01ARZ3NDEKTSV4RRFFQ69G5FAV"}, "404 not_found")

		e.fails([]string{"dlq", "requeue"}, "accepts 1 arg(s), received 0")
		e.fails([]string{"dlq", "discard", "a", "b"}, "accepts 1 arg(s), received 2")
		e.fails([]string{"dlq", "list", "--queue", "bad name"}, "400 invalid_field: queue")
		e.fails([]string{"dlq", "frob"}, `unknown command "frob" for "dtq dlq"`)
		if out := e.ok("dlq"); !strings.Contains(out, "purge") || !strings.Contains(out, "requeue") {
			t.Errorf("dtq dlq without a subcommand printed:\n%s", out)
		}
	})
}

func TestDLQPurge(t *testing.T) {
	forEachAPI(t, nil, func(t *testing.T, e *apiEnv) {
		a, b, c := e.deadTask("default"), e.deadTask("default"), e.deadTask("other")

		// Refused without a queue or --all-queues (issue 30: it purged
		// every queue), and without --yes, before any request.
		e.fails([]string{"dlq", "purge", "--yes"}, "give --queue NAME or --all-queues")
		e.fails([]string{"dlq", "purge"}, "give --queue NAME or --all-queues")
		e.fails([]string{"dlq", "purge", "--queue", "other", "--all-queues", "--yes"}, "none of the others can be")
		e.fails([]string{"dlq", "purge", "--all-queues"}, "deletes the dead letters of every queue for good", "--yes")
		e.fails([]string{"dlq", "purge", "--queue", "other"}, "queue other", "--yes")
		if out := e.ok("dlq", "list"); !strings.Contains(out, a) || !strings.Contains(out, b) {
			t.Fatalf("dead letters gone after a refused purge:\n%s", out)
		}

		if out := e.ok("dlq", "purge", "--queue", "other", "--yes"); out != "discarded 1 dead letters of queue other\n" {
			t.Errorf("dtq dlq purge --queue other printed %q", out)
		}
		if out := e.ok("dlq", "list", "--queue", "other"); out != "no dead letters\n" {
			t.Errorf("dead letter %s still listed after the purge:\n%s", c, out)
		}
		if v := e.json("dlq", "purge", "--all-queues", "--yes"); v["discarded"] != 2.0 {
			t.Errorf("dtq dlq purge --yes --json: %v", v)
		}
		if out := e.ok("dlq", "list"); out != "no dead letters\n" {
			t.Errorf("dtq dlq list after purge printed %q", out)
		}
		if out := e.ok("dlq", "purge", "--all-queues", "--yes"); out != "discarded 0 dead letters of every queue\n" {
			t.Errorf("dtq dlq purge of nothing printed %q", out)
		}
		e.fails([]string{"dlq", "purge", "--all-queues", "--yes", "extra"}, `unknown command "extra"`)
	})
}

// TestDLQRedrive: a dry run counts the matching dead letters; the redrive
// requeues those only.
func TestDLQRedrive(t *testing.T) {
	forEachAPI(t, nil, func(t *testing.T, e *apiEnv) {
		ctx := t.Context()
		var ids []string
		for _, reason := range []string{"S3 timed out", "S3 timed out", "bad input"} {
			res, err := e.c.Enqueue(ctx, "upload", nil, &dtq.EnqueueOpts{Queue: "dead", MaxAttempts: 1})
			if err != nil {
				t.Fatal(err)
			}
			ls, err := e.leaseServer().Lease(ctx, dtq.LeaseRequest{Worker: "w", Queues: []string{"dead"}})
			if err != nil || len(ls) != 1 {
				t.Fatalf("lease: %d %v", len(ls), err)
			}
			if _, err := e.leaseServer().FailLease(ctx, ls[0].Token, dtq.LeaseFailure{Error: reason, Permanent: true}); err != nil {
				t.Fatal(err)
			}
			ids = append(ids, res.Task.ID)
		}
		// Neither --queue nor --all-queues: refused (issue 30: it acted on
		// default).
		e.fails([]string{"dlq", "redrive", "--error", "s3"}, "give --queue NAME or --all-queues")
		e.fails([]string{"dlq", "redrive", "--queue", "dead", "--all-queues"}, "none of the others can be")
		out := e.ok("dlq", "redrive", "--queue", "dead", "--error", "s3", "--since", "1h", "--dry-run")
		if out != "dry run: 2 dead letters of queue dead match; nothing requeued\n" {
			t.Fatalf("dry run: %q", out)
		}
		if v := e.json("dlq", "redrive", "--all-queues", "--error", "s3", "--dry-run"); v["matched"] != 2.0 || v["dry_run"] != true {
			t.Fatalf("dry run of every queue --json: %v", v)
		}
		out = e.ok("dlq", "redrive", "--queue", "dead", "--type", "upload", "--error", "S3", "--rate", "50")
		if out != "requeued 2 of 2 matching dead letters of queue dead\n" {
			t.Fatalf("redrive: %q", out)
		}
		for i, id := range ids {
			task, err := e.c.Get(ctx, id)
			want := dtq.StatusQueued
			if i == 2 {
				want = dtq.StatusDead
			}
			if err != nil || task.Status != want {
				t.Errorf("task %d: %v %v, want %s", i, task.Status, err, want)
			}
		}
		e.fails([]string{"dlq", "redrive", "--queue", "dead", "--after", "yesterday"}, "--after must be an RFC 3339 time")
		// The third, "bad input", through --all-queues.
		if out := e.ok("dlq", "redrive", "--all-queues", "--error", "bad input"); out != "requeued 1 of 1 matching dead letters of every queue\n" {
			t.Errorf("redrive --all-queues: %q", out)
		}
	})
}

// dtq dlq requeue --help says what a requeue does: the attempts are reset,
// not one more given (issue 30), as TestDLQListRequeueDiscard sees.
func TestDLQRequeueHelp(t *testing.T) {
	t.Parallel()
	out, _, err := execute(t, "dlq", "requeue", "--help")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out, "one more attempt") || !strings.Contains(out, "attempts and crashes reset") {
		t.Errorf("dtq dlq requeue --help:\n%s", out)
	}
}
