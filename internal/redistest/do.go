package redistest

import (
	"context"

	"github.com/redis/rueidis"
)

// Do sends one Redis command, args as Redis reads them (name first), on c
// and returns its reply: the raw commands a test needs to set a scene or
// look inside (destroy a group, read INFO), without a command builder in
// the package under test. The command names no key for rueidis's routing:
// on a Cluster client it goes to any node, so use it with one server (the
// suite's backends).
func Do(ctx context.Context, c rueidis.Client, args ...string) rueidis.RedisResult {
	return c.Do(ctx, c.B().Arbitrary(args...).Build())
}
