// Package conn is the Redis connection the task engine (package dtq), the
// queue primitive (package queue) and the HTTP API (package api) are built
// on: one connection serves all three.
package conn

import (
	"context"

	"github.com/dtq-dev/dtq/internal/redisconn"
)

// Redis is a connection to Redis (or to the embedded in-process backend).
// Close it when done.
type Redis = redisconn.Conn

// Open returns a connection to url built with the settings dtq needs
// (client-side caching off; Cluster, Sentinel and TLS as the URL says),
// after checking that the server is Redis 7.0 or later.
//
// url takes the forms of the dtq binary's --redis:
//
//	redis://[user[:password]@]host[:port][/db]         one server
//	rediss://…                                         the same over TLS
//	redis+cluster://[user[:password]@]host:port[,host:port…]
//	redis+sentinel://[user[:password]@]host:port[,host:port…]/master[/db]
//	rediss+cluster://…, rediss+sentinel://…            over TLS
//
// with the query parameters tls_ca=FILE, tls_server_name=NAME and, for
// Sentinel, sentinel_user and sentinel_password. And "memory://" starts an
// in-process Redis-compatible server for this connection alone (what `dtq
// serve` runs on without --redis): for trying dtq and for tests, nothing
// is kept, and closing the connection stops it.
//
// Open does not read the server's settings; the dtq binary warns at start
// about those that put accepted work at risk (maxmemory-policy other than
// noeviction, no persistence): see docs/deployment.md.
func Open(ctx context.Context, url string) (*Redis, error) {
	c, err := redisconn.Open(ctx, url)
	if err != nil {
		return nil, err
	}
	return redisconn.Wrap(c), nil
}
