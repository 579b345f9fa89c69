// Package delivery holds what the task engine's store and the queue
// primitive (queue/) share about handing stream entries to competing
// consumers: the shortest visibility timeout either accepts, and how a
// Redis error is told apart — one a retry can fix, a consumer group that
// is gone (to recreate), a command that never left the client.
package delivery

import (
	"errors"
	"net"
	"strings"
	"time"

	"github.com/redis/rueidis"
)

// MinVisibility is the shortest visibility timeout a Worker or a queue
// Subscription accepts: holders renew every quarter of it, and a shorter
// one makes renewals race the round trips that carry them.
const MinVisibility = 20 * time.Millisecond

// IsNoGroup reports whether err is Redis's NOGROUP answer: the consumer
// group (or its stream) is gone and must be recreated.
func IsNoGroup(err error) bool {
	rerr, ok := rueidis.IsRedisErr(err)
	return ok && strings.HasPrefix(rerr.Error(), "NOGROUP")
}

// Transient reports whether retrying is expected to fix err: network and
// timeout errors, and Redis errors of a server that is loading, failing
// over, paused, out of memory for now, or moving slots (and a missing
// group, which the retry recreates).
func Transient(err error) bool {
	rerr, ok := rueidis.IsRedisErr(err)
	if !ok {
		return true
	}
	code, _, _ := strings.Cut(rerr.Error(), " ")
	switch code {
	case "LOADING", "READONLY", "MASTERDOWN", "CLUSTERDOWN", "TRYAGAIN", "MOVED", "ASK",
		"BUSY", "NOSCRIPT", "OOM", "UNBLOCKED", "NOREPLICAS", "NOGROUP":
		return true
	}
	return false
}

// NotSent reports whether err proves the command never reached Redis (the
// connection could not be made), so that retrying it cannot apply it twice.
func NotSent(err error) bool {
	var op *net.OpError
	return errors.As(err, &op) && op.Op == "dial"
}
