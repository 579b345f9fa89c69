//go:build faults

package faults

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/dtq-dev/dtq/internal/redistest"
)

// liveMaster returns the live node that serves key as master, or nil.
func liveMaster(c *redistest.Cluster, key string) *redistest.Server {
	for _, n := range c.Nodes {
		if n.PID() == 0 {
			continue
		}
		if _, err := redistest.Command(n.Addr, "EXISTS", key); err != nil {
			continue // MOVED, CLUSTERDOWN…
		}
		if role, _ := redistest.Command(n.Addr, "ROLE"); strings.HasPrefix(role, "master") {
			return n
		}
	}
	return nil
}

// 11. Redis Cluster (3 masters, 3 replicas), durable mode (one replica
// must have every submission and outcome): the master serving the queue's
// slot is SIGKILLed under load; its replica takes over; the old master is
// restarted and rejoins as the new master's replica (so durable writes of
// that shard can be acknowledged again).
func TestClusterMasterKilled(t *testing.T) {
	c := redistest.StartCluster(t, 3, 1)
	r := newRig(t, c.URL(), rigOpts{durable: 1})
	stop := r.startLoad(loadOpts{})
	warmUp()
	key := fmt.Sprintf("%s:{%s}:info", r.ns, queue)
	old := liveMaster(c, key)
	if old == nil {
		t.Fatal("no master serves the queue's slot")
	}
	killAt := time.Now()
	if err := old.Kill(); err != nil || old.PID() != 0 {
		t.Fatalf("SIGKILL of the master: %v", err)
	}
	var promoted *redistest.Server
	waitFor(t, 30*time.Second, "a replica promoted for the queue's slot", func() bool {
		promoted = liveMaster(c, key)
		return promoted != nil && promoted != old
	})
	failedOver := time.Now()
	if err := old.Restart(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 30*time.Second, "the old master rejoined as a replica", func() bool {
		info, err := redistest.Command(promoted.Addr, "INFO", "replication")
		return err == nil && strings.Contains(info, "connected_slaves:1") && strings.Contains(info, "state=online")
	})
	rejoined := time.Now()
	r.okAfter(rejoined, 20, 30*time.Second)
	stop()
	rep := r.finish(nil)
	record(t, Row{Scenario: "11 Cluster 3+3, durable: master SIGKILLed", Rep: rep, Recovery: Recovery(failedOver, r.ledger.Entries(), r.traces()),
		Notes: fmt.Sprintf("--durable-replicas 1; kill → replica promoted %v; old master back as replica %v later; recovery from the promotion",
			fmtDur(failedOver.Sub(killAt)), fmtDur(rejoined.Sub(failedOver)))})
	assertInvariants(t, rep, 0, true)
}

// 12. Sentinel (a primary, 2 replicas, 3 sentinels), durable mode with
// every replica (--durable-replicas 2): the primary is SIGKILLed under
// load; the sentinels fail over to a replica and point the other replica
// at it; the old primary is restarted and rejoins as a replica (so that
// durable writes can be acknowledged again). With fewer durable replicas
// than replicas, the sentinels may promote one that lacks an acknowledged
// write (docs/failure-modes.md): not what this scenario holds dtq to.
func TestSentinelFailover(t *testing.T) {
	s := redistest.StartSentinels(t, 2, 3)
	r := newRig(t, s.URL(), rigOpts{durable: 2})
	stop := r.startLoad(loadOpts{})
	warmUp()
	old := s.Primary.Addr
	killAt := time.Now()
	if err := s.Primary.Kill(); err != nil || s.Primary.PID() != 0 {
		t.Fatalf("SIGKILL of the primary: %v", err)
	}
	var primary string
	waitFor(t, 60*time.Second, "the sentinels failed over", func() bool {
		addr, err := s.PrimaryAddr()
		if err != nil || addr == old {
			return false
		}
		primary = addr
		role, err := redistest.Command(addr, "ROLE")
		return err == nil && strings.HasPrefix(role, "master")
	})
	failedOver := time.Now()
	// Back as a replica, as docs/failure-modes.md's checklist says (the
	// sentinels would reconfigure it too, ~10 s later).
	if err := s.Primary.Restart(); err != nil {
		t.Fatal(err)
	}
	host, port, _ := strings.Cut(primary, ":")
	if _, err := redistest.Command(old, "REPLICAOF", host, port); err != nil {
		t.Fatalf("REPLICAOF on the old primary: %v", err)
	}
	waitFor(t, 60*time.Second, "the other replica and the old primary following the new primary", func() bool {
		info, err := redistest.Command(primary, "INFO", "replication")
		return err == nil && strings.Count(info, "state=online") == 2
	})
	replicated := time.Now()
	r.okAfter(replicated, 20, 30*time.Second)
	stop()
	rep := r.finish(nil)
	record(t, Row{Scenario: "12 Sentinel 1+2, durable: primary SIGKILLed, failover", Rep: rep, Recovery: Recovery(failedOver, r.ledger.Entries(), r.traces()),
		Notes: fmt.Sprintf("--durable-replicas 2; kill → new primary %v; both replicas (the old primary restarted) online %v later; recovery from the failover",
			fmtDur(failedOver.Sub(killAt)), fmtDur(replicated.Sub(failedOver)))})
	assertInvariants(t, rep, 0, true)
}
