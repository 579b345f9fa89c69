// Package embedded runs the in-memory backend: an in-process Redis-compatible
// server (miniredis) that dtq uses when no Redis address is configured.
//
// It is for trying dtq and for tests. It keeps nothing on disk, and it differs
// from Redis in a few documented ways (see docs/queue.md); the queue
// conformance suite runs against it as well as against real Redis.
package embedded

import (
	"fmt"
	"sync"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/rueidis"
)

// Backend is a running embedded server and a client connected to it.
type Backend struct {
	Server *miniredis.Miniredis
	Client rueidis.Client

	stop      chan struct{}
	done      sync.WaitGroup
	closeOnce sync.Once
}

// Key expiry. miniredis either ages TTLs only when told (FastForward) or,
// with ClockTTL, on every command — by sorting every key, which makes each
// command O(n log n) in the number of keys: 7 ms per submit at 3,000 tasks.
// Instead a ticker ages TTLs by the wall clock every expiryTick, or less
// often when a pass is slow, so that expiry costs at most about a tenth of
// a core. Keys expire up to one tick late.
const (
	expiryTick     = 100 * time.Millisecond
	expiryMaxShare = 10 // a pass takes at most 1/expiryMaxShare of the time
)

// Start starts an embedded server on a free loopback port and connects a
// client to it.
func Start() (*Backend, error) {
	m := miniredis.NewMiniRedis()
	if err := m.Start(); err != nil {
		return nil, fmt.Errorf("embedded: start: %w", err)
	}
	c, err := rueidis.NewClient(rueidis.ClientOption{
		InitAddress:       []string{m.Addr()},
		DisableCache:      true,
		ForceSingleClient: true,
	})
	if err != nil {
		m.Close()
		return nil, fmt.Errorf("embedded: connect: %w", err)
	}
	b := &Backend{Server: m, Client: c, stop: make(chan struct{})}
	b.done.Go(b.expire)
	return b, nil
}

// expire ages the server's TTLs by the wall clock until Close.
func (b *Backend) expire() {
	last := time.Now()
	wait := expiryTick
	for {
		select {
		case <-b.stop:
			return
		case <-time.After(wait):
		}
		now := time.Now()
		b.Server.FastForward(now.Sub(last))
		last = now
		wait = max(expiryTick, time.Since(now)*expiryMaxShare)
	}
}

// Close closes the client and stops the server.
func (b *Backend) Close() {
	b.closeOnce.Do(func() {
		close(b.stop)
		b.done.Wait()
		b.Client.Close()
		b.Server.Close()
	})
}
