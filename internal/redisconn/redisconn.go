// Package redisconn turns a Redis URL into a connected, checked client. It is
// the one place dtq reads Redis connection settings.
//
//	redis://[user[:password]@]host[:port][/db]          one server
//	rediss://…                                          the same over TLS
//	redis+cluster://[user[:password]@]host:port[,host:port…]
//	                                                    Redis Cluster: any nodes as seeds
//	redis+sentinel://[user[:password]@]host:port[,host:port…]/master[/db]
//	                                                    Sentinel: the sentinels and the
//	                                                    master's name
//	rediss+cluster://…, rediss+sentinel://…             the same over TLS
//
// Query parameters: tls_ca=FILE (a PEM CA bundle for rediss forms, instead of
// the system roots), tls_server_name=NAME, and for Sentinel
// sentinel_user=NAME and sentinel_password=PASSWORD (the user and password in
// the URL are the data nodes'). Hosts are names or IPv4 addresses (an IPv6
// literal works only alone, in brackets).
package redisconn

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/redis/rueidis"
)

// ErrVersion is returned when the server is older than Redis 7.0.
var ErrVersion = errors.New("redisconn: unsupported Redis version")

// MinMajor is the oldest supported Redis major version.
const MinMajor = 7

// SentinelRefresh is how often a Sentinel client asks the sentinels which
// node is the master, besides following their failover events.
const SentinelRefresh = time.Second

// Topology is the kind of deployment a URL names.
type Topology string

// Topologies.
const (
	Standalone Topology = "standalone"
	Cluster    Topology = "cluster"
	Sentinel   Topology = "sentinel"
)

// Parsed is a checked Redis URL.
type Parsed struct {
	Topology Topology
	Option   rueidis.ClientOption
}

// Options turns url into client options. It validates the URL (and reads a
// tls_ca file) but does not connect.
func Options(rawURL string) (rueidis.ClientOption, error) {
	p, err := Parse(rawURL)
	return p.Option, err
}

