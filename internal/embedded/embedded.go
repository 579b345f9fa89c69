// Package embedded runs the in-memory backend: an in-process Redis-compatible
// server (miniredis) that dtq uses when no Redis address is configured.
//
// It is for trying dtq and for tests. It keeps nothing on disk, and it differs
// from Redis in a few documented ways (see docs/queue.md); the queue
// conformance suite runs against it as well as against real Redis.
package embedded

import (
	"fmt"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/rueidis"
)

// Backend is a running embedded server and a client connected to it.
type Backend struct {
	Server *miniredis.Miniredis
	Client rueidis.Client
}

// Start starts an embedded server on a free loopback port and connects a
// client to it.
func Start() (*Backend, error) {
	m := miniredis.NewMiniRedis()
	m.ClockTTL(true)
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
	return &Backend{Server: m, Client: c}, nil
}

// Close closes the client and stops the server.
func (b *Backend) Close() {
	b.Client.Close()
	b.Server.Close()
}
