// Package redistest starts real redis-server processes and in-process
// embedded backends for tests, and hands out clients bound to a unique key
// namespace per test.
//
// Servers listen on free loopback ports, keep nothing on disk unless asked,
// and are stopped by pid. Nothing here ever touches a server the test did not
// start itself.
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
	"sync"
	"syscall"
	"time"
)

// Options configures a redis-server started by StartServer.
type Options struct {
	// AppendFsync turns on the append-only file with this fsync policy
	// ("always", "everysec" or "no"). Empty keeps no persistence at all.
	AppendFsync string
	// Args are extra "--name value" arguments for redis-server.
	Args []string
	// TLS also serves TLS on a second free port (Server.TLSAddr), with a
	// certificate for 127.0.0.1 from a fresh CA (Server.CAFile); clients
	// need no certificate. The plain port stays open for the harness.
	TLS bool

	cluster  bool   // a cluster node: its bus port (+10000) must be free too
	sentinel string // a sentinel with this config file content
}

// Server is a redis-server child process on a loopback port.
type Server struct {
	Addr string // "127.0.0.1:<port>"
	Port int
	Dir  string // working directory (AOF files, log)
	// With Options.TLS: the TLS address and the CA file that signed the
	// server's certificate.
	TLSAddr string
	CAFile  string

	opts Options
	mu   sync.Mutex
	cmd  *exec.Cmd
	exit chan struct{}
}

// StartServer starts a redis-server on a free loopback port and waits until it
// answers PING. It retries with another port when the chosen one is taken.
func StartServer(opts *Options) (*Server, error) {
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		return nil, errors.New("redistest: redis-server is not installed; run `make test`, which installs it")
	}
	if opts == nil {
		opts = &Options{}
	}
	dir, err := os.MkdirTemp("", "dtq-redis-")
	if err != nil {
		return nil, err
	}
	if opts.sentinel != "" {
		if bin, err = exec.LookPath("redis-sentinel"); err != nil {
			return nil, errors.New("redistest: redis-sentinel is not installed; run `make test`, which installs it")
		}
		if _, err := writeSentinelConf(dir, opts.sentinel); err != nil {
			return nil, err
		}
	}
	var lastErr error
	for range 20 {
		port, err := freePort()
		if err != nil {
			return nil, err
		}
		if opts.cluster && !busFree(port) {
			lastErr = errors.New("redistest: no free port with a free cluster bus port")
			continue
		}
		s := &Server{Addr: "127.0.0.1:" + strconv.Itoa(port), Port: port, Dir: dir, opts: *opts}
		if opts.TLS {
			tlsPort, err := freePort()
			if err != nil {
				return nil, err
			}
			if err := writeTLSFiles(dir); err != nil {
				return nil, err
			}
			s.TLSAddr, s.CAFile = "127.0.0.1:"+strconv.Itoa(tlsPort), filepath.Join(dir, "ca.pem")
		}
		if lastErr = s.start(bin); lastErr == nil {
			return s, nil
		}
	}
	os.RemoveAll(dir)
	return nil, lastErr
}

func (s *Server) args() []string {
	if s.opts.sentinel != "" {
		return []string{filepath.Join(s.Dir, "sentinel.conf"), "--port", strconv.Itoa(s.Port), "--bind", "127.0.0.1",
			"--dir", s.Dir, "--logfile", filepath.Join(s.Dir, "redis.log"), "--daemonize", "no"}
	}
	a := []string{
		"--port", strconv.Itoa(s.Port), "--bind", "127.0.0.1",
		"--save", "", "--dir", s.Dir, "--logfile", filepath.Join(s.Dir, "redis.log"),
		"--daemonize", "no",
		// A replica (re)syncs at once, not after the default 5 s wait for
		// more replicas to share the transfer.
		"--repl-diskless-sync-delay", "0",
	}
	if s.TLSAddr != "" {
		_, port, _ := net.SplitHostPort(s.TLSAddr)
		a = append(a, "--tls-port", port, "--tls-cert-file", filepath.Join(s.Dir, "server.pem"),
			"--tls-key-file", filepath.Join(s.Dir, "server.key"), "--tls-ca-cert-file", s.CAFile, "--tls-auth-clients", "no")
	}
	if s.opts.AppendFsync != "" {
		a = append(a, "--appendonly", "yes", "--appendfsync", s.opts.AppendFsync)
	} else {
		a = append(a, "--appendonly", "no")
	}
	return append(a, s.opts.Args...)
}