// Parse turns url into its topology and client options, without
// connecting.
func Parse(rawURL string) (Parsed, error) {
	// The host list of a Cluster or Sentinel URL is no URL host: take it
	// out, and parse the rest with a placeholder host.
	hostList := ""
	parseable := rawURL
	if scheme, rest, ok := strings.Cut(rawURL, "://"); ok {
		end := strings.IndexAny(rest, "/?#")
		if end < 0 {
			end = len(rest)
		}
		auth := rest[:end]
		user := ""
		if at := strings.LastIndexByte(auth, '@'); at >= 0 {
			user, auth = auth[:at+1], auth[at+1:]
		}
		hostList = auth
		parseable = scheme + "://" + user + "placeholder" + rest[end:]
	}
	u, err := url.Parse(parseable)
	if err != nil {
		// A *url.Error quotes the whole URL, password included: keep only
		// its reason.
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return Parsed{}, fmt.Errorf("redisconn: invalid Redis URL: %w", err)
	}
	var topo Topology
	tlsOn := false
	switch u.Scheme {
	case "redis":
		topo = Standalone
	case "rediss":
		topo, tlsOn = Standalone, true
	case "redis+cluster":
		topo = Cluster
	case "rediss+cluster":
		topo, tlsOn = Cluster, true
	case "redis+sentinel":
		topo = Sentinel
	case "rediss+sentinel":
		topo, tlsOn = Sentinel, true
	case "":
		return Parsed{}, fmt.Errorf("redisconn: invalid Redis URL %q: want redis://host:port, redis+cluster://host:port,… or redis+sentinel://host:port,…/master", Redact(rawURL))
	default:
		return Parsed{}, fmt.Errorf("redisconn: invalid Redis URL scheme %q: want redis://, rediss://, redis+cluster://, rediss+cluster://, redis+sentinel:// or rediss+sentinel://", u.Scheme)
	}
	addrs, err := hosts(hostList, topo)
	if err != nil {
		return Parsed{}, fmt.Errorf("redisconn: invalid Redis URL %q: %w", Redact(rawURL), err)
	}
	opt := rueidis.ClientOption{InitAddress: addrs, DisableCache: true}
	if u.User != nil {
		opt.Username = u.User.Username()
		opt.Password, _ = u.User.Password()
	}
	path := strings.Trim(u.Path, "/")
	if topo == Sentinel {
		master, rest, _ := strings.Cut(path, "/")
		if master == "" {
			return Parsed{}, fmt.Errorf("redisconn: invalid Redis URL %q: a Sentinel URL names the master: redis+sentinel://host:port,…/master", Redact(rawURL))
		}
		opt.Sentinel.MasterSet = master
		// Besides the sentinels' +switch-master events, ask them for the
		// master every second: a missed event would otherwise bind the
		// client to a demoted master until restart (the fault suite saw
		// writes go to the old primary for seconds after a failover).
		opt.Sentinel.TopologyRefreshInterval = SentinelRefresh
		path = rest
	}
	if path != "" {
		if topo == Cluster {
			return Parsed{}, fmt.Errorf("redisconn: invalid Redis URL %q: Redis Cluster has only database 0", Redact(rawURL))
		}
		db, err := strconv.Atoi(path)
		if err != nil || db < 0 {
			return Parsed{}, fmt.Errorf("redisconn: invalid Redis URL %q: database %q is not a number", Redact(rawURL), path)
		}
		opt.SelectDB = db
	}
	q := u.Query()
	for name := range q {
		switch name {
		case "tls_ca", "tls_server_name":
			if !tlsOn {
				return Parsed{}, fmt.Errorf("redisconn: invalid Redis URL %q: %s needs a rediss scheme", Redact(rawURL), name)
			}
		case "sentinel_user", "sentinel_password":
			if topo != Sentinel {
				return Parsed{}, fmt.Errorf("redisconn: invalid Redis URL %q: %s is for Sentinel URLs", Redact(rawURL), name)
			}
		default:
			return Parsed{}, fmt.Errorf("redisconn: invalid Redis URL %q: unknown parameter %q (known: tls_ca, tls_server_name, sentinel_user, sentinel_password)", Redact(rawURL), name)
		}
	}
	if tlsOn {
		cfg := &tls.Config{MinVersion: tls.VersionTLS12, ServerName: q.Get("tls_server_name")}
		if cfg.ServerName == "" && topo == Standalone {
			cfg.ServerName, _, _ = net.SplitHostPort(addrs[0])
		}
		if ca := q.Get("tls_ca"); ca != "" {
			pem, err := os.ReadFile(ca)
			if err != nil {
				return Parsed{}, fmt.Errorf("redisconn: tls_ca: %w", err)
			}
			cfg.RootCAs = x509.NewCertPool()
			if !cfg.RootCAs.AppendCertsFromPEM(pem) {
				return Parsed{}, fmt.Errorf("redisconn: tls_ca %s: no PEM certificate in it", ca)
			}
		}
		opt.TLSConfig = cfg
	}
	switch topo {
	case Standalone:
		opt.ForceSingleClient = true
	case Cluster:
		opt.ShuffleInit = true
	case Sentinel:
		opt.Sentinel.Username = q.Get("sentinel_user")
		opt.Sentinel.Password = q.Get("sentinel_password")
		if tlsOn {
			opt.Sentinel.TLSConfig = opt.TLSConfig
		}
	}
	return Parsed{Topology: topo, Option: opt}, nil
}

// hostName reports whether s is a plausible DNS name.
func hostName(s string) bool {
	for _, c := range s {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

// hosts splits a URL's host list into addresses with ports (6379, or 26379
// for sentinels, when none is given).
func hosts(list string, topo Topology) ([]string, error) {
	if list == "" {
		return nil, errors.New("no host")
	}
	defPort := "6379"
	if topo == Sentinel {
		defPort = "26379"
	}
	var out []string
	for _, h := range strings.Split(list, ",") {
		if h == "" {
			return nil, errors.New("an empty host in the list")
		}
		host, port, err := net.SplitHostPort(h)
		if err != nil {
			host, port = strings.Trim(h, "[]"), defPort
		}
		if host == "" {
			return nil, errors.New("no host")
		}
		if net.ParseIP(host) == nil && !hostName(host) {
			return nil, fmt.Errorf("host %q is not a name or an IP address", host)
		}
		if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
			return nil, fmt.Errorf("host %q: bad port", h)
		}
		out = append(out, net.JoinHostPort(host, port))
	}
	if topo == Standalone && len(out) > 1 {
		return nil, errors.New("several hosts: use redis+cluster:// for Redis Cluster or redis+sentinel:// for Sentinel")
	}
	return out, nil
}

// Connect connects to the Redis at rawURL and checks that it is Redis 7.0 or
// newer (or Valkey 7.2 or newer, which reports a Redis 7 version).
func Connect(ctx context.Context, rawURL string) (rueidis.Client, error) {
	opt, err := Options(rawURL)
	if err != nil {
		return nil, err
	}
	c, err := rueidis.NewClient(opt)
	if err != nil {
		return nil, fmt.Errorf("redisconn: connect to %s: %w", Redact(rawURL), err)
	}
	if err := CheckVersion(ctx, c); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

// CheckVersion asks the server for its version and refuses anything older
// than Redis 7.0: on 6.2, XAUTOCLAIM and XCLAIM answer differently.
func CheckVersion(ctx context.Context, c rueidis.Client) error {
	info, err := c.Do(ctx, c.B().Info().Section("server").Build()).ToString()
	if err != nil {
		return fmt.Errorf("redisconn: INFO server: %w", err)
	}
	v := infoField(info, "redis_version")
	major, err := majorVersion(v)
	if err != nil {
		return fmt.Errorf("%w: cannot read redis_version %q", ErrVersion, v)
	}
	if major < MinMajor {
		return fmt.Errorf("%w: server is Redis %s; dtq needs Redis 7.0 or newer (or Valkey 7.2+): "+
			"before 7.0 XAUTOCLAIM and XCLAIM answer differently", ErrVersion, v)
	}
	return nil
}

func infoField(info, name string) string {
	for _, line := range strings.Split(info, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), name+":"); ok {
			return v
		}
	}
	return ""
}

