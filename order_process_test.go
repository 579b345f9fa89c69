package dtq_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dtq-dev/dtq"
	"github.com/dtq-dev/dtq/internal/redistest"
)

// orderedTask is the payload of an "ordered" task of the child workers.
type orderedTask struct {
	Key  string `json:"k"`
	Seq  int    `json:"s"`
	Fail bool   `json:"f"` // fails its first attempt (retried after 20 ms)
}

// handleOrdered registers "ordered" on a child worker: it logs "os
// <worker> <unix ns> <key> <seq> <attempt> <crashes>" as it starts and "oe
// …" as it ends to
// childEffectsEnv, naps a millisecond, and fails a first attempt when
// asked.
func handleOrdered(w *dtq.Worker, id string) {
	var mu sync.Mutex
	w.Handle("ordered", func(ctx context.Context, t *dtq.Task) (any, error) {
		var p orderedTask
		if err := json.Unmarshal(t.Payload, &p); err != nil {
			return nil, dtq.Permanent(err)
		}
		logLine := func(kind string) {
			mu.Lock()
			defer mu.Unlock()
			f, err := os.OpenFile(os.Getenv(childEffectsEnv), os.O_APPEND|os.O_WRONLY|os.O_CREATE, 0o644)
			if err != nil {
				return
			}
			fmt.Fprintf(f, "%s %s %d %s %d %d %d\n", kind, id, time.Now().UnixNano(), p.Key, p.Seq, t.Attempt, t.Crashes)
			f.Close()
		}
		logLine("os")
		time.Sleep(time.Millisecond)
		logLine("oe")
		if p.Fail && t.Attempt == 1 {
			return nil, dtq.RetryAfter(20*time.Millisecond, errors.New("first attempt fails"))
		}
		return nil, ctx.Err()
	})
}

type orderEffect struct {
	start  bool
	worker string
	at     int64
	key    string
	seq    int
	// attempt and crashes of the execution (a failure report tells a
	// takeover of a live run, crashes one more, from a second start)
	attempt, crashes int
}

func readOrderEffects(t *testing.T, path string) []orderEffect {
	t.Helper()
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []orderEffect
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		p := strings.Fields(sc.Text())
		if len(p) != 7 || (p[0] != "os" && p[0] != "oe") {
			continue // a torn line of a killed process, or another handler's
		}
		at, err1 := strconv.ParseInt(p[2], 10, 64)
		seq, err2 := strconv.Atoi(p[4])
		attempt, err3 := strconv.Atoi(p[5])
		crashes, err4 := strconv.Atoi(p[6])
		if err1 != nil || err2 != nil || err3 != nil || err4 != nil {
			continue
		}
		out = append(out, orderEffect{start: p[0] == "os", worker: p[1], at: at, key: p[3], seq: seq, attempt: attempt, crashes: crashes})
	}
	slices.SortStableFunc(out, func(a, b orderEffect) int {
		switch {
		case a.at != b.at:
			return int(a.at - b.at)
		case a.start == b.start:
			return 0
		case a.start: // an end at the same instant comes first
			return 1
		}
		return -1
	})
	return out
}

// checkOrderEffects fails t when a key's executions overlapped or started
// out of submission order. An execution of a killed worker (in killed,
// worker -> when) that logged no end ended at its kill.
func checkOrderEffects(t *testing.T, es []orderEffect, killed map[string]int64, keys, perKey int) {
	t.Helper()
	type open struct {
		worker           string
		seq              int
		attempt, crashes int
	}
	running := map[string]*open{}
	last := map[string]int{}
	done := map[string]map[int]bool{}
	bad := 0
	report := func(format string, args ...any) {
		if bad++; bad <= 10 {
			t.Errorf(format, args...)
		}
	}
	for _, e := range es {
		if o := running[e.key]; o != nil {
			if k, ok := killed[o.worker]; ok && k <= e.at {
				running[e.key] = nil // ended with its worker
			}
		}
		o := running[e.key]
		if !e.start {
			if o != nil && o.worker == e.worker && o.seq == e.seq {
				running[e.key] = nil
				if done[e.key] == nil {
					done[e.key] = map[int]bool{}
				}
				done[e.key][e.seq] = true
			}
			continue
		}
		if o != nil {
			report("key %s: seq %d started on %s (attempt %d, crashes %d) while seq %d ran on %s (attempt %d, crashes %d)",
				e.key, e.seq, e.worker, e.attempt, e.crashes, o.seq, o.worker, o.attempt, o.crashes)
		}
		if l, ok := last[e.key]; ok && e.seq < l {
			report("key %s: seq %d started after seq %d", e.key, e.seq, l)
		}
		last[e.key] = e.seq
		running[e.key] = &open{worker: e.worker, seq: e.seq, attempt: e.attempt, crashes: e.crashes}
	}
	if len(done) != keys {
		report("%d keys ran to an end, want %d", len(done), keys)
	}
	for k, seqs := range done {
		if len(seqs) != perKey {
			report("key %s: %d of its %d tasks ran to an end", k, len(seqs), perKey)
		}
	}
}

