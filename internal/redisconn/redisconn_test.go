package redisconn_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dtq-dev/dtq/internal/redisconn"
	"github.com/dtq-dev/dtq/internal/redistest"
	"github.com/redis/rueidis"
)

// connectTimeout bounds every Connect in these tests; generous for a loaded
// machine, it only matters when something is broken.
const connectTimeout = 30 * time.Second

func connectCtx(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), connectTimeout)
	t.Cleanup(cancel)
	return ctx
}

func TestOptionsAccepts(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		url      string
		addr     string
		tls      bool
		user     string
		password string
		db       int
	}{
		{url: "redis://example.com:6380", addr: "example.com:6380"},
		{url: "redis://example.com", addr: "example.com:6379"},
		{url: "rediss://example.com:6380", addr: "example.com:6380", tls: true},
		{url: "redis://alice:secret@example.com:6380/3", addr: "example.com:6380", user: "alice", password: "secret", db: 3},
		{url: "rediss://alice:secret@example.com:6380/15", addr: "example.com:6380", tls: true, user: "alice", password: "secret", db: 15},
		{url: "redis://:secret@example.com:6380", addr: "example.com:6380", password: "secret"},
		{url: "redis://alice:p%40ss%3Aword@example.com:6380", addr: "example.com:6380", user: "alice", password: "p@ss:word"},
		{url: "redis://[::1]:6380/2", addr: "[::1]:6380", db: 2},
	} {
		t.Run(tc.url, func(t *testing.T) {
			t.Parallel()
			opt, err := redisconn.Options(tc.url)
			if err != nil {
				t.Fatalf("Options(%q): %v", tc.url, err)
			}
			if len(opt.InitAddress) != 1 || opt.InitAddress[0] != tc.addr {
				t.Errorf("InitAddress = %q, want [%q]", opt.InitAddress, tc.addr)
			}
			if got := opt.TLSConfig != nil; got != tc.tls {
				t.Errorf("TLS = %v, want %v", got, tc.tls)
			}
			if tc.tls && opt.TLSConfig.ServerName != "example.com" {
				t.Errorf("TLS ServerName = %q, want example.com", opt.TLSConfig.ServerName)
			}
			if opt.Username != tc.user || opt.Password != tc.password {
				t.Errorf("user/password = %q/%q, want %q/%q", opt.Username, opt.Password, tc.user, tc.password)
			}
			if opt.SelectDB != tc.db {
				t.Errorf("SelectDB = %d, want %d", opt.SelectDB, tc.db)
			}
			if !opt.DisableCache || !opt.ForceSingleClient {
				t.Errorf("DisableCache=%v ForceSingleClient=%v, want both true", opt.DisableCache, opt.ForceSingleClient)
			}
		})
	}
}

func TestOptionsRejects(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		url  string
		want string // substring of the error
	}{
		{url: "", want: "want redis://host:port"},
		{url: "not a url", want: "want redis://host:port"},
		{url: "::garbage", want: "invalid Redis URL"},
		{url: "127.0.0.1:6379", want: "invalid Redis URL"},
		{url: "redis://host:notaport", want: "invalid Redis URL"},
		{url: "http://example.com:6379", want: `scheme "http"`},
		{url: "unix:///tmp/redis.sock", want: `scheme "unix"`},
		{url: "valkey://example.com:6379", want: `scheme "valkey"`},
		{url: "redis://", want: "no host"},
		{url: "redis:///0", want: "no host"},
		{url: "rediss://", want: "no host"},
		{url: "redis://:6380", want: "no host"},
		{url: "redis://alice:secret@:6380/1", want: "no host"},
		{url: "redis://example.com:6379/abc", want: "is not a number"},
		{url: "redis://example.com:6379/0/1", want: "is not a number"},
		{url: "redis://a:1,b:2", want: "use redis+cluster://"},
		{url: "redis://example.com?addr=b:2", want: `unknown parameter "addr"`},
		{url: "redis://example.com?tls_ca=/x", want: "needs a rediss scheme"},
		{url: "redis-cluster://example.com:7000", want: `scheme "redis-cluster"`},
		{url: "redis+cluster://a:1,,b:2", want: "empty host"},
		{url: "redis+cluster://a:1/3", want: "only database 0"},
		{url: "redis+cluster://a:1?sentinel_user=x", want: "for Sentinel URLs"},
		{url: "redis+sentinel://a:26379", want: "names the master"},
		{url: "redis+sentinel://a:26379/m/x", want: "is not a number"},
		{url: "rediss://example.com?tls_ca=/nonexistent/ca.pem", want: "tls_ca"},
	} {
		t.Run(tc.url, func(t *testing.T) {
			t.Parallel()
			_, err := redisconn.Options(tc.url)
			if err == nil {
				t.Fatalf("Options(%q) = nil error, want one containing %q", tc.url, tc.want)
			}
			if !strings.HasPrefix(err.Error(), "redisconn: ") || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Options(%q) = %q, want a redisconn: error containing %q", tc.url, err, tc.want)
			}
		})
	}
}

