package faults

import (
	"bufio"
	"errors"
	"io"
	"net"
	"os"
	"testing"
	"time"
)

// echoServer echoes every line back until the connection closes.
func echoServer(t *testing.T) string {
	return serve(t, func(c net.Conn) { io.Copy(c, c) })
}

// serve runs handle on every connection to a new loopback listener (closing
// the connection after it) and returns the listener's address.
func serve(t *testing.T, handle func(net.Conn)) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				handle(c)
			}()
		}
	}()
	return ln.Addr().String()
}

func startProxy(t *testing.T) *Proxy {
	t.Helper()
	p, err := NewProxy(echoServer(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return p
}

func dialProxy(t *testing.T, p *Proxy) (net.Conn, *bufio.Reader) {
	t.Helper()
	c, err := net.Dial("tcp", p.Addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c, bufio.NewReader(c)
}

func roundTrip(t *testing.T, c net.Conn, r *bufio.Reader, msg string) {
	t.Helper()
	if _, err := c.Write([]byte(msg + "\n")); err != nil {
		t.Fatal(err)
	}
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	line, err := r.ReadString('\n')
	if err != nil || line != msg+"\n" {
		t.Fatalf("echo of %q: %q, %v", msg, line, err)
	}
}

func TestProxyForwards(t *testing.T) {
	t.Parallel()
	p := startProxy(t)
	c, r := dialProxy(t, p)
	roundTrip(t, c, r, "hello")
	roundTrip(t, c, r, "again")
	if acc, _ := p.Stats(); acc != 1 {
		t.Fatalf("accepted %d connections, want 1", acc)
	}
}

func TestProxyReset(t *testing.T) {
	t.Parallel()
	p := startProxy(t)
	c, r := dialProxy(t, p)
	roundTrip(t, c, r, "before")
	if n := p.Reset(); n != 1 {
		t.Fatalf("Reset reset %d connections, want 1", n)
	}
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	_, err := r.ReadString('\n')
	var ne net.Error
	if err == nil || (errors.As(err, &ne) && ne.Timeout()) {
		t.Fatalf("read after a reset: %v, want the connection broken", err)
	}
	// New connections work.
	c2, r2 := dialProxy(t, p)
	roundTrip(t, c2, r2, "after")
	if _, resets := p.Stats(); resets != 1 {
		t.Fatalf("resets %d, want 1", resets)
	}
}

func TestProxyBlackholeAndHeal(t *testing.T) {
	t.Parallel()
	p := startProxy(t)
	c, r := dialProxy(t, p)
	roundTrip(t, c, r, "before")
	p.Blackhole()
	if _, err := c.Write([]byte("held\n")); err != nil {
		t.Fatal(err)
	}
	// Nothing comes back while black-holed: the read runs into its
	// deadline (the deadline bounds the test, it is not a guess).
	c.SetReadDeadline(time.Now().Add(300 * time.Millisecond))
	if line, err := r.ReadString('\n'); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("read while black-holed: %q, %v; want a timeout", line, err)
	}
	if h := p.Held(); h != 1 {
		t.Fatalf("%d chunks held, want 1", h)
	}
	// A connection made during the partition is accepted but silent too.
	c2, r2 := dialProxy(t, p)
	c2.Write([]byte("new\n"))
	c2.SetReadDeadline(time.Now().Add(100 * time.Millisecond))
	if _, err := r2.ReadString('\n'); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("new connection while black-holed: %v; want a timeout", err)
	}
	p.Heal()
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	if line, err := r.ReadString('\n'); err != nil || line != "held\n" {
		t.Fatalf("after Heal: %q, %v; want the held line", line, err)
	}
	c2.SetReadDeadline(time.Now().Add(10 * time.Second))
	if line, err := r2.ReadString('\n'); err != nil || line != "new\n" {
		t.Fatalf("new connection after Heal: %q, %v", line, err)
	}
	roundTrip(t, c, r, "after")
}

func TestProxySlow(t *testing.T) {
	t.Parallel()
	p := startProxy(t)
	c, r := dialProxy(t, p)
	const d = 50 * time.Millisecond
	p.Slow(d)
	began := time.Now()
	roundTrip(t, c, r, "slow")
	// Two hops (there and back) each wait d: a lower bound, never flaky.
	if took := time.Since(began); took < 2*d {
		t.Fatalf("a round trip through a slowed proxy took %v, want at least %v", took, 2*d)
	}
	if n := p.Delayed(); n != 2 {
		t.Fatalf("%d chunks delayed, want 2", n)
	}
	p.Slow(0)
	roundTrip(t, c, r, "fast")
}

func TestProxyUpstreamDown(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p, err := NewProxy(ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	ln.Close() // nothing listens there now (closed after the proxy took its own port)
	// The client sees a reset: at connect (on loopback the RST can beat
	// connect's return) or at its first read.
	c, err := net.Dial("tcp", p.Addr)
	if err != nil {
		return
	}
	defer c.Close()
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, err := c.Read(make([]byte, 1)); err == nil || errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("read through a proxy whose upstream is down: %v, want the connection closed", err)
	}
}

func TestProxyClose(t *testing.T) {
	t.Parallel()
	p := startProxy(t)
	c, r := dialProxy(t, p)
	roundTrip(t, c, r, "x")
	p.Blackhole() // Close must not hang on a held chunk
	c.Write([]byte("held\n"))
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := net.DialTimeout("tcp", p.Addr, time.Second); err == nil {
		t.Fatal("the proxy still accepts connections after Close")
	}
}

// LoseAnswerTo lets the matching request through and drops its answer:
// the upstream gets it, the client's connection is reset without a reply;
// other connections, and later requests, pass.
func TestProxyLosesAnAnswer(t *testing.T) {
	got := make(chan string, 4)
	// An echo server that also tells what it got.
	addr := serve(t, func(c net.Conn) {
		r := bufio.NewReader(c)
		for {
			line, err := r.ReadString('\n')
			if err != nil {
				return
			}
			got <- line
			c.Write([]byte(line))
		}
	})
	p, err := NewProxy(addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	p.LoseAnswerTo([]byte("start-abc"))
	c, r := dialProxy(t, p)
	roundTrip(t, c, r, "hello")
	if _, err := c.Write([]byte("EVALSHA start-abc\n")); err != nil {
		t.Fatal(err)
	}
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	if line, err := r.ReadString('\n'); err == nil {
		t.Fatalf("the answer %q reached the client", line)
	} else if errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatal("the connection was not reset")
	}
	for _, want := range []string{"hello\n", "EVALSHA start-abc\n"} {
		if line := <-got; line != want {
			t.Fatalf("upstream got %q, want %q", line, want)
		}
	}
	if p.Lost() != 1 {
		t.Fatalf("Lost() = %d, want 1", p.Lost())
	}
	c2, r2 := dialProxy(t, p)
	roundTrip(t, c2, r2, "EVALSHA start-abc") // disarmed: it passes
}