func (s *Server) start(bin string) error {
	cmd := exec.Command(bin, s.args()...)
	// The server dies with the test binary even if cleanup never runs.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return err
	}
	exit := make(chan struct{})
	go func() { cmd.Wait(); close(exit) }()
	s.mu.Lock()
	s.cmd, s.exit = cmd, exit
	s.mu.Unlock()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case <-exit:
			return fmt.Errorf("redistest: redis-server exited at start (see %s)", filepath.Join(s.Dir, "redis.log"))
		default:
		}
		if ping(s.Addr) == nil {
			return nil
		}
		time.Sleep(5 * time.Millisecond)
	}
	s.Kill()
	return errors.New("redistest: redis-server did not answer PING within 10s")
}

// PID is the process id of the running server, or 0 when stopped.
func (s *Server) PID() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd == nil {
		return 0
	}
	return s.cmd.Process.Pid
}

func (s *Server) signal(sig syscall.Signal) error {
	s.mu.Lock()
	cmd := s.cmd
	s.mu.Unlock()
	if cmd == nil {
		return errors.New("redistest: server not running")
	}
	return cmd.Process.Signal(sig)
}

func (s *Server) waitExit(d time.Duration) bool {
	s.mu.Lock()
	exit := s.exit
	s.mu.Unlock()
	select {
	case <-exit:
		s.mu.Lock()
		s.cmd = nil
		s.mu.Unlock()
		return true
	case <-time.After(d):
		return false
	}
}

// Stop sends SIGTERM to the server's pid and waits for it to exit, killing it
// after 5 seconds.
func (s *Server) Stop() error {
	if s.PID() == 0 {
		return nil
	}
	s.signal(syscall.SIGCONT) // a paused server cannot handle SIGTERM
	if err := s.signal(syscall.SIGTERM); err != nil {
		return err
	}
	if !s.waitExit(5 * time.Second) {
		return s.Kill()
	}
	return nil
}

// Kill sends SIGKILL to the server's pid and waits for it to exit.
func (s *Server) Kill() error {
	if s.PID() == 0 {
		return nil
	}
	if err := s.signal(syscall.SIGKILL); err != nil {
		return err
	}
	s.waitExit(10 * time.Second)
	return nil
}

// Pause stops the server process with SIGSTOP; Resume continues it.
func (s *Server) Pause() error { return s.signal(syscall.SIGSTOP) }

// Resume continues a server paused with Pause.
func (s *Server) Resume() error { return s.signal(syscall.SIGCONT) }

// Restart starts the server again on the same port and directory after Stop
// or Kill (with AOF on, it reloads its data).
func (s *Server) Restart() error {
	name := "redis-server"
	if s.opts.sentinel != "" {
		name = "redis-sentinel"
	}
	bin, err := exec.LookPath(name)
	if err != nil {
		return err
	}
	return s.start(bin)
}

// Close stops the server and removes its directory.
func (s *Server) Close() error {
	err := s.Stop()
	os.RemoveAll(s.Dir)
	return err
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// busFree reports whether a cluster node on port can have its bus port.
func busFree(port int) bool {
	if port+10000 > 65535 {
		return false
	}
	l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(port+10000))
	if err != nil {
		return false
	}
	l.Close()
	return true
}

func ping(addr string) error {
	c, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		return err
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(time.Second))
	if _, err := c.Write([]byte("PING\r\n")); err != nil {
		return err
	}
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil {
		return err
	}
	if line != "+PONG\r\n" {
		return fmt.Errorf("redistest: PING answered %q", line)
	}
	return nil
}