func TestParseTopologies(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		url    string
		topo   redisconn.Topology
		addrs  []string
		master string
		db     int
		tls    bool
		sUser  string
		sPass  string
		user   string
		pass   string
	}{
		{url: "redis+cluster://a:7000,b:7001,c", topo: redisconn.Cluster, addrs: []string{"a:7000", "b:7001", "c:6379"}},
		{url: "rediss+cluster://alice:pw@a:7000", topo: redisconn.Cluster, addrs: []string{"a:7000"}, tls: true, user: "alice", pass: "pw"},
		{url: "redis+sentinel://s1,s2:26380/mymaster", topo: redisconn.Sentinel, addrs: []string{"s1:26379", "s2:26380"}, master: "mymaster"},
		{url: "redis+sentinel://u:p@s1:26379/mymaster/2?sentinel_user=su&sentinel_password=sp", topo: redisconn.Sentinel,
			addrs: []string{"s1:26379"}, master: "mymaster", db: 2, user: "u", pass: "p", sUser: "su", sPass: "sp"},
		{url: "rediss+sentinel://s1:26379/m?tls_server_name=redis.internal", topo: redisconn.Sentinel, addrs: []string{"s1:26379"}, master: "m", tls: true},
		{url: "redis://h:1/4", topo: redisconn.Standalone, addrs: []string{"h:1"}, db: 4},
	} {
		t.Run(tc.url, func(t *testing.T) {
			t.Parallel()
			p, err := redisconn.Parse(tc.url)
			if err != nil {
				t.Fatal(err)
			}
			o := p.Option
			if p.Topology != tc.topo || strings.Join(o.InitAddress, " ") != strings.Join(tc.addrs, " ") ||
				o.Sentinel.MasterSet != tc.master || o.SelectDB != tc.db || (o.TLSConfig != nil) != tc.tls ||
				o.Username != tc.user || o.Password != tc.pass || o.Sentinel.Username != tc.sUser || o.Sentinel.Password != tc.sPass {
				t.Fatalf("Parse(%q) = %s %q master %q db %d tls %v user %q/%q sentinel %q/%q", tc.url, p.Topology, o.InitAddress,
					o.Sentinel.MasterSet, o.SelectDB, o.TLSConfig != nil, o.Username, o.Password, o.Sentinel.Username, o.Sentinel.Password)
			}
			if o.ForceSingleClient != (tc.topo == redisconn.Standalone) || !o.DisableCache {
				t.Fatalf("ForceSingleClient %v DisableCache %v", o.ForceSingleClient, o.DisableCache)
			}
			if (o.Sentinel.TopologyRefreshInterval > 0) != (tc.topo == redisconn.Sentinel) {
				t.Fatalf("Sentinel topology refresh every %v on a %s URL", o.Sentinel.TopologyRefreshInterval, p.Topology)
			}
			if tc.topo == redisconn.Sentinel && tc.tls && o.Sentinel.TLSConfig == nil {
				t.Fatal("sentinels without TLS on a rediss+sentinel URL")
			}
		})
	}
}

