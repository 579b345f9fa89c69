package api_test

import (
	"bufio"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"time"

	"github.com/dtq-dev/dtq/api"
	"github.com/dtq-dev/dtq/internal/redisconn"
)

// The probes of the event stream: part of TestOpenAPIAnswers.

// events provokes the answers of GET /ws/events and checks its frames
// against the Event schema.
func (p *prober) events(e *env) {
	p.do(e, 426, opEvents, "/ws/events", "")
	p.do(e, 400, opEvents, "/ws/events?queue=bad!", "", wsHandshake...)
	p.do(e, 403, opEvents, "/ws/events", "", append([]string{"Origin", "http://evil.example"}, wsHandshake...)...)
	p.do(e, 400, opEvents, "/ws/events", "", "Connection", "Upgrade", "Upgrade", "websocket", "Sec-WebSocket-Version", "12")

	conn, err := net.Dial("tcp", e.srv.Listener.Addr().String())
	if err != nil {
		p.t.Fatal(err)
	}
	defer conn.Close()
	req, _ := http.NewRequest("GET", e.srv.URL+"/ws/events?queue=default", nil)
	for i := 0; i < len(wsHandshake); i += 2 {
		req.Header.Set(wsHandshake[i], wsHandshake[i+1])
	}
	conn.SetDeadline(time.Now().Add(15 * time.Second))
	if err := req.Write(conn); err != nil {
		p.t.Fatal(err)
	}
	br := bufio.NewReader(conn)
	res, err := http.ReadResponse(br, req)
	if err != nil {
		p.t.Fatal(err)
	}
	p.answer(opEvents, res.StatusCode, res.Header, nil)
	if res.StatusCode != http.StatusSwitchingProtocols {
		p.t.Fatalf("GET /ws/events: %s", res.Status)
	}
	frames := make(chan []byte, 64)
	go func() {
		defer close(frames)
		for {
			op, payload, err := readFrame(br)
			if err != nil || op != 1 {
				return
			}
			frames <- payload
		}
	}()
	// The hub subscribes when its first client arrives: submit until events
	// come, then check a few.
	frameSchema := p.ops[opEvents]["x-websocket-frame"]
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for checked := 0; checked < 3; {
		select {
		case f, ok := <-frames:
			if !ok {
				p.t.Fatalf("GET /ws/events: the connection ended before 3 events")
			}
			v, err := decode(f)
			if err != nil {
				p.t.Fatalf("frame is not JSON: %v: %s", err, f)
			}
			for _, problem := range p.spec.validate(frameSchema, v) {
				p.t.Errorf("event frame: %s\n%s", problem, f)
			}
			checked++
		case <-tick.C:
			e.must(201, "POST", "/api/v1/tasks", `{"task_type":"fail","max_attempts":1}`)
		}
	}
}

// readFrame reads one unmasked WebSocket frame (as a server sends them)
// and returns its opcode and payload.
func readFrame(r *bufio.Reader) (byte, []byte, error) {
	var h [2]byte
	if _, err := io.ReadFull(r, h[:]); err != nil {
		return 0, nil, err
	}
	if h[0]&0x80 == 0 || h[1]&0x80 != 0 {
		return 0, nil, errors.New("fragmented or masked frame")
	}
	n := uint64(h[1] & 0x7f)
	switch n {
	case 126:
		var b [2]byte
		if _, err := io.ReadFull(r, b[:]); err != nil {
			return 0, nil, err
		}
		n = uint64(binary.BigEndian.Uint16(b[:]))
	case 127:
		var b [8]byte
		if _, err := io.ReadFull(r, b[:]); err != nil {
			return 0, nil, err
		}
		n = binary.BigEndian.Uint64(b[:])
	}
	if n > 1<<20 {
		return 0, nil, errors.New("frame too large")
	}
	payload := make([]byte, n)
	_, err := io.ReadFull(r, payload)
	return h[0] & 0x0f, payload, err
}

// closed provokes the 503 of GET /ws/events from a closed Server.
func (p *prober) closed(e *env) {
	srv := api.New(e.c, redisconn.Wrap(e.b.Client), nil)
	hs := httptest.NewServer(srv.Handler())
	defer hs.Close()
	srv.Close()
	p.do(&env{t: e.t, b: e.b, c: e.c, srv: hs}, 503, opEvents, "/ws/events", "", wsHandshake...)
}

// concrete returns a request for operation key: its path with parameters
// filled in, and a valid body if it takes one.
