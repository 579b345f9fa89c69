//go:build faults

package faults

import (
	"context"
	"fmt"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dtq-dev/dtq"
	"github.com/dtq-dev/dtq/internal/redistest"
	"github.com/dtq-dev/dtq/internal/store"
	"github.com/dtq-dev/dtq/internal/taskid"
	"github.com/redis/rueidis"
)

// infoField returns field of INFO section at addr.
func infoField(t *testing.T, addr, section, field string) string {
	t.Helper()
	out, err := redistest.Command(addr, "INFO", section)
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(out, "\r\n") {
		if v, ok := strings.CutPrefix(l, field+":"); ok {
			return v
		}
	}
	return ""
}

// 5. redis-server SIGKILLed under load and restarted on its AOF, with
// appendfsync always and everysec. A process crash loses nothing the
// server wrote to its AOF file (the kernel has it); everysec's window is
// an OS crash or power loss, which this cannot simulate.
func TestRedisKill(t *testing.T) {
	for _, fsync := range []string{"always", "everysec"} {
		t.Run(fsync, func(t *testing.T) {
			srv, url := standalone(t, &redistest.Options{AppendFsync: fsync})
			r := newRig(t, url, rigOpts{})
			stop := r.startLoad(loadOpts{})
			began := time.Now()
			warmUp()
			oldPID := srv.PID()
			killAt := time.Now()
			if err := srv.Kill(); err != nil || srv.PID() != 0 {
				t.Fatalf("SIGKILL of redis-server: %v (pid %d)", err, srv.PID())
			}
			if err := srv.Restart(); err != nil {
				t.Fatal(err)
			}
			up := time.Now()
			if srv.PID() == oldPID || infoField(t, srv.Addr, "persistence", "aof_enabled") != "1" {
				t.Fatalf("redis-server not restarted with AOF (pid %d, was %d)", srv.PID(), oldPID)
			}
			if n, err := redistest.Command(srv.Addr, "DBSIZE"); err != nil || n == "0" {
				t.Fatalf("the restarted server holds %s keys (%v): the AOF was not loaded", n, err)
			}
			restOfLoad(began)
			stop()
			rep := r.finish(nil)
			record(t, Row{Scenario: "5 redis-server SIGKILL + restart, appendfsync " + fsync, Rep: rep,
				Recovery: Recovery(up, r.ledger.Entries(), r.traces()),
				Notes:    fmt.Sprintf("down %v (kill to PING); recovery from the restart", fmtDur(up.Sub(killAt)))})
			assertInvariants(t, rep, 0, true)
		})
	}
}