// TestErrorsHidePassword: a URL's password must never reach an error
// message, which dtq prints to stderr and logs.
func TestErrorsHidePassword(t *testing.T) {
	t.Parallel()
	const pw = "s3cr3tpw"
	for _, u := range []string{
		"redis://alice:" + pw + "@",
		"redis://alice:" + pw + "@/0",
		"redis://:" + pw + "@:6380",
		"//alice:" + pw + "@example.com:6379",
		"redis://alice:" + pw + "@example.com:notaport",
		"redis://alice:" + pw + "@exa%zzmple.com:6379",
		"redis://alice:" + pw + "@example.com:6379/abc",
		"redis+cluster://alice:" + pw + "@example.com:7000/3",
		"redis+sentinel://alice:" + pw + "@example.com:26379",
		"redis://alice:" + pw + "@example.com:6379?master_set=m",
	} {
		t.Run(u, func(t *testing.T) {
			t.Parallel()
			_, err := redisconn.Options(u)
			if err == nil {
				t.Fatalf("Options(%q) = nil error, want one", u)
			}
			if strings.Contains(err.Error(), pw) {
				t.Errorf("Options(%q) error reveals the password: %q", u, err)
			}
		})
	}
	t.Run("connect refused", func(t *testing.T) {
		t.Parallel()
		addr := closedAddr(t)
		_, err := redisconn.Connect(connectCtx(t), "redis://alice:"+pw+"@"+addr)
		if err == nil {
			t.Fatalf("Connect to closed port %s succeeded", addr)
		}
		if strings.Contains(err.Error(), pw) {
			t.Errorf("Connect error reveals the password: %q", err)
		}
		if !strings.Contains(err.Error(), addr) {
			t.Errorf("Connect error %q does not name the address %s", err, addr)
		}
	})
}

// closedAddr returns a loopback address nothing listens on.
func closedAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}

func TestConnectRealRedis(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t, nil)
	ctx := connectCtx(t)
	c, err := redisconn.Connect(ctx, "redis://"+srv.Addr+"/2")
	if err != nil {
		t.Fatalf("Connect to redis-server %s: %v", srv.Addr, err)
	}
	t.Cleanup(c.Close)
	if err := redisconn.CheckVersion(ctx, c); err != nil {
		t.Errorf("CheckVersion on redis-server 7: %v", err)
	}
	if got, err := c.Do(ctx, c.B().Ping().Build()).ToString(); err != nil || got != "PONG" {
		t.Fatalf("PING = %q, %v", got, err)
	}
	// The /2 in the URL selected database 2 on the real server.
	info, err := c.Do(ctx, c.B().ClientInfo().Build()).ToString()
	if err != nil {
		t.Fatalf("CLIENT INFO: %v", err)
	}
	if !strings.Contains(" "+info+" ", " db=2 ") {
		t.Errorf("CLIENT INFO = %q, want db=2", info)
	}
}

// CheckSettings warns of no AOF, and of an AOF loaded with
// aof-load-truncated yes (Redis's default), which can apply half a
// transition after a torn write (TornAOFProblem; the store's
// TestTornFinishInTheAOF shows it); not of aof-load-truncated no, nor where
// CONFIG is not allowed.
func TestCheckSettingsAOF(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name      string
		opts      *redistest.Options
		user      string
		off, torn bool
	}{
		{name: "no AOF", opts: nil, off: true},
		{name: "AOF, aof-load-truncated yes", opts: &redistest.Options{AppendFsync: "everysec"}, torn: true},
		{name: "AOF, aof-load-truncated no", opts: &redistest.Options{AppendFsync: "everysec", Args: []string{"--aof-load-truncated", "no"}}},
		{name: "AOF, CONFIG not allowed", opts: &redistest.Options{AppendFsync: "everysec",
			Args: []string{"--user", "alice", "on", ">secret", "~*", "&*", "+@all", "-config"}}, user: "alice:secret@"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := redistest.Start(t, tc.opts)
			ctx := connectCtx(t)
			c, err := redisconn.Connect(ctx, "redis://"+tc.user+srv.Addr)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(c.Close)
			ws, err := redisconn.CheckSettings(ctx, c)
			if err != nil {
				t.Fatal(err)
			}
			var off, torn bool
			for _, w := range ws {
				off = off || strings.HasPrefix(w.Problem, "appendonly is off")
				torn = torn || w.Problem == redisconn.TornAOFProblem
			}
			if off != tc.off || torn != tc.torn {
				t.Errorf("warnings %+v: AOF off %v, torn AOF %v; want %v, %v", ws, off, torn, tc.off, tc.torn)
			}
		})
	}
}

