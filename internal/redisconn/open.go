package redisconn

import (
	"context"

	"github.com/dtq-dev/dtq/internal/embedded"
	"github.com/redis/rueidis"
)

// Memory is the URL of the embedded in-memory backend (internal/embedded):
// an in-process Redis-compatible server started for the client alone.
const Memory = "memory://"

// Open connects to what rawURL names: a Redis URL of the package comment
// (Connect), or Memory, for which it starts an embedded server that the
// client's Close stops.
func Open(ctx context.Context, rawURL string) (rueidis.Client, error) {
	if rawURL != Memory {
		return Connect(ctx, rawURL)
	}
	b, err := embedded.Start()
	if err != nil {
		return nil, err
	}
	return memoryClient{Client: b.Client, b: b}, nil
}

// memoryClient is the client of an embedded server: closing it stops the
// server too.
type memoryClient struct {
	rueidis.Client
	b *embedded.Backend
}

func (c memoryClient) Close() { c.b.Close() }