// 6. redis-server paused for 3 s (less than the visibility timeout):
// SIGSTOP of the process, and CLIENT PAUSE ALL.
func TestRedisPause(t *testing.T) {
	const pause = 3 * time.Second
	t.Run("SIGSTOP", func(t *testing.T) {
		srv, url := standalone(t, &redistest.Options{AppendFsync: "everysec"})
		r := newRig(t, url, rigOpts{})
		stop := r.startLoad(loadOpts{})
		warmUp()
		if err := srv.Pause(); err != nil {
			t.Fatal(err)
		}
		waitFor(t, 5*time.Second, "redis-server stopped", func() bool { return procState(srv.PID()) == "T" })
		time.Sleep(pause) // the fault's length
		if err := srv.Resume(); err != nil {
			t.Fatal(err)
		}
		resumed := time.Now()
		restOfLoad(resumed.Add(-loadTime + 3*time.Second))
		stop()
		rep := r.finish(nil)
		record(t, Row{Scenario: "6a redis-server SIGSTOP 3s, SIGCONT", Rep: rep, Recovery: Recovery(resumed, r.ledger.Entries(), r.traces()),
			Notes: "visibility timeout 10s; recovery from SIGCONT"})
		assertInvariants(t, rep, 0, true)
	})
	t.Run("CLIENT_PAUSE", func(t *testing.T) {
		srv, url := standalone(t, &redistest.Options{AppendFsync: "everysec"})
		r := newRig(t, url, rigOpts{})
		stop := r.startLoad(loadOpts{})
		warmUp()
		sent := time.Now()
		if out, err := redistest.Command(srv.Addr, "CLIENT", "PAUSE", strconv.Itoa(int(pause/time.Millisecond)), "ALL"); err != nil || out != "OK" {
			t.Fatalf("CLIENT PAUSE: %q %v", out, err)
		}
		// A PING from another client is held until the pause ends: proof
		// that the pause took effect.
		if _, err := redistest.Command(srv.Addr, "PING"); err != nil {
			t.Fatal(err)
		}
		ended := time.Now()
		if ended.Sub(sent) < pause {
			t.Fatalf("a PING during CLIENT PAUSE answered after %v, before the pause's %v", ended.Sub(sent), pause)
		}
		restOfLoad(ended.Add(-loadTime + 3*time.Second))
		stop()
		rep := r.finish(nil)
		record(t, Row{Scenario: "6b CLIENT PAUSE ALL 3s", Rep: rep, Recovery: Recovery(ended, r.ledger.Entries(), r.traces()),
			Notes: "visibility timeout 10s; recovery from the pause's end"})
		assertInvariants(t, rep, 0, true)
	})
}

// 7. The api and the workers reach Redis through a TCP proxy that resets
// every connection (three times), black-holes them for 3 s, or slows every
// chunk by 50 ms for 3 s.
func TestNetwork(t *testing.T) {
	cases := []struct {
		name   string
		inject func(t *testing.T, px *Proxy) string
	}{
		{"7a connections reset ×3", func(t *testing.T, px *Proxy) string {
			total := 0
			for i := range 3 {
				if i > 0 {
					time.Sleep(time.Second) // spacing of the resets
				}
				n := px.Reset()
				if n == 0 {
					t.Fatal("a reset found no connection open")
				}
				total += n
			}
			return fmt.Sprintf("%d connections reset", total)
		}},
		{"7b black hole 3s", func(t *testing.T, px *Proxy) string {
			px.Blackhole()
			start := time.Now()
			held := 0
			for time.Since(start) < 3*time.Second {
				held = max(held, px.Held())
				time.Sleep(20 * time.Millisecond)
			}
			px.Heal()
			if held == 0 {
				t.Fatal("no traffic tried to cross the black hole")
			}
			return fmt.Sprintf("up to %d chunks held", held)
		}},
		{"7c slowed 50ms per chunk for 3s", func(t *testing.T, px *Proxy) string {
			before := px.Delayed()
			px.Slow(50 * time.Millisecond)
			time.Sleep(3 * time.Second) // the fault's length
			px.Slow(0)
			n := px.Delayed() - before
			if n == 0 {
				t.Fatal("no traffic was slowed")
			}
			return fmt.Sprintf("%d chunks delayed", n)
		}},
	}
	for _, c := range cases {
		t.Run(strings.Fields(c.name)[0], func(t *testing.T) {
			srv, url := standalone(t, &redistest.Options{AppendFsync: "everysec"})
			px, err := NewProxy(srv.Addr)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { px.Close() })
			r := newRig(t, url, rigOpts{procURL: "redis://" + px.Addr})
			stop := r.startLoad(loadOpts{})
			began := time.Now()
			warmUp()
			notes := c.inject(t, px)
			end := time.Now()
			restOfLoad(began)
			stop()
			rep := r.finish(nil)
			record(t, Row{Scenario: c.name, Rep: rep, Recovery: Recovery(end, r.ledger.Entries(), r.traces()),
				Notes: notes + "; api and workers through the proxy; recovery from the fault's end"})
			assertInvariants(t, rep, 0, true)
		})
	}
}