func TestConnectACLUser(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t, &redistest.Options{Args: []string{"--user", "alice", "on", ">secret", "~*", "&*", "+@all"}})

	t.Run("right password", func(t *testing.T) {
		t.Parallel()
		ctx := connectCtx(t)
		c, err := redisconn.Connect(ctx, "redis://alice:secret@"+srv.Addr)
		if err != nil {
			t.Fatalf("Connect as alice: %v", err)
		}
		t.Cleanup(c.Close)
		who, err := c.Do(ctx, c.B().AclWhoami().Build()).ToString()
		if err != nil || who != "alice" {
			t.Fatalf("ACL WHOAMI = %q, %v; want alice", who, err)
		}
	})
	for name, u := range map[string]string{
		"wrong password": "redis://alice:wrongpass@" + srv.Addr,
		"unknown user":   "redis://mallory:secret@" + srv.Addr,
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			c, err := redisconn.Connect(connectCtx(t), u)
			if err == nil {
				c.Close()
				t.Fatalf("Connect(%s) succeeded, want an authentication error", u)
			}
			if !strings.Contains(err.Error(), "WRONGPASS") {
				t.Errorf("Connect error %q, want the server's WRONGPASS", err)
			}
			if strings.Contains(err.Error(), "wrongpass") || strings.Contains(err.Error(), ":secret@") {
				t.Errorf("Connect error reveals the password: %q", err)
			}
		})
	}
}

// TLS with the URL's CA file and an ACL user, against a redis-server
// serving TLS: connecting works only when the server's certificate is
// checked against that CA.
func TestConnectTLS(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t, &redistest.Options{TLS: true, Args: []string{"--user", "alice", "on", ">secret", "~*", "&*", "+@all"}})
	ctx := connectCtx(t)
	c, err := redisconn.Connect(ctx, "rediss://alice:secret@"+srv.TLSAddr+"?tls_ca="+url.QueryEscape(srv.CAFile))
	if err != nil {
		t.Fatalf("Connect over TLS with tls_ca: %v", err)
	}
	t.Cleanup(c.Close)
	if who, err := c.Do(ctx, c.B().AclWhoami().Build()).ToString(); err != nil || who != "alice" {
		t.Fatalf("ACL WHOAMI over TLS = %q, %v; want alice", who, err)
	}
	if err := c.Do(ctx, c.B().Xadd().Key("s").Id("*").FieldValue().FieldValue("f", "v").Build()).Error(); err != nil {
		t.Fatalf("XADD over TLS: %v", err)
	}
	for name, u := range map[string]string{
		"without the CA": "rediss://alice:secret@" + srv.TLSAddr,
		"plain text":     "redis://alice:secret@" + srv.TLSAddr,
	} {
		if c, err := redisconn.Connect(connectCtx(t), u); err == nil {
			c.Close()
			t.Errorf("Connect %s succeeded, want an error", name)
		}
	}
}

func TestCheckVersion(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		info string // the INFO server reply
		ok   bool
		want []string // substrings of the error
	}{
		{info: "# Server\r\nredis_version:6.2.14\r\nredis_mode:standalone\r\n", want: []string{"6.2.14", "7.0"}},
		{info: "# Server\r\nredis_version:5.0.7\r\n", want: []string{"5.0.7", "7.0"}},
		{info: "# Server\r\nredis_mode:standalone\r\n", want: []string{"cannot read redis_version"}},
		{info: "# Server\r\nredis_version:7.0.0\r\n", ok: true},
		{info: "# Server\r\nredis_version:7.2.4\r\nredis_mode:standalone\r\n", ok: true},
		{info: "# Server\r\nredis_version:7.2.4\r\nserver_name:valkey\r\nvalkey_version:8.0.1\r\n", ok: true},
	} {
		t.Run(strings.ReplaceAll(tc.info, "\r\n", " "), func(t *testing.T) {
			t.Parallel()
			addr := fakeRedis(t, tc.info)
			c, err := redisconn.Connect(connectCtx(t), "redis://"+addr)
			if tc.ok {
				if err != nil {
					t.Fatalf("Connect to a server reporting %q: %v", tc.info, err)
				}
				c.Close()
				return
			}
			if err == nil {
				c.Close()
				t.Fatalf("Connect to a server reporting %q succeeded, want ErrVersion", tc.info)
			}
			if !errors.Is(err, redisconn.ErrVersion) {
				t.Fatalf("Connect error %v, want ErrVersion", err)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("Connect error %q does not mention %q", err, w)
				}
			}
		})
	}
}

