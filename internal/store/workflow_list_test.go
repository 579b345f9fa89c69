package store

import (
	"context"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/dtq-dev/dtq/internal/redistest"
)

// fakeWorkflow writes a workflow hash of no nodes and its index entry, as
// workflow.lua would, created at ms.
func fakeWorkflow(t *testing.T, b *redistest.Backend, q *Queue, ulid string, ms int64, status string) {
	t.Helper()
	c := b.Client
	ctx := context.Background()
	for _, err := range []error{
		c.Do(ctx, c.B().Hset().Key(q.k.Workflow(ulid)).FieldValue().FieldValue(WFStatus, status).
			FieldValue(WFCreated, strconv.FormatInt(ms, 10)).FieldValue(WFNodes, "0").Build()).Error(),
		c.Do(ctx, c.B().Zadd().Key(q.k.Workflows()).ScoreMember().ScoreMember(float64(ms), ulid).Build()).Error(),
	} {
		if err != nil {
			t.Fatal(err)
		}
	}
}

// listAll pages through ListWorkflows with wq, returning the ULIDs.
func listAll(t *testing.T, q *Queue, wq WorkflowQuery) []string {
	t.Helper()
	var out []string
	for range 1000 {
		rs, next, err := q.ListWorkflows(context.Background(), wq)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range rs {
			out = append(out, r.ID[len(r.Queue)+1:])
		}
		if next == "" {
			return out
		}
		wq.Cursor = next
	}
	t.Fatal("ListWorkflows never ends")
	return nil
}

// ulidN is a valid-looking ULID numbered n.
func ulidN(n int) string { return fmt.Sprintf("01JAAAAAAAAAAAAAAAAAAA%04d", n) }

// A submitted workflow enters the index; pages list the workflows newest
// first, each once, across creation times shared by many (more than a
// read's chunk); the status and time filters apply; a gone workflow is
// skipped and taken out.
func TestListWorkflowsPagesTheIndex(t *testing.T) {
	t.Parallel()
	redistest.ForEachBackend(t, func(t *testing.T, b *redistest.Backend) {
		ctx := context.Background()
		q := New(b.Client, b.Namespace).Queue("q")
		plan := []PlanNode{{Kind: NodeTask, Parent: -1, OnSuccess: -1, OnComplete: -1, Type: "t", Payload: []byte("1"), MaxAttempts: 1, Timeout: time.Minute}}
		created, code, _, err := q.SubmitWorkflow(ctx, WorkflowSubmission{ULID: "01JZZZZZZZZZZZZZZZZZZZZZZZ", Retention: time.Hour}, plan)
		if err != nil || code != Created {
			t.Fatalf("submit: %v %v", code, err)
		}
		rs, next, err := q.ListWorkflows(ctx, WorkflowQuery{Limit: 10})
		if err != nil || len(rs) != 1 || next != "" || rs[0].Created != created || rs[0].Status != "RUNNING" || len(rs[0].Nodes) != 1 ||
			rs[0].Nodes[0].State != WFActive {
			t.Fatalf("list after a submission: %+v next %q err %v", rs, next, err)
		}
		// 250 workflows at one millisecond, 10 at each of the next 10.
		var want []string
		for i := range 10 {
			for j := range 10 {
				n := 1000 + i*10 + j
				fakeWorkflow(t, b, q, ulidN(n), 2000+int64(i), []string{"RUNNING", "FAILED"}[j%2])
			}
		}
		for n := range 250 {
			fakeWorkflow(t, b, q, ulidN(n), 1000, "SUCCEEDED")
		}
		want = append(want, "01JZZZZZZZZZZZZZZZZZZZZZZZ")
		for n := 1099; n >= 1000; n-- {
			want = append(want, ulidN(n))
		}
		for n := 249; n >= 0; n-- {
			want = append(want, ulidN(n))
		}
		for _, limit := range []int{1, 7, 500} {
			got := listAll(t, q, WorkflowQuery{Limit: limit})
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Fatalf("limit %d: listed %d workflows %v…, want %d %v…", limit, len(got), got[:min(5, len(got))], len(want), want[:5])
			}
		}
		failed := listAll(t, q, WorkflowQuery{Limit: 3, Status: "FAILED"})
		if len(failed) != 50 || failed[0] != ulidN(1099) {
			t.Fatalf("FAILED: %d, first %v", len(failed), failed)
		}
		ranged := listAll(t, q, WorkflowQuery{Limit: 4, After: 2003, Before: 2005})
		if len(ranged) != 20 || ranged[0] != ulidN(1049) || ranged[19] != ulidN(1030) {
			t.Fatalf("created in [2003, 2005): %v", ranged)
		}
		if _, _, err := q.ListWorkflows(ctx, WorkflowQuery{Limit: 1, Cursor: "x"}); err != ErrBadCursor {
			t.Fatalf("a bad cursor: %v", err)
		}
		c := b.Client
		if err := c.Do(ctx, c.B().Del().Key(q.k.Workflow(ulidN(1099))).Build()).Error(); err != nil {
			t.Fatal(err)
		}
		if got := listAll(t, q, WorkflowQuery{Limit: 2, After: 2009}); fmt.Sprint(got) != fmt.Sprint(append(want[:1:1], want[2:11]...)) {
			t.Fatalf("after a workflow went: %v", got)
		}
		if n, _ := c.Do(ctx, c.B().Zscore().Key(q.k.Workflows()).Member(ulidN(1099)).Build()).AsFloat64(); n != 0 {
			t.Fatal("a gone workflow listed is left in the index")
		}
	})
}

