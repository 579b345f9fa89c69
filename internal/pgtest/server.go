// Package pgtest starts real PostgreSQL servers for tests: initdb into a
// temporary directory, postgres on a free loopback port with its socket in
// that directory, stopped by pid. It hands out a fresh database per test.
//
// Nothing here ever touches a server the test did not start itself (not the
// one a machine may run on port 5432). As root, initdb and postgres refuse
// to run: the server then runs as the "postgres" user (Debian's package
// creates it), through the process credentials, not a wrapper.
package pgtest

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
)

// Server is a postgres child process on a loopback port.
type Server struct {
	Addr string // "127.0.0.1:<port>"
	Port int
	Dir  string // the temporary directory: data/, the socket and the log

	bin  string // the directory of initdb and postgres
	cred *syscall.Credential
	mu   sync.Mutex
	cmd  *exec.Cmd
	exit chan struct{}
}

// StartServer runs initdb into a new temporary directory and starts postgres
// on a free loopback port, waiting until it accepts connections. It retries
// with another port when the chosen one is taken.
func StartServer() (*Server, error) {
	bin, err := binDir()
	if err != nil {
		return nil, err
	}
	cred, err := credential()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "dtq-pg-")
	if err != nil {
		return nil, err
	}
	s := &Server{Dir: dir, bin: bin, cred: cred}
	if cred != nil {
		if err := os.Chown(dir, int(cred.Uid), int(cred.Gid)); err != nil {
			os.RemoveAll(dir)
			return nil, err
		}
	}
	if err := s.initdb(); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	var lastErr error
	for range 20 {
		port, err := freePort()
		if err != nil {
			os.RemoveAll(dir)
			return nil, err
		}
		s.Port, s.Addr = port, "127.0.0.1:"+strconv.Itoa(port)
		if lastErr = s.start(); lastErr == nil {
			return s, nil
		}
	}
	os.RemoveAll(dir)
	return nil, lastErr
}

// binDir finds the directory of initdb and postgres: initdb on PATH, else
// the newest /usr/lib/postgresql/*/bin.
func binDir() (string, error) {
	if p, err := exec.LookPath("initdb"); err == nil {
		if real, err := filepath.EvalSymlinks(p); err == nil {
			return filepath.Dir(real), nil
		}
	}
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Slice(dirs, func(i, j int) bool { return version(dirs[i]) > version(dirs[j]) })
	for _, d := range dirs {
		if _, err := os.Stat(filepath.Join(d, "initdb")); err == nil {
			return d, nil
		}
	}
	return "", errors.New("pgtest: PostgreSQL (initdb) is not installed; run `make test`, which installs it (scripts/ensure-postgres.sh)")
}

// version is the major version in /usr/lib/postgresql/<v>/bin.
func version(dir string) int {
	v, _ := strconv.Atoi(filepath.Base(filepath.Dir(dir)))
	return v
}

// credential is nil when the test runs as a user other than root, else the
// uid and gid of the "postgres" user, which initdb and postgres run as.
func credential() (*syscall.Credential, error) {
	if os.Geteuid() != 0 {
		return nil, nil
	}
	u, err := user.Lookup("postgres")
	if err != nil {
		return nil, errors.New("pgtest: running as root, and PostgreSQL refuses to: no \"postgres\" user to run it as (install Debian's postgresql, which creates it, or run the tests as another user)")
	}
	uid, err1 := strconv.ParseUint(u.Uid, 10, 32)
	gid, err2 := strconv.ParseUint(u.Gid, 10, 32)
	if err1 != nil || err2 != nil {
		return nil, fmt.Errorf("pgtest: user postgres has uid %q, gid %q", u.Uid, u.Gid)
	}
	return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}, nil
}

func (s *Server) command(name string, args ...string) *exec.Cmd {
	cmd := exec.Command(filepath.Join(s.bin, name), args...)
	cmd.Dir = s.Dir
	// The server dies with the test binary even if cleanup never runs
	// (the parent-death signal is set after the credentials change).
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Credential: s.cred}
	return cmd
}

func (s *Server) initdb() error {
	cmd := s.command("initdb", "-D", filepath.Join(s.Dir, "data"), "-U", "postgres", "--auth=trust",
		"-E", "UTF8", "--locale=C", "--no-sync", "--no-instructions")
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("pgtest: initdb: %v: %s", err, out)
	}
	return nil
}

func (s *Server) start() error {
	log, err := os.Create(filepath.Join(s.Dir, "postgres.log"))
	if err != nil {
		return err
	}
	defer log.Close()
	cmd := s.command("postgres", "-D", filepath.Join(s.Dir, "data"),
		"-p", strconv.Itoa(s.Port), "-k", s.Dir, "-c", "listen_addresses=127.0.0.1",
		// A test server: nothing here must survive the machine.
		"-c", "fsync=off", "-c", "full_page_writes=off", "-c", "synchronous_commit=off",
		"-c", "shared_buffers=32MB", "-c", "max_connections=200")
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		return err
	}
	exit := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exit) }() // the exit is what counts
	s.mu.Lock()
	s.cmd, s.exit = cmd, exit
	s.mu.Unlock()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case <-exit:
			return fmt.Errorf("pgtest: postgres exited at start (see %s)", log.Name())
		default:
		}
		if s.ping() == nil {
			return nil
		}
		time.Sleep(20 * time.Millisecond)
	}
	_ = s.Kill()
	return errors.New("pgtest: postgres did not accept connections within 30s")
}

func (s *Server) ping() error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	c, err := pgx.Connect(ctx, s.URL("postgres"))
	if err != nil {
		return err
	}
	return c.Close(ctx)
}

// URL is the connection URL of database db on the server, over TCP.
func (s *Server) URL(db string) string {
	return "postgres://postgres@" + s.Addr + "/" + db + "?sslmode=disable"
}

// PID is the process id of the running postmaster, or 0 when stopped.
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
		return errors.New("pgtest: server not running")
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

// Stop asks the postmaster (by pid) for a fast shutdown (SIGINT: sessions
// are ended) and waits for it, killing it after 10 seconds.
func (s *Server) Stop() error {
	if s.PID() == 0 {
		return nil
	}
	if err := s.signal(syscall.SIGINT); err != nil {
		return err
	}
	if !s.waitExit(10 * time.Second) {
		return s.Kill()
	}
	return nil
}

// Kill sends SIGKILL to the postmaster's pid and waits for it to exit (its
// backends end as they notice).
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