// 200 order keys × 50 tasks, a tenth failing once, run by worker processes
// while two of them are SIGKILLed and Redis is restarted (SIGKILL, then
// again on its append-only file; real Redis only): every key's
// tasks start in submission order, no two of one key overlap, and all
// succeed.
func TestOrderKeysAcrossProcesses(t *testing.T) {
	t.Parallel()
	t.Run("redis", func(t *testing.T) {
		t.Parallel()
		srv := redistest.Start(t, &redistest.Options{AppendFsync: "always"})
		b := &redistest.Backend{Name: "redis", Client: redistest.Client(t, srv), Namespace: "ordered", Server: srv}
		runOrderedAcrossProcesses(t, newEnv(t, b, nil), func() {
			if err := srv.Kill(); err != nil {
				t.Fatal(err)
			}
			time.Sleep(200 * time.Millisecond)
			if err := srv.Restart(); err != nil {
				t.Fatal(err)
			}
		})
	})
	t.Run("embedded", func(t *testing.T) {
		// No restart here: the embedded backend lives and dies with its
		// process (it keeps nothing on disk), so a restart of it is a new,
		// empty one. (miniredis's own Restart, which keeps the data, leaves
		// a blocked XREADGROUP unwoken by later writes: the workers stall.)
		t.Parallel()
		em := redistest.Embedded(t)
		b := &redistest.Backend{Name: "embedded", Client: em.Client, Namespace: "ordered", Embedded: em}
		runOrderedAcrossProcesses(t, newEnv(t, b, nil), func() {})
	})
}

func runOrderedAcrossProcesses(t *testing.T, e *env, restart func()) {
	ctx := t.Context()
	const keys, perKey = 200, 50
	// The visibility timeout is what a killed worker's tasks wait before
	// another takes them over — and what a live worker's renewals must
	// beat: a loaded machine under -race, with the embedded backend
	// serving one command at a time, delayed them past 1 s (a live run
	// taken over: a crash counted, a key run twice at once).
	vt := 2 * time.Second
	if e.Embedded != nil {
		vt = 5 * time.Second
	}
	effects := filepath.Join(t.TempDir(), "effects")
	env := []string{childEffectsEnv + "=" + effects, childConcurrencyEnv + "=16"}
	procs := map[string]*exec.Cmd{}
	for _, id := range []string{"a", "b", "c"} {
		procs[id] = startChildWorker(t, e, id, vt, env...)
	}
	var reqs []dtq.EnqueueRequest
	for seq := range perKey {
		for k := range keys {
			p := orderedTask{Key: "k" + strconv.Itoa(k), Seq: seq, Fail: (seq+k)%10 == 3}
			reqs = append(reqs, dtq.EnqueueRequest{Type: "ordered", Payload: p, Opts: &dtq.EnqueueOpts{OrderKey: p.Key}})
		}
	}
	for i := 0; i < len(reqs); i += 1000 {
		res, err := e.c.EnqueueMany(ctx, reqs[i:i+1000])
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range res {
			if r.Err != nil {
				t.Fatal(r.Err)
			}
		}
	}
	starts := func() int {
		time.Sleep(200 * time.Millisecond) // (a poll reads the whole log: not every 10 ms)
		return countLines(effects, "os ")
	}
	killed := map[string]int64{}
	kill := func(id, next string) {
		if err := procs[id].Process.Kill(); err != nil {
			t.Fatal(err)
		}
		procs[id].Wait()
		killed[id] = time.Now().UnixNano()
		procs[next] = startChildWorker(t, e, next, vt, env...)
	}
	total := keys * perKey
	// (Bounds for a loaded machine under -race: the embedded backend sorts
	// the whole owait set at each key's hand-over — miniredis's sorted sets
	// — and took 97 s for the whole run alone under -race, real Redis 18 s.)
	eventually(t, 4*time.Minute, "a fifth of the tasks started", func() bool { return starts() >= total/5 })
	kill("a", "d")
	eventually(t, 4*time.Minute, "half of the tasks started", func() bool { return starts() >= total/2 })
	restart()
	eventually(t, 4*time.Minute, "seven tenths of the tasks started", func() bool { return starts() >= total*7/10 })
	kill("b", "e")
	eventually(t, 8*time.Minute, "every task ended", func() bool {
		time.Sleep(200 * time.Millisecond) // (the embedded backend serves one command at a time)
		st, err := e.a.Stats(ctx, dtq.DefaultQueue)
		return err == nil && st.Succeeded+st.Failed == int64(total)
	})
	st, err := e.a.Stats(ctx, dtq.DefaultQueue)
	if err != nil {
		t.Fatal(err)
	}
	if st.Succeeded != int64(total) || st.Queued != 0 || st.Scheduled != 0 || st.Running != 0 || st.OrderWaiting != 0 {
		t.Errorf("after: %+v (want every task succeeded)", st)
	}
	checkOrderEffects(t, readOrderEffects(t, effects), killed, keys, perKey)
}