// fakeRedis serves just enough RESP on a loopback port for rueidis to
// connect and for CheckVersion to read info as the INFO reply. It stands in
// for old Redis versions that cannot be installed here: it proves the
// version check, not Redis behaviour.
func fakeRedis(t *testing.T, info string) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		conns []net.Conn
	)
	t.Cleanup(func() {
		l.Close()
		mu.Lock()
		for _, c := range conns {
			c.Close()
		}
		mu.Unlock()
		wg.Wait()
	})
	wg.Go(func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
			wg.Go(func() { serveFake(c, info) })
		}
	})
	return l.Addr().String()
}

func serveFake(c net.Conn, info string) {
	defer c.Close()
	r := bufio.NewReader(c)
	for {
		args, err := readCommand(r)
		if err != nil {
			return
		}
		var reply string
		switch strings.ToUpper(args[0]) {
		case "HELLO":
			// Answer like a server without RESP3 (Redis 5); rueidis then
			// falls back to RESP2.
			reply = "-ERR unknown command 'HELLO', with args beginning with: \r\n"
		case "PING":
			reply = "+PONG\r\n"
		case "INFO":
			reply = "$" + strconv.Itoa(len(info)) + "\r\n" + info + "\r\n"
		case "QUIT":
			return
		default: // CLIENT SETINFO, SELECT, AUTH, ...
			reply = "+OK\r\n"
		}
		if _, err := io.WriteString(c, reply); err != nil {
			return
		}
	}
}

// readCommand reads one RESP array of bulk strings, as clients send them.
func readCommand(r *bufio.Reader) ([]string, error) {
	n, err := readHeader(r, '*')
	if err != nil {
		return nil, err
	}
	if n < 1 {
		return nil, fmt.Errorf("fake redis: empty command")
	}
	args := make([]string, n)
	for i := range args {
		size, err := readHeader(r, '$')
		if err != nil {
			return nil, err
		}
		buf := make([]byte, size+2)
		if _, err := io.ReadFull(r, buf); err != nil {
			return nil, err
		}
		args[i] = string(buf[:size])
	}
	return args, nil
}

func readHeader(r *bufio.Reader, kind byte) (int, error) {
	line, err := r.ReadString('\n')
	if err != nil {
		return 0, err
	}
	line = strings.TrimSuffix(line, "\r\n")
	if len(line) < 2 || line[0] != kind {
		return 0, fmt.Errorf("fake redis: unexpected %q", line)
	}
	return strconv.Atoi(line[1:])
}

// TestFakeRedisSpeaksEnough guards the fake itself: a plain rueidis client
// (no version check) connects and reads the INFO reply it was given, so a
// refusal in TestCheckVersion comes from CheckVersion.
func TestFakeRedisSpeaksEnough(t *testing.T) {
	t.Parallel()
	const info = "# Server\r\nredis_version:6.2.14\r\n"
	c, err := rueidis.NewClient(rueidis.ClientOption{InitAddress: []string{fakeRedis(t, info)}, DisableCache: true, ForceSingleClient: true})
	if err != nil {
		t.Fatalf("rueidis connect to fake: %v", err)
	}
	t.Cleanup(c.Close)
	got, err := c.Do(connectCtx(t), c.B().Info().Section("server").Build()).ToString()
	if err != nil || got != info {
		t.Fatalf("INFO = %q, %v; want %q", got, err, info)
	}
}

// Redact hides both passwords a URL can hold: the user part's and the
// sentinels' own.
func TestRedactHidesEveryPassword(t *testing.T) {
	t.Parallel()
	for _, raw := range []string{
		"redis://alice:s3cret@example.com:6379/1",
		"redis+sentinel://alice:s3cret@a:26379/mymaster",
		"redis+sentinel://a:26379/mymaster?sentinel_user=sam&sentinel_password=s3cret",
		"rediss+sentinel://alice:s3cret@a:26379/mymaster?sentinel_password=s3cret&tls_server_name=x",
	} {
		got := redisconn.Redact(raw)
		if strings.Contains(got, "s3cret") {
			t.Errorf("Redact(%q) = %q", raw, got)
		}
	}
	// An error about such a URL does not show it either.
	_, err := redisconn.Parse("redis+sentinel://a:26379/mymaster?sentinel_password=s3cret&bogus=1")
	if err == nil || strings.Contains(err.Error(), "s3cret") {
		t.Fatalf("error %v", err)
	}
}
