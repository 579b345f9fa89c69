package queue

import (
	"context"

	"github.com/dtq-dev/dtq/internal/redisconn"
	"github.com/redis/rueidis"
)

// Connect returns a Redis client for url built with the settings the queue
// needs (client-side caching off; Cluster, Sentinel and TLS as the URL
// says), after checking that the server is Redis 7.0 or later. Pass it to
// New; Close it when done.
//
// url takes the forms of the dtq binary's --redis: redis://, rediss://,
// redis+cluster://, redis+sentinel:// and their rediss+ forms, with the
// query parameters tls_ca, tls_server_name, sentinel_user and
// sentinel_password (see dtq.Connect for the grammar); "memory://" starts
// an in-process Redis-compatible server for this client alone, for trying
// and for tests (nothing is kept; closing the client stops it).
func Connect(ctx context.Context, url string) (rueidis.Client, error) {
	return redisconn.Open(ctx, url)
}
