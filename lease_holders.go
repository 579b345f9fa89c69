package dtq

import (
	"context"
	"sync"
	"time"

	"github.com/dtq-dev/dtq/internal/store"
)

// holders registers the lease holders this server sees as workers: each
// Lease call is a heartbeat of "http:<Worker>" (written at most once a
// second per holder), which expires ttl after the holder's last call; an
// extension keeps it alive (touch).
type holders struct {
	ttl  time.Duration
	mu   sync.Mutex
	seen map[string]holderSeen
	// touched is when touch last wrote a holder's heartbeat.
	touched map[string]time.Time
}

// holderSeen is what the server knows of a holder: when it first and last
// wrote its heartbeat.
type holderSeen struct{ first, wrote time.Time }

func newHolders(ttl time.Duration) *holders {
	return &holders{ttl: ttl, seen: map[string]holderSeen{}, touched: map[string]time.Time{}}
}

// holderWriteEvery bounds how often one holder's heartbeat is written.
const holderWriteEvery = time.Second

// record records r's holder as a live worker. A failure is only counted: the
// lease goes on.
func (h *holders) record(ctx context.Context, e *engine, r LeaseRequest) {
	id := "http:" + r.Worker
	now := time.Now()
	h.mu.Lock()
	s, ok := h.seen[id]
	if ok && now.Sub(s.wrote) < holderWriteEvery {
		h.mu.Unlock()
		return
	}
	if !ok || now.Sub(s.wrote) > h.ttl {
		s.first = now // (back after it expired: a new start)
	}
	s.wrote = now
	h.seen[id] = s
	for k, v := range h.seen { // forget the expired (few: one entry per holder)
		if now.Sub(v.wrote) > h.ttl {
			delete(h.seen, k)
		}
	}
	h.mu.Unlock()
	rec := store.WorkerRecord{ID: id, Host: r.Host, Queues: r.Queues, Concurrency: r.Concurrency, Busy: r.Busy,
		Started: s.first.UnixMilli(), Kind: WorkerKindHTTP, Library: r.Library}
	if _, err := e.store.Heartbeat(ctx, rec, h.ttl); err != nil {
		e.redisError("heartbeat", err)
	}
}

// touch keeps holder id listed from a call that is not a lease — an
// extension: a holder whose slots are all busy with long tasks makes no
// Lease call, yet it is alive. It refreshes the heartbeat a Lease call wrote
// (by this server or another), at most once a second; a holder that has
// expired is not listed again by it.
func (h *holders) touch(ctx context.Context, e *engine, id string) {
	now := time.Now()
	h.mu.Lock()
	if now.Sub(h.touched[id]) < holderWriteEvery || now.Sub(h.seen[id].wrote) < holderWriteEvery {
		h.mu.Unlock()
		return
	}
	h.touched[id] = now
	for k, t := range h.touched {
		if now.Sub(t) > h.ttl {
			delete(h.touched, k)
		}
	}
	h.mu.Unlock()
	if err := e.store.TouchWorker(ctx, id, h.ttl); err != nil {
		e.redisError("heartbeat", err)
	}
}

// printable reports whether s is printable ASCII (a library's name and
// version).
func printable(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] > 0x7e {
			return false
		}
	}
	return true
}
