//go:build faults

package faults

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/dtq-dev/dtq"
	"github.com/dtq-dev/dtq/internal/redisconn"
	"github.com/dtq-dev/dtq/internal/redistest"
	"github.com/dtq-dev/dtq/internal/store"
)

// 16. Schedules under faults: a schedule of @every 1s (catch_up) on a
// Sentinel deployment, three `dtq worker` processes competing for the
// queue's scheduler lock; after ~15 ticks the leader is SIGKILLed, later
// the primary is SIGKILLed and the sentinels fail over. Over at least 60
// ticks, every tick from the first to the last has exactly one task.
func TestScheduleTicksUnderFaults(t *testing.T) {
	s := redistest.StartSentinels(t, 2, 3)
	dir := t.TempDir()
	ns := redistest.Namespace(t)
	const q = "sched"
	file := filepath.Join(dir, "schedules.yaml")
	if err := os.WriteFile(file, []byte("schedules:\n  - name: beat\n    queue: "+q+"\n    cron: \"@every 1s\"\n    task_type: echo\n    missed: catch_up\n    catch_up_max: 100\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	rc, err := redisconn.Connect(ctx, s.URL())
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	c, err := dtq.NewClient(redisconn.Wrap(rc), &dtq.Config{Namespace: ns})
	if err != nil {
		t.Fatal(err)
	}
	procs := map[int]*proc{}
	for i := range 3 {
		p, _ := startProc(t, dir, fmt.Sprintf("sched%d", i+1), bins.dtq, []string{"worker", "--redis", s.URL(), "--namespace", ns,
			"--queues", q, "--schedules", file, "--addr", "127.0.0.1:0", "--shutdown-timeout", "2s"}, true,
			func(l string) bool { return strings.Contains(l, `"msg":"dtq is ready"`) })
		procs[p.cmd.Process.Pid] = p
	}
	// leader returns the process holding the queue's scheduler lock.
	leader := func() *proc {
		owner, err := rc.Do(ctx, rc.B().Get().Key(store.NewKeys(ns, q).SchedulerLock()).Build()).ToString()
		if err != nil {
			return nil
		}
		ws, err := dtq.NewAdmin(c).Workers(ctx)
		if err != nil {
			return nil
		}
		for _, w := range ws {
			if w.ID == owner {
				return procs[w.PID]
			}
		}
		return nil
	}
	ticks := func() map[int64]int {
		out := map[int64]int{}
		var cursor string
		for {
			page, err := c.List(ctx, dtq.ListOpts{Queue: q, Limit: 500, Cursor: cursor})
			if err != nil {
				return nil // Redis failing over: the caller asks again
			}
			for _, task := range page.Tasks {
				if task.Schedule == "beat" && task.ScheduleTick != nil {
					out[task.ScheduleTick.UnixMilli()]++
				}
			}
			if page.Next == "" {
				return out
			}
			cursor = page.Next
		}
	}
	waitTicks := func(n int, what string) {
		waitFor(t, 90*time.Second, what, func() bool { return len(ticks()) >= n })
	}
	waitTicks(15, "15 ticks fired")
	var l *proc
	waitFor(t, 10*time.Second, "the scheduler's leader", func() bool { l = leader(); return l != nil })
	if err := l.signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	killedLeader := time.Now()
	waitFor(t, 30*time.Second, "another leader", func() bool { n := leader(); return n != nil && n != l })
	tookOver := time.Now()
	waitTicks(30, "30 ticks fired")

	old := s.Primary.Addr
	killedPrimary := time.Now()
	if err := s.Primary.Kill(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 60*time.Second, "the sentinels failed over", func() bool {
		addr, err := s.PrimaryAddr()
		if err != nil || addr == old {
			return false
		}
		role, err := redistest.Command(addr, "ROLE")
		return err == nil && strings.HasPrefix(role, "master")
	})
	failedOver := time.Now()
	waitTicks(62, "62 ticks fired")

	got := ticks()
	first, last := int64(-1), int64(-1)
	for tick := range got {
		if first < 0 || tick < first {
			first = tick
		}
		if tick > last {
			last = tick
		}
	}
	var missing, doubled []string
	for tick := first; tick <= last; tick += 1000 {
		switch n := got[tick]; {
		case n == 0:
			missing = append(missing, time.UnixMilli(tick).UTC().Format("15:04:05"))
		case n > 1:
			doubled = append(doubled, fmt.Sprintf("%s×%d", time.UnixMilli(tick).UTC().Format("15:04:05"), n))
		}
	}
	if first%1000 != 0 || last%1000 != 0 {
		t.Errorf("ticks not on whole seconds: first %d, last %d", first, last)
	}
	n := int((last-first)/1000) + 1
	record(t, Row{Scenario: "16 schedule @every 1s, 3 scheduler processes: leader SIGKILLed, Sentinel failover",
		Rep: &Report{Submitted: n, OK: n - len(missing), Lost: missing, Duplicated: len(doubled)}, Recovery: -1,
		Notes: fmt.Sprintf("%d ticks (%s..%s UTC), missing %d, more than one task %d; leader killed → new leader %v; primary killed → failover %v",
			n, time.UnixMilli(first).UTC().Format("15:04:05"), time.UnixMilli(last).UTC().Format("15:04:05"), len(missing), len(doubled),
			fmtDur(tookOver.Sub(killedLeader)), fmtDur(failedOver.Sub(killedPrimary)))})
	if n < 60 {
		t.Errorf("only %d ticks between the first and the last", n)
	}
	if len(missing) > 0 || len(doubled) > 0 {
		t.Errorf("ticks missing: %v; ticks with more than one task: %v", missing, doubled)
	}
}
