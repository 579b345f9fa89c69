package dtq

import (
	"context"

	"github.com/dtq-dev/dtq/internal/redisconn"
	"github.com/redis/rueidis"
)

// Connect returns a Redis client for url built with the settings dtq needs
// (client-side caching off; Cluster, Sentinel and TLS as the URL says),
// after checking that the server is Redis 7.0 or later. Pass it to
// NewClient (and to queue.New: one client serves both); Close it when done.
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
// in-process Redis-compatible server for this client alone (what `dtq
// serve` runs on without --redis): for trying dtq and for tests, nothing is
// kept, and closing the client stops it.
//
// Connect does not read the server's settings; the dtq binary warns at
// start about those that put accepted work at risk (maxmemory-policy other
// than noeviction, no persistence): see docs/deployment.md.
func Connect(ctx context.Context, url string) (rueidis.Client, error) {
	return redisconn.Open(ctx, url)
}
