package taskscript

import (
	"context"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dtq-dev/dtq/internal/keys"
	"github.com/dtq-dev/dtq/internal/redistest"
	"github.com/dtq-dev/dtq/internal/taskid"
	"github.com/redis/rueidis"
)

func TestMain(m *testing.M) { os.Exit(redistest.Main(m)) }

// usecOf reads the usec of every command from INFO commandstats.
func usecOf(c rueidis.Client) map[string]float64 {
	info, _ := c.Do(context.Background(), c.B().Info().Section("commandstats").Build()).ToString()
	out := map[string]float64{}
	for _, l := range strings.Split(info, "\r\n") {
		name, rest, ok := strings.Cut(l, ":")
		if !ok || !strings.HasPrefix(name, "cmdstat_") {
			continue
		}
		_, u, _ := strings.Cut(rest, "usec=")
		f, _ := strconv.ParseFloat(u[:strings.IndexByte(u, ',')], 64)
		out[strings.TrimPrefix(name, "cmdstat_")] = f
	}
	return out
}

// BenchmarkScripts measures each engine script alone, in batches of 64
// tasks, against its own redis-server: Redis µs per task of enqueue.lua, a
// plain XREADGROUP, start.lua (with its pipelined HGETALL) and finish.lua, by
// INFO commandstats (a script's usec includes the commands it runs).
//
// Run: go test -run '^$' -bench Scripts ./internal/taskscript
func BenchmarkScripts(b *testing.B) {
	srv := redistest.Start(b, nil)
	c := redistest.Client(b, srv)
	ctx := context.Background()
	k := keys.NewTasks("b", "q")
	const B = 64
	N := max(B, b.N/B*B)
	payload := []byte(`{"order_id":"123456","action":"charge","amount_cents":4200,"currency":"EUR"}`)
	var ids []string
	measure := func(name string, f func()) {
		c.Do(ctx, c.B().ConfigResetstat().Build())
		f()
		var total float64
		for cmd, v := range usecOf(c) {
			switch cmd { // the commands sent by the client, not those a script runs
			case "evalsha", "eval", "xreadgroup", "hgetall":
				total += v
			}
		}
		b.ReportMetric(total/float64(N), name+"-µs/task")
	}
	b.ResetTimer()
	measure("enqueue", func() {
		for i := 0; i < N; i += B {
			items := make([]EnqueueItem, B)
			for j := range items {
				id := taskid.New("q", time.Now())
				_, ulid, _ := taskid.Parse(id)
				items[j] = EnqueueItem{ID: id, ULID: ulid, Type: "noop", Payload: payload, Priority: 5, MaxAttempts: 10, Timeout: time.Minute}
				ids = append(ids, id)
			}
			if _, err := Enqueue(ctx, c, k, EnqueueConfig{IdemWindow: time.Hour}, items); err != nil {
				b.Fatal(err)
			}
		}
	})
	c.Do(ctx, c.B().XgroupCreate().Key(k.Band(5)).Group("g").Id("0").Build())
	var entries []Entry
	measure("read", func() {
		for len(entries) < N {
			st, err := c.Do(ctx, c.B().Xreadgroup().Group("g", "w").Count(B).Streams().Key(k.Band(5)).Id(">").Build()).AsXRead()
			if err != nil {
				b.Fatal(err)
			}
			e, _ := ParseBlockingRead(k, st)
			entries = append(entries, e...)
		}
	})
	var started []Started
	measure("start", func() {
		for i := 0; i < N; i += B {
			s, err := Start(ctx, c, k, StartConfig{Group: "g", Worker: "w", MaxCrashes: 3, DLQMaxLen: 10}, entries[i:i+B])
			if err != nil {
				b.Fatal(err)
			}
			started = append(started, s...)
		}
	})
	measure("finish", func() {
		for i := 0; i < N; i += B {
			items := make([]FinishItem, B)
			for j := range items {
				e, s := entries[i+j], started[i+j]
				_, ulid, _ := taskid.Parse(e.TaskID)
				items[j] = FinishItem{TaskID: e.TaskID, ULID: ulid, Band: 5, EntryID: e.EntryID, Run: s.Run, Outcome: OutcomeOK,
					Text: "null", Started: s.Started}
			}
			res, err := Finish(ctx, c, k, FinishConfig{Group: "g", Retention: time.Hour, IdemWindow: time.Hour, DLQMaxLen: 10}, "w", items)
			if err != nil || res[0] != "SUCCEEDED" {
				b.Fatal(err, res)
			}
		}
	})
}