// destroyGroups runs XGROUP DESTROY on every consumer group of the
// queue's band streams and returns how many it destroyed.
func destroyGroups(t *testing.T, addr, ns string) int {
	t.Helper()
	n := 0
	for p := range 10 {
		key := fmt.Sprintf("%s:{%s}:band:%d", ns, queue, p)
		out, err := redistest.Command(addr, "XINFO", "GROUPS", key)
		if err != nil {
			continue // no stream yet
		}
		f := strings.Split(out, "\n")
		for i := 0; i+1 < len(f); i++ {
			if f[i] == "name" {
				if res, err := redistest.Command(addr, "XGROUP", "DESTROY", key, f[i+1]); err == nil && res == "1" {
					n++
				}
			}
		}
	}
	return n
}

// 8. Every consumer group of the queue destroyed under load, twice.
func TestGroupDestroyed(t *testing.T) {
	srv, url := standalone(t, &redistest.Options{AppendFsync: "everysec"})
	r := newRig(t, url, rigOpts{})
	stop := r.startLoad(loadOpts{})
	began := time.Now()
	warmUp()
	destroyed := destroyGroups(t, srv.Addr, r.ns)
	time.Sleep(time.Second) // spacing of the two destructions
	destroyed2 := destroyGroups(t, srv.Addr, r.ns)
	end := time.Now()
	if destroyed == 0 || destroyed2 == 0 {
		t.Fatalf("XGROUP DESTROY destroyed %d then %d groups; want some both times", destroyed, destroyed2)
	}
	restOfLoad(began)
	stop()
	rep := r.finish(nil)
	record(t, Row{Scenario: "8 consumer groups destroyed (XGROUP DESTROY) ×2", Rep: rep, Recovery: Recovery(end, r.ledger.Entries(), r.traces()),
		Notes: fmt.Sprintf("%d then %d groups destroyed; recovery from the second", destroyed, destroyed2)})
	assertInvariants(t, rep, 0, true)
}

// snapshotScript returns, in layout 2 (internal/store's schema), what
// tells each task's status: "H" key status for every task hash matching
// ARGV[1]; "F" ULID status for every packed record; "R" ULID for every
// running task; "E" band entry-id task-id for every band entry (task id ""
// for a task born as its entry). KEYS: the 10 bands, the run hash, the
// finished hash.
const snapshotScript = `local out = {}
local function add(...) for _, v in ipairs({...}) do out[#out + 1] = v end end
for _, k in ipairs(redis.call('KEYS', ARGV[1])) do add('H', k, redis.call('HGET', k, 'status') or '') end
local fin = redis.call('HGETALL', KEYS[12])
for i = 1, #fin, 2 do add('F', fin[i], string.match(fin[i + 1], '^R[3-7]|(%u+)|') or '') end
local run = redis.call('HGETALL', KEYS[11])
for i = 1, #run, 2 do if run[i] ~= '~' then add('R', run[i], '') end end
for p = 0, 9 do
  for _, e in ipairs(redis.call('XRANGE', KEYS[1 + p], '-', '+')) do
    local id = ''
    for j = 1, #e[2], 2 do if e[2][j] == 'i' then id = e[2][j + 1] end end
    add('E', p .. ' ' .. e[1], id)
  end
end
return out`