func majorVersion(v string) (int, error) {
	head, _, _ := strings.Cut(v, ".")
	return strconv.Atoi(head)
}

// Redact hides the passwords of a URL — its user part's and a
// sentinel_password parameter's — for logs and error messages.
func Redact(rawURL string) string {
	u, err := url.Parse(rawURL)
	if err != nil {
		return "(invalid URL)"
	}
	if q := u.Query(); q.Has("sentinel_password") {
		q.Set("sentinel_password", "xxxxx")
		u.RawQuery = q.Encode()
	}
	return u.Redacted()
}

// Warning is a server setting that puts accepted work at risk.
type Warning struct {
	Node    string
	Problem string
}

// TornAOFProblem is the warning of an AOF loaded with aof-load-truncated
// yes. A transition is one script, written to the AOF as one MULTI/EXEC
// block; a write(2) cut short (Redis SIGKILLed in the middle of it, a
// machine lost) tears the block. Redis (7.0.15 checked) then cuts the file
// after the block's last whole command instead of before its MULTI, keeps
// serving, appends after it, and the first restart after a transaction
// written since applies the torn block's first commands with that one: half
// a transition,
// such as a task's history row and dead letter without the count of its
// queue's totals. redis-check-aof --fix cuts the unfinished block whole.
const TornAOFProblem = "aof-load-truncated is yes: after an AOF write cut short (Redis killed, or the machine lost, while writing) " +
	"Redis keeps half of a transaction in the file and applies it at a later restart: half of a task's transition " +
	"(its history row or dead letter without the queue's totals, a task listed twice, a task QUEUED with no entry to run); " +
	"set aof-load-truncated no and repair a file Redis refuses with redis-check-aof --fix, which cuts the unfinished transaction whole"

// CheckSettings reads every node's INFO (memory, persistence) and reports
// settings that put accepted work at risk: a maxmemory-policy other than
// noeviction (Redis may evict tasks), no AOF (a restart loses everything
// since the last snapshot) and, with AOF, aof-load-truncated yes (Redis's
// default: TornAOFProblem; read with CONFIG GET, skipped where CONFIG is not
// allowed). It reports, it does not refuse: operators may accept the risk.
func CheckSettings(ctx context.Context, c rueidis.Client) ([]Warning, error) {
	var out []Warning
	for addr, node := range c.Nodes() {
		info, err := node.Do(ctx, node.B().Info().Section("memory").Section("persistence").Build()).ToString()
		if err != nil {
			return out, fmt.Errorf("redisconn: INFO of %s: %w", addr, err)
		}
		if p := infoField(info, "maxmemory_policy"); p != "" && p != "noeviction" {
			out = append(out, Warning{addr, fmt.Sprintf("maxmemory-policy is %s: under memory pressure Redis evicts keys, tasks included; use noeviction", p)})
		}
		if infoField(info, "aof_enabled") == "0" {
			out = append(out, Warning{addr, "appendonly is off: a restart loses what was written since the last snapshot; turn on AOF (appendonly yes)"})
		} else if v, err := node.Do(ctx, node.B().ConfigGet().Parameter("aof-load-truncated").Build()).AsStrMap(); err == nil &&
			v["aof-load-truncated"] == "yes" {
			out = append(out, Warning{addr, TornAOFProblem})
		}
	}
	return out, nil
}