// The sweep takes the entries of gone workflows out of the index, over
// calls that each read a bounded slice, and keeps the others.
func TestSweepWorkflowsRemovesTheGone(t *testing.T) {
	t.Parallel()
	redistest.ForEachBackend(t, func(t *testing.T, b *redistest.Backend) {
		ctx := context.Background()
		q := New(b.Client, b.Namespace).Queue("q")
		c := b.Client
		total := sweepChunks*workflowChunk + 500
		for n := range total {
			fakeWorkflow(t, b, q, ulidN(n), int64(1000+n/3), "SUCCEEDED")
			if n%2 == 0 {
				if err := c.Do(ctx, c.B().Del().Key(q.k.Workflow(ulidN(n))).Build()).Error(); err != nil {
					t.Fatal(err)
				}
			}
		}
		removed := 0
		for range 3 {
			n, err := q.SweepWorkflows(ctx)
			if err != nil {
				t.Fatal(err)
			}
			removed += n
		}
		left, err := c.Do(ctx, c.B().Zcard().Key(q.k.Workflows()).Build()).AsInt64()
		if err != nil {
			t.Fatal(err)
		}
		if removed != total/2 || left != int64(total/2) {
			t.Fatalf("swept %d, %d left in the index; want %d and %d", removed, left, total/2, total/2)
		}
		for n := 1; n < total; n += 2 {
			if s, err := c.Do(ctx, c.B().Zscore().Key(q.k.Workflows()).Member(ulidN(n)).Build()).AsFloat64(); err != nil || s == 0 {
				t.Fatalf("live workflow %d left the index", n)
			}
		}
	})
}

// Trim, which the scheduler runs, sweeps the workflow index too and
// counts what it removed.
func TestTrimSweepsTheWorkflowIndex(t *testing.T) {
	t.Parallel()
	redistest.ForEachBackend(t, func(t *testing.T, b *redistest.Backend) {
		ctx := context.Background()
		q := New(b.Client, b.Namespace).Queue("q")
		c := b.Client
		for n := range 10 {
			fakeWorkflow(t, b, q, ulidN(n), int64(1000+n), "SUCCEEDED")
		}
		for n := range 4 {
			if err := c.Do(ctx, c.B().Del().Key(q.k.Workflow(ulidN(n))).Build()).Error(); err != nil {
				t.Fatal(err)
			}
		}
		removed, err := q.Trim(ctx, time.Hour, 1000, 1000, 100)
		if err != nil {
			t.Fatal(err)
		}
		left, _ := c.Do(ctx, c.B().Zcard().Key(q.k.Workflows()).Build()).AsInt64()
		if removed != 4 || left != 6 {
			t.Fatalf("Trim removed %d, %d left in the workflow index; want 4 and 6", removed, left)
		}
	})
}