// flushAll reads the status of every task of the queue and runs FLUSHALL
// in one MULTI/EXEC, so that the snapshot is exactly what the flush
// destroyed. It returns the statuses by task id: a task with neither a
// hash nor a packed record is RUNNING when the run hash holds it, else
// QUEUED (its band entry is all there is of it).
func flushAll(t *testing.T, addr, ns string) map[string]dtq.Status {
	t.Helper()
	c, err := rueidis.NewClient(rueidis.ClientOption{InitAddress: []string{addr}, DisableCache: true})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	k := store.NewKeys(ns, queue)
	prefix := strings.TrimSuffix(k.Task("x"), "x")
	keys := make([]string, 0, 12)
	for p := range 10 {
		keys = append(keys, k.Band(p))
	}
	keys = append(keys, k.Run(), k.Finished())
	ctx := context.Background()
	var snap []string
	err = c.Dedicated(func(dc rueidis.DedicatedClient) error {
		res := dc.DoMulti(ctx,
			dc.B().Multi().Build(),
			dc.B().Eval().Script(snapshotScript).Numkeys(int64(len(keys))).Key(keys...).Arg(prefix+"*").Build(),
			dc.B().Flushall().Build(),
			dc.B().Exec().Build())
		for _, r := range res {
			if err := r.Error(); err != nil {
				return err
			}
		}
		arr, err := res[3].ToArray()
		if err != nil {
			return err
		}
		if len(arr) != 2 {
			return fmt.Errorf("EXEC answered %d replies", len(arr))
		}
		snap, err = arr[0].AsStrSlice()
		return err
	})
	if err != nil {
		t.Fatalf("snapshot and FLUSHALL: %v", err)
	}
	out := map[string]dtq.Status{}
	running := map[string]bool{}
	var entries [][2]string // band+entry id, task id
	for i := 0; i+2 < len(snap); i += 3 {
		switch a, b := snap[i+1], snap[i+2]; snap[i] {
		case "H":
			out[queue+"-"+strings.TrimPrefix(a, prefix)] = dtq.Status(b)
		case "F":
			out[queue+"-"+a] = dtq.Status(b)
		case "R":
			running[queue+"-"+a] = true
		case "E":
			entries = append(entries, [2]string{a, b})
		}
	}
	for _, e := range entries {
		id := e[1]
		if id == "" {
			band, eid, _ := strings.Cut(e[0], " ")
			p, _ := strconv.Atoi(band)
			if id, err = taskid.FromEntry(queue, p, eid); err != nil {
				t.Fatalf("band %d entry %s: %v", p, eid, err)
			}
		}
		if _, ok := out[id]; ok {
			continue
		}
		if running[id] {
			out[id] = dtq.StatusRunning
		} else {
			out[id] = dtq.StatusQueued
		}
	}
	return out
}

// 9. FLUSHALL under load: the data is gone. The service must carry on
// (new submissions run), and the checker must report as lost exactly the
// tasks that were unfinished at the flush.
func TestFlushAll(t *testing.T) {
	srv, url := standalone(t, &redistest.Options{AppendFsync: "everysec"})
	r := newRig(t, url, rigOpts{})
	stop := r.startLoad(loadOpts{})
	began := time.Now()
	warmUp()
	flushed := flushAll(t, srv.Addr, r.ns)
	flushAt := time.Now()
	r.okAfter(flushAt, 10, 30*time.Second)
	restOfLoad(began)
	stop()
	rep := r.finish(flushed)
	var want []string
	unfinished := 0
	for _, s := range r.ledger.Entries() {
		if st, ok := flushed[s.TaskID]; ok && s.Answer == OK && st != dtq.StatusSucceeded {
			want = append(want, s.Key)
		}
	}
	for _, st := range flushed {
		if st != dtq.StatusSucceeded {
			unfinished++
		}
	}
	sort.Strings(want)
	if len(want) == 0 {
		t.Fatalf("no submitted task was unfinished at the flush (%d tasks flushed): the scenario proves nothing", len(flushed))
	}
	if !reflect.DeepEqual(rep.LostKeys, want) {
		t.Errorf("the checker reports %d lost, want exactly the %d unfinished at the flush:\nreported %v\nwant %v\n%s",
			len(rep.LostKeys), len(want), rep.LostKeys, want, strings.Join(rep.Lost, "\n"))
	}
	after := r.ledger.Count(func(s *Submit) bool { return s.Answer == OK && s.First.After(flushAt) })
	record(t, Row{Scenario: "9 FLUSHALL under load", Rep: rep, Recovery: Recovery(flushAt, r.ledger.Entries(), r.traces()),
		Notes: fmt.Sprintf("lost expected: %d tasks flushed, %d unfinished, all %d reported lost are exactly those; %d submitted after the flush all ran",
			len(flushed), unfinished, len(rep.Lost), after)})
	assertInvariants(t, rep, 0, false)
}

