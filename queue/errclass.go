package queue

import (
	"errors"
	"net"
	"strings"

	"github.com/redis/rueidis"
)

// transient reports whether retrying is expected to fix err: network and
// timeout errors, and Redis errors of a server that is loading, failing
// over, paused, out of memory for now, or moving slots.
func transient(err error) bool {
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

// notSent reports whether err proves the command never reached Redis (the
// connection could not be made), so that retrying it cannot apply it twice.
func notSent(err error) bool {
	var op *net.OpError
	return errors.As(err, &op) && op.Op == "dial"
}
