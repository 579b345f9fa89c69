package queue

import (
	"context"

	"github.com/dtq-dev/dtq/conn"
)

// Connect returns a connection to Redis at url: conn.Open, which says the
// forms url takes ("memory://" for an in-process server). Pass it to New;
// Close it when done.
func Connect(ctx context.Context, url string) (*conn.Redis, error) {
	return conn.Open(ctx, url)
}
