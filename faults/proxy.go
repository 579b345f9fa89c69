package faults

import (
	"bytes"
	"errors"
	"io"
	"net"
	"sync"
	"time"
)

// Proxy is a TCP proxy between clients and one upstream address that can
// reset, black-hole and slow the connections through it. Clients connect
// to Addr. Build it with NewProxy; it is safe for concurrent use.
type Proxy struct {
	// Addr is the proxy's listening address, "127.0.0.1:<port>".
	Addr string

	target string
	ln     net.Listener

	mu       sync.Mutex
	cond     *sync.Cond // signalled when blackholed or closed changes
	conns    map[*link]struct{}
	holed    bool
	delay    time.Duration
	closed   bool
	accepted int
	resets   int
	held     int    // chunks waiting in a black hole now
	delayed  int    // chunks slowed so far
	lose     []byte // LoseAnswerTo's pattern, nil when not armed
	lost     int    // answers lost so far
	wg       sync.WaitGroup
}

// link is one proxied connection: the client's side and the upstream's.
type link struct {
	client, upstream net.Conn
	doomed           bool // (under Proxy.mu) its answers are dropped: it is about to be reset
}

// loseAfter is how long a link whose answer LoseAnswerTo drops stays open,
// its answers dropped, before it is reset: Redis has run the request by
// then.
const loseAfter = 200 * time.Millisecond

// NewProxy listens on a free loopback port and forwards every connection
// to target.
func NewProxy(target string) (*Proxy, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p := &Proxy{Addr: ln.Addr().String(), target: target, ln: ln, conns: map[*link]struct{}{}}
	p.cond = sync.NewCond(&p.mu)
	p.wg.Go(p.accept)
	return p, nil
}

func (p *Proxy) accept() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		u, err := net.DialTimeout("tcp", p.target, 2*time.Second)
		if err != nil {
			reset(c) // upstream down: the client sees a reset, as from a dead host
			continue
		}
		l := &link{client: c, upstream: u}
		p.mu.Lock()
		if p.closed {
			p.mu.Unlock()
			c.Close()
			u.Close()
			return
		}
		p.conns[l] = struct{}{}
		p.accepted++
		p.mu.Unlock()
		p.wg.Go(func() { p.pipe(l, u, c) })
		p.wg.Go(func() { p.pipe(l, c, u) })
	}
}

// pipe copies src to dst chunk by chunk, holding each chunk while the
// proxy is black-holed and delaying it while slowed.
func (p *Proxy) pipe(l *link, dst, src net.Conn) {
	defer p.drop(l)
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			p.mu.Lock()
			toUpstream := dst == l.upstream
			if !toUpstream && l.doomed {
				p.mu.Unlock()
				continue // an answer lost on its way
			}
			lose := toUpstream && p.lose != nil && bytes.Contains(buf[:n], p.lose)
			if lose {
				p.lose, l.doomed = nil, true
				p.lost++
			}
			if p.holed {
				p.held++
				for p.holed && !p.closed {
					p.cond.Wait()
				}
				p.held--
			}
			delay, closed := p.delay, p.closed
			if delay > 0 {
				p.delayed++
			}
			p.mu.Unlock()
			if closed {
				return
			}
			if delay > 0 {
				time.Sleep(delay)
			}
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
			if lose {
				time.AfterFunc(loseAfter, func() {
					reset(l.client)
					reset(l.upstream)
				})
			}
		}
		if err != nil {
			if errors.Is(err, io.EOF) {
				if tc, ok := dst.(*net.TCPConn); ok {
					tc.CloseWrite()
					return
				}
			}
			return
		}
	}
}

// drop closes both sides of l and forgets it.
func (p *Proxy) drop(l *link) {
	p.mu.Lock()
	delete(p.conns, l)
	p.mu.Unlock()
	l.client.Close()
	l.upstream.Close()
}

// reset closes c with a TCP RST (SO_LINGER 0) instead of a FIN.
func reset(c net.Conn) {
	if tc, ok := c.(*net.TCPConn); ok {
		tc.SetLinger(0)
	}
	c.Close()
}

// Reset resets every open connection (both sides get a TCP RST) and
// returns how many it reset. New connections are accepted as before.
func (p *Proxy) Reset() int {
	p.mu.Lock()
	links := make([]*link, 0, len(p.conns))
	for l := range p.conns {
		links = append(links, l)
		delete(p.conns, l)
	}
	p.resets += len(links)
	p.mu.Unlock()
	for _, l := range links {
		reset(l.client)
		reset(l.upstream)
	}
	return len(links)
}

// LoseAnswerTo arms a one-time fault: the next request that contains
// pattern (a command's bytes, e.g. a script's SHA1) reaches the upstream,
// but its answer, and every other on that connection from then on, does
// not reach the client, whose connection is reset a moment later — a
// server killed after it ran a command and before its reply was sent, or
// a connection cut with a call in flight. Lost returns how many answers
// it dropped so. The pattern is looked for in each chunk read: one split
// across two reads is missed (a test checks Lost).
func (p *Proxy) LoseAnswerTo(pattern []byte) {
	p.mu.Lock()
	p.lose = append([]byte(nil), pattern...)
	p.mu.Unlock()
}

// Lost returns how many requests LoseAnswerTo let through without their
// answer.
func (p *Proxy) Lost() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.lost
}

// Blackhole stops forwarding: connections stay open (new ones are
// accepted) but no byte goes through in either direction until Heal — a
// network partition. Bytes already read are held, as TCP would retransmit
// them after the partition.
func (p *Proxy) Blackhole() {
	p.mu.Lock()
	p.holed = true
	p.mu.Unlock()
}

// Heal ends a Blackhole: held bytes flow again.
func (p *Proxy) Heal() {
	p.mu.Lock()
	p.holed = false
	p.cond.Broadcast()
	p.mu.Unlock()
}

// Slow delays every chunk forwarded in either direction by d (0: no
// delay).
func (p *Proxy) Slow(d time.Duration) {
	p.mu.Lock()
	p.delay = d
	p.mu.Unlock()
}

// Stats returns how many connections the proxy accepted and how many it
// reset.
func (p *Proxy) Stats() (accepted, resets int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.accepted, p.resets
}

// Held returns how many chunks of data are held in the black hole now:
// traffic that tried to pass.
func (p *Proxy) Held() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.held
}

// Delayed returns how many chunks Slow has delayed so far.
func (p *Proxy) Delayed() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.delayed
}

// Open returns the number of connections open through the proxy.
func (p *Proxy) Open() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.conns)
}

// Close stops listening, closes every connection and waits for the
// proxy's goroutines.
func (p *Proxy) Close() error {
	err := p.ln.Close()
	p.mu.Lock()
	p.closed = true
	p.cond.Broadcast()
	links := make([]*link, 0, len(p.conns))
	for l := range p.conns {
		links = append(links, l)
	}
	p.mu.Unlock()
	for _, l := range links {
		l.client.Close()
		l.upstream.Close()
	}
	p.wg.Wait()
	return err
}
