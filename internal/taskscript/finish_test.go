package taskscript

import (
	"context"
	"testing"
	"time"

	"github.com/dtq-dev/dtq/internal/keys"
	"github.com/dtq-dev/dtq/internal/redistest"
	"github.com/dtq-dev/dtq/internal/taskid"
)

// Recording an execution's outcome again (what a durable worker does until
// the replicas have it) changes nothing and answers the recorded status,
// while an execution that lost its task is still refused.
func TestFinishRecordedAgain(t *testing.T) {
	c := redistest.Client(t, redistest.Start(t, nil))
	ctx := context.Background()
	k := keys.NewTasks("t", "q")
	ids := make([]string, 2)
	items := make([]EnqueueItem, 2)
	for i := range items {
		ids[i] = taskid.New("q", time.Now())
		_, ulid, _ := taskid.Parse(ids[i])
		items[i] = EnqueueItem{ID: ids[i], ULID: ulid, Type: "noop", Payload: []byte(`{}`), Priority: 5, MaxAttempts: 3, Timeout: time.Minute}
	}
	if _, err := Enqueue(ctx, c, k, EnqueueConfig{IdemWindow: time.Hour}, items); err != nil {
		t.Fatal(err)
	}
	c.Do(ctx, c.B().XgroupCreate().Key(k.Band(5)).Group("g").Id("0").Build())
	st, err := c.Do(ctx, c.B().Xreadgroup().Group("g", "w").Count(2).Streams().Key(k.Band(5)).Id(">").Build()).AsXRead()
	if err != nil {
		t.Fatal(err)
	}
	entries, _ := ParseBlockingRead(k, st)
	started, err := Start(ctx, c, k, StartConfig{Group: "g", Worker: "w", MaxCrashes: 3, DLQMaxLen: 10}, entries)
	if err != nil || len(started) != 2 {
		t.Fatal(err, started)
	}
	finish := func(i int, run int, outcome Outcome) string {
		t.Helper()
		_, ulid, _ := taskid.Parse(ids[i])
		item := FinishItem{TaskID: ids[i], ULID: ulid, Band: 5, EntryID: entries[i].EntryID, Run: run, Outcome: outcome,
			Text: `"done"`, Started: started[i].Started, RetryDelay: time.Hour}
		res, err := Finish(ctx, c, k, FinishConfig{Group: "g", Retention: time.Hour, IdemWindow: time.Hour, DLQMaxLen: 10}, "w", []FinishItem{item})
		if err != nil {
			t.Fatal(err)
		}
		return res[0]
	}
	info := func() map[string]string {
		m, _ := c.Do(ctx, c.B().Hgetall().Key(k.Info()).Build()).AsStrMap()
		return m
	}
	if got := finish(0, started[0].Run, OutcomeOK); got != "SUCCEEDED" {
		t.Fatalf("first record: %q", got)
	}
	if got := finish(1, started[1].Run, OutcomeRetry); got != "SCHEDULED" {
		t.Fatalf("first record of a retry: %q", got)
	}
	before := info()
	if got := finish(0, started[0].Run, OutcomeOK); got != "SUCCEEDED" {
		t.Fatalf("recorded again: %q, want SUCCEEDED", got)
	}
	if got := finish(1, started[1].Run, OutcomeRetry); got != "SCHEDULED" {
		t.Fatalf("a retry recorded again: %q, want SCHEDULED", got)
	}
	if after := info(); after["succeeded"] != before["succeeded"] || after["retried"] != before["retried"] || after["depth"] != before["depth"] {
		t.Fatalf("recording again changed the counters: %v, then %v", before, after)
	}
	if got := finish(0, started[0].Run+1, OutcomeOK); got != "" {
		t.Fatalf("another run's outcome: %q, want refused", got)
	}
}