// 10. maxmemory reached (noeviction): submissions are refused with a clear
// error — Redis's OOM error from the library (dtq.IsOutOfMemory), 503
// out_of_memory from the API — and
// never answered 2xx for a task that then vanishes. The limit is lifted
// after 1.5 s of refusals (an operator's fix) and everything accepted
// runs.
func TestMaxMemory(t *testing.T) {
	srv, url := standalone(t, &redistest.Options{AppendFsync: "everysec", Args: []string{"--maxmemory-policy", "noeviction"}})
	r := newRig(t, url, rigOpts{})
	pad := strings.Repeat("x", 8<<10)
	stop := r.startLoad(loadOpts{payload: func(n int) Payload { return Payload{SleepMS: 20, Pad: pad} }})
	began := time.Now()
	warmUp()
	used, _ := strconv.Atoi(infoField(t, srv.Addr, "memory", "used_memory"))
	limit := used + 1<<20
	if _, err := redistest.Command(srv.Addr, "CONFIG", "SET", "maxmemory", strconv.Itoa(limit)); err != nil {
		t.Fatal(err)
	}
	// Probes through the library, ledgered like the load.
	var probeErr error
	probe := &LibSubmitter{Client: r.client, Queue: queue, Retry: Retry{Deadline: time.Nanosecond}}
	n := 0
	waitFor(t, 30*time.Second, "a library submit refused with OOM", func() bool {
		n++
		sub := probe.Submit(context.Background(), Payload{Key: fmt.Sprintf("%s-probe-%d", r.ns, n)}, 5)
		r.ledger.Add(sub)
		if sub.Answer == OK {
			return false
		}
		probeErr = fmt.Errorf("%s", sub.Err)
		if sub.Answer != Failed || !IsOOM(probeErr) {
			t.Fatalf("a library submit got %s: %s; want Failed with OOM", sub.Answer, sub.Err)
		}
		return true
	})
	oomAt := time.Now()
	time.Sleep(1500 * time.Millisecond) // the fault's length
	if _, err := redistest.Command(srv.Addr, "CONFIG", "SET", "maxmemory", "0"); err != nil {
		t.Fatal(err)
	}
	lifted := time.Now()
	restOfLoad(began)
	stop()
	api := func(s *Submit) bool { return !strings.Contains(s.Key, "-probe-") }
	const oom = "HTTP 503 out_of_memory"
	refused := r.ledger.Count(func(s *Submit) bool { return api(s) && strings.HasPrefix(s.FirstErr, oom) })
	other := r.ledger.Count(func(s *Submit) bool {
		return api(s) && s.FirstErr != "" && !strings.HasPrefix(s.FirstErr, oom)
	})
	if refused == 0 {
		t.Errorf("no API submission was refused with 503 out_of_memory while Redis was out of memory")
	}
	if other > 0 {
		t.Errorf("%d API submissions got another error than 503 out_of_memory first", other)
	}
	if !strings.Contains(r.api.stderr(), "OOM command not allowed") {
		t.Errorf("the api process did not log the OOM refusal")
	}
	rep := r.finish(nil)
	record(t, Row{Scenario: "10 maxmemory reached (noeviction)", Rep: rep, Recovery: Recovery(lifted, r.ledger.Entries(), r.traces()),
		Notes: fmt.Sprintf("library: %q; API: %d submissions answered 503 out_of_memory first, retried with their key after the limit was lifted (OOM for %v); recovery from the lift",
			probeErr.Error(), refused, fmtDur(lifted.Sub(oomAt)))})
	assertInvariants(t, rep, 0, true)
}
