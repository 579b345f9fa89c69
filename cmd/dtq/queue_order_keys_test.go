package main

import (
	"slices"
	"strings"
	"testing"
)

func TestQueueOrderKeys(t *testing.T) {
	forEachAPI(t, nil, func(t *testing.T, e *apiEnv) {
		e.fails([]string{"queue", "order-keys", "nowhere"}, `404 not_found: no such queue "nowhere"`)
		var ids []string
		for range 3 {
			ids = append(ids, e.submit("echo", "--queue", "lined", "--order-key", "acct-1"))
		}
		e.submit("echo", "--queue", "lined", "--order-key", "acct-2")

		out := e.ok("queue", "order-keys", "lined")
		if h := lines(out)[0]; !slices.Equal(strings.Fields(h), []string{"KEY", "IN", "FLIGHT", "WAITING"}) {
			t.Fatalf("dtq queue order-keys header:\n%s", out)
		}
		if row := rowOf(t, out, "acct-1"); !slices.Equal(row, []string{"acct-1", ids[0], "2"}) {
			t.Errorf("row of acct-1: %q", row)
		}
		if row := rowOf(t, out, "acct-2"); row[2] != "0" {
			t.Errorf("row of acct-2: %q", row)
		}
		if out := e.ok("queue", "order-keys", "lined", "--limit", "1"); len(lines(out)) != 3 || !strings.Contains(out, "next page: --cursor ") {
			t.Errorf("a page of one key:\n%s", out)
		}
		v := e.json("queue", "order-keys", "lined")
		if ks, _ := v["keys"].([]any); len(ks) != 2 || v["next_cursor"] != "" {
			t.Errorf("dtq queue order-keys --json: %v", v)
		}

		out = e.ok("queue", "order-keys", "lined", "acct-1")
		want := "queue:      lined\nkey:        acct-1\nin flight:  " + ids[0] + "\nwaiting:    2\nnext:\n  1. " + ids[1] + "\n  2. " + ids[2] + "\n"
		if out != want {
			t.Errorf("dtq queue order-keys lined acct-1 printed\n%s\nwant\n%s", out, want)
		}
		if out := e.ok("queue", "order-keys", "lined", "idle"); !strings.Contains(out, "in flight:  -\n") || !strings.Contains(out, "waiting:    0\n") {
			t.Errorf("a key without tasks:\n%s", out)
		}
		e.fails([]string{"queue", "order-keys", "lined", "a b"}, "400 invalid_field: key")
		e.fails([]string{"queue", "order-keys", "lined", "--limit", "0"}, "400 invalid_field: limit")
		e.fails([]string{"queue", "order-keys", "lined", "acct-1", "--cursor", "0:"}, "give no KEY")
	})
}
