package redistest

import (
	"bufio"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Cluster is a Redis Cluster of redis-server child processes.
type Cluster struct {
	Nodes []*Server
}

// StartCluster starts masters × (1 + replicas) cluster nodes on free
// loopback ports (each with its bus port, +10000, free too), joins them
// with redis-cli --cluster create, waits until every node reports
// cluster_state:ok and every master has its replicas online, and stops them
// at cleanup.
func StartCluster(t testing.TB, masters, replicas int) *Cluster {
	t.Helper()
	c := &Cluster{}
	t.Cleanup(func() {
		for _, n := range c.Nodes {
			n.Close()
		}
	})
	for range masters * (1 + replicas) {
		s, err := StartServer(&Options{cluster: true, Args: []string{
			"--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf",
			"--cluster-node-timeout", "1000", "--cluster-replica-validity-factor", "0",
		}})
		if err != nil {
			t.Fatalf("start cluster node: %v", err)
		}
		c.Nodes = append(c.Nodes, s)
	}
	args := []string{"--cluster", "create"}
	for _, n := range c.Nodes {
		args = append(args, n.Addr)
	}
	args = append(args, "--cluster-replicas", strconv.Itoa(replicas), "--cluster-yes")
	if out, err := exec.Command("redis-cli", args...).CombinedOutput(); err != nil {
		t.Fatalf("redis-cli --cluster create: %v\n%s", err, out)
	}
	deadline := time.Now().Add(30 * time.Second)
	for _, n := range c.Nodes {
		for {
			info, err := Command(n.Addr, "CLUSTER", "INFO")
			if err == nil && strings.Contains(info, "cluster_state:ok") {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("cluster node %s not ok within 30s: %q %v", n.Addr, info, err)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	// Ready when every master has its replicas online (synced): before
	// that, a write waiting for a replica (durable mode's WAIT) waits for
	// the initial sync.
	for _, n := range c.Nodes {
		for {
			info, err := Command(n.Addr, "INFO", "replication")
			if err == nil && (!strings.Contains(info, "role:master") || strings.Count(info, "state=online") == replicas) {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("cluster node %s: replicas not online within 30s: %q %v", n.Addr, info, err)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	return c
}

// URL is the cluster's dtq URL, every node a seed.
func (c *Cluster) URL() string {
	addrs := make([]string, len(c.Nodes))
	for i, n := range c.Nodes {
		addrs[i] = n.Addr
	}
	return "redis+cluster://" + strings.Join(addrs, ",")
}

// MasterOf returns the node serving key's slot as master, by asking each
// node for its role and slots.
func (c *Cluster) MasterOf(t testing.TB, key string) *Server {
	t.Helper()
	slot, err := Command(c.Nodes[0].Addr, "CLUSTER", "KEYSLOT", key)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range c.Nodes {
		if n.PID() == 0 {
			continue
		}
		// GETKEYSINSLOT answers on any node; the owner is the one that does
		// not redirect a read of the key.
		if _, err := Command(n.Addr, "EXISTS", key); err == nil {
			if role, _ := Command(n.Addr, "ROLE"); strings.HasPrefix(role, "master") {
				return n
			}
		}
	}
	t.Fatalf("no live master serves slot %s", slot)
	return nil
}

// Sentinels is a primary, its replicas and the sentinels watching them,
// all child processes.
type Sentinels struct {
	Master    string // the monitored name
	Primary   *Server
	Replicas  []*Server
	Sentinels []*Server
}

// StartSentinels starts a primary, replicas replicas of it and sentinels
// sentinels (quorum: a majority) monitoring it as "dtqmaster", with a 1 s
// down-after time, and stops them all at cleanup. The failover timeout is
// 15 s (was 5 s): one CI run of fault scenario 12 on the loaded 2-core
// machine ran 7 tasks twice, started on the new primary ~5 s after the
// first failover and delivered again as new a second later — the trace of
// a second failover, which Sentinel starts when it cancels a promotion not
// acknowledged within the failover timeout.
func StartSentinels(t testing.TB, replicas, sentinels int) *Sentinels {
	t.Helper()
	s := &Sentinels{Master: "dtqmaster"}
	t.Cleanup(func() {
		for _, x := range s.Sentinels {
			x.Close()
		}
		for _, x := range append([]*Server{s.Primary}, s.Replicas...) {
			if x != nil {
				x.Close()
			}
		}
	})
	var err error
	if s.Primary, err = StartServer(nil); err != nil {
		t.Fatalf("start primary: %v", err)
	}
	for range replicas {
		r, err := StartServer(&Options{Args: []string{"--replicaof", "127.0.0.1", strconv.Itoa(s.Primary.Port)}})
		if err != nil {
			t.Fatalf("start replica: %v", err)
		}
		s.Replicas = append(s.Replicas, r)
	}
	conf := fmt.Sprintf("sentinel monitor %s 127.0.0.1 %d %d\n"+
		"sentinel down-after-milliseconds %[1]s 1000\n"+
		"sentinel failover-timeout %[1]s 15000\n"+
		"sentinel parallel-syncs %[1]s 1\n", s.Master, s.Primary.Port, sentinels/2+1)
	for range sentinels {
		x, err := StartServer(&Options{sentinel: conf})
		if err != nil {
			t.Fatalf("start sentinel: %v", err)
		}
		s.Sentinels = append(s.Sentinels, x)
	}
	// Ready when every replica is online (synced) at the primary, and every
	// sentinel knows the replicas and the other sentinels.
	deadline := time.Now().Add(30 * time.Second)
	for {
		info, err := Command(s.Primary.Addr, "INFO", "replication")
		if err == nil && strings.Count(info, "state=online") == replicas {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("replicas not online within 30s: %q %v", info, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	for _, x := range s.Sentinels {
		for {
			out, err := Command(x.Addr, "SENTINEL", "MASTER", s.Master)
			if err == nil && field(out, "num-slaves") == strconv.Itoa(replicas) &&
				field(out, "num-other-sentinels") == strconv.Itoa(sentinels-1) {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("sentinel %s not ready within 30s: %q %v", x.Addr, out, err)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	return s
}

// URL is the dtq URL of the monitored master, through every sentinel.
func (s *Sentinels) URL() string {
	addrs := make([]string, len(s.Sentinels))
	for i, x := range s.Sentinels {
		addrs[i] = x.Addr
	}
	return "redis+sentinel://" + strings.Join(addrs, ",") + "/" + s.Master
}

// PrimaryAddr asks the first live sentinel for the current primary.
func (s *Sentinels) PrimaryAddr() (string, error) {
	for _, x := range s.Sentinels {
		out, err := Command(x.Addr, "SENTINEL", "GET-MASTER-ADDR-BY-NAME", s.Master)
		if err == nil {
			host, port, _ := strings.Cut(out, "\n")
			return net.JoinHostPort(host, port), nil
		}
	}
	return "", errors.New("redistest: no sentinel answered")
}

// field finds name in a flattened name\nvalue\n… reply.
func field(reply, name string) string {
	parts := strings.Split(reply, "\n")
	for i := 0; i+1 < len(parts); i += 2 {
		if parts[i] == name {
			return parts[i+1]
		}
	}
	return ""
}

// Command sends one command to addr over a fresh connection and returns its
// reply flattened: a simple or bulk string as is, an integer in decimal, an
// array as its elements (flattened, nested too) joined by newlines. An
// error reply is an error.
func Command(addr string, args ...string) (string, error) {
	c, err := net.DialTimeout("tcp", addr, 2*time.Second)
	if err != nil {
		return "", err
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(5 * time.Second))
	var b strings.Builder
	fmt.Fprintf(&b, "*%d\r\n", len(args))
	for _, a := range args {
		fmt.Fprintf(&b, "$%d\r\n%s\r\n", len(a), a)
	}
	if _, err := c.Write([]byte(b.String())); err != nil {
		return "", err
	}
	var out []string
	if err := readReply(bufio.NewReader(c), &out); err != nil {
		return "", err
	}
	return strings.Join(out, "\n"), nil
}

func readReply(r *bufio.Reader, out *[]string) error {
	line, err := r.ReadString('\n')
	if err != nil {
		return err
	}
	line = strings.TrimSuffix(line, "\r\n")
	if line == "" {
		return errors.New("redistest: empty reply line")
	}
	switch line[0] {
	case '+', ':':
		*out = append(*out, line[1:])
	case '-':
		return errors.New(line[1:])
	case '$':
		n, _ := strconv.Atoi(line[1:])
		if n < 0 {
			*out = append(*out, "")
			return nil
		}
		buf := make([]byte, n+2)
		if _, err := ioReadFull(r, buf); err != nil {
			return err
		}
		*out = append(*out, string(buf[:n]))
	case '*':
		n, _ := strconv.Atoi(line[1:])
		for range max(n, 0) {
			if err := readReply(r, out); err != nil {
				return err
			}
		}
	default:
		return fmt.Errorf("redistest: unexpected reply %q", line)
	}
	return nil
}

func ioReadFull(r *bufio.Reader, buf []byte) (int, error) {
	n := 0
	for n < len(buf) {
		m, err := r.Read(buf[n:])
		n += m
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

// writeSentinelConf writes a sentinel's config file (it must be writable:
// sentinels record what they learn in it) and returns its path.
func writeSentinelConf(dir, conf string) (string, error) {
	p := filepath.Join(dir, "sentinel.conf")
	return p, os.WriteFile(p, []byte(conf), 0o600)
}
