// Package delivery holds what the task engine's store and the queue
// primitive (queue/) share about handing stream entries to competing
// consumers: the shortest visibility timeout either accepts, and how a
// Redis error is told apart — one a retry can fix, a consumer group that
// is gone (to recreate), a command that never left the client — and the
// Lua that recreates a lost consumer group inside their scripts (GroupLib).
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

// ReclaimEvery is how often a reader runs a reclaim pass for a visibility
// timeout: a quarter of it, from 10 ms to 1 s, so that an abandoned entry
// waits at most that long past its timeout, and an idle reader does not
// scan its streams more than a hundred times a second.
func ReclaimEvery(visibility time.Duration) time.Duration {
	return min(max(visibility/4, 10*time.Millisecond), time.Second)
}

// Reclaim paces one reader's reclaim passes (XAUTOCLAIM of entries idle
// past the visibility timeout) and keeps the pass's cursor in each stream
// it reads: the engine's bands, a subscription's topics. The zero value
// with Every set is ready; a nil or empty cursor means "0-0". It is not
// safe for concurrent use.
type Reclaim struct {
	Every   time.Duration // between passes (ReclaimEvery)
	Cursors []string      // where the next pass goes on, per stream
	last    time.Time     // the last pass began (zero: none yet)
	force   bool
}

// NewReclaim returns the pacing of a reader of streams streams with
// visibility timeout visibility; its first pass is due at once.
func NewReclaim(visibility time.Duration, streams int) *Reclaim {
	r := &Reclaim{Every: ReclaimEvery(visibility), Cursors: make([]string, streams)}
	for i := range r.Cursors {
		r.Cursors[i] = "0-0"
	}
	return r
}

// Due reports whether a pass is due at now: Every has passed since the
// last one began, none ran yet, or Force asked for one.
func (r *Reclaim) Due(now time.Time) bool {
	return r.force || r.last.IsZero() || now.Sub(r.last) >= r.Every
}

// Force makes the next pass due at once (entries were handed back).
func (r *Reclaim) Force() { r.force = true }

// Began records that a pass began at now.
func (r *Reclaim) Began(now time.Time) { r.last, r.force = now, false }

// Wait is how long a reader that found nothing may block at now before
// the next pass is due (0 when it is due).
func (r *Reclaim) Wait(now time.Time) time.Duration {
	if r.Due(now) {
		return 0
	}
	return r.Every - now.Sub(r.last)
}
