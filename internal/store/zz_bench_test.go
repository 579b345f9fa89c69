package store

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/dtq-dev/dtq/internal/redistest"
)

func cmdstats(addr string) map[string]float64 {
	out, _ := redistest.Command(addr, "INFO", "commandstats")
	m := map[string]float64{}
	for _, l := range strings.Split(out, "\r\n") {
		if !strings.HasPrefix(l, "cmdstat_") {
			continue
		}
		name, rest, _ := strings.Cut(l[8:], ":")
		for _, kv := range strings.Split(rest, ",") {
			if v, ok := strings.CutPrefix(kv, "usec="); ok {
				var f float64
				fmt.Sscan(v, &f)
				m[name] = f
			}
		}
	}
	return m
}

func TestZZScriptCost(t *testing.T) {
	if os.Getenv("ZZ") == "" {
		t.Skip()
	}
	srv := redistest.Start(t, nil)
	c := redistest.Client(t, srv)
	s := New(c, "b")
	q := s.Queue("q")
	ctx := context.Background()
	for _, B := range []int{16, 64, 64, 64} {
		N := 2000 / B
		items := make([]EnqueueItem, B)
		for i := range items {
			items[i] = EnqueueItem{Type: "bench", Payload: []byte(`{"order_id":"123456","action":"charge","amount_cents":4200,"currency":"EUR"}`), Priority: 5, MaxAttempts: 10, Timeout: time.Minute}
		}
		q.Read(ctx, ReadRequest{Consumer: "w", Credit: 1, EnsureGroups: true})
		var startUs, finishUs float64
		for round := 0; round < N; round++ {
			if _, err := q.Enqueue(ctx, EnqueueConfig{}, items); err != nil {
				t.Fatal(err)
			}
			ents, _, err := q.ReadBands(ctx, "w", B, 0, 0)
			if err != nil || len(ents) != B {
				t.Fatal(err, len(ents))
			}
			a := cmdstats(srv.Addr)
			st, err := q.Start(ctx, StartConfig{Worker: "w", MaxCrashes: 3, Retention: time.Hour}, ents)
			if err != nil {
				t.Fatal(err)
			}
			b := cmdstats(srv.Addr)
			fi := make([]FinishItem, len(ents))
			for i, e := range ents {
				fi[i] = FinishItem{TaskID: e.TaskID, Band: e.Band, EntryID: e.EntryID, Run: st[i].Run, Attempt: st[i].Attempt, Started: st[i].Started, Outcome: OutcomeOK, Text: `"x"`, Born: e.Spec}
			}
			if _, err := q.Finish(ctx, FinishConfig{Retention: time.Hour, KeepSucceeded: true, IdemWindow: time.Hour}, "w", fi); err != nil {
				t.Fatal(err)
			}
			cc := cmdstats(srv.Addr)
			startUs += b["evalsha"] - a["evalsha"]
			finishUs += cc["evalsha"] - b["evalsha"]
		}
		t.Logf("B=%d: start %.2f µs/task, finish %.2f µs/task", B, startUs/float64(B*N), finishUs/float64(B*N))
	}
}
