package dtq

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/dtq-dev/dtq/internal/store"
)

// MaxUniqueKey bounds UniqueOpts.Key, in bytes.
const MaxUniqueKey = 256

// defaultUniqueStates are the states a unique task holds its lock in by
// default.
var defaultUniqueStates = []Status{StatusQueued, StatusScheduled, StatusRunning}

// checkUnique validates u (nil: not unique) and returns its states as
// status initials.
func checkUnique(u *UniqueOpts, idemKey string) (string, error) {
	if u == nil {
		return "", nil
	}
	if idemKey != "" {
		return "", invalid("unique", "and idempotency_key are exclusive")
	}
	if len(u.Key) > MaxUniqueKey || !utf8.ValidString(u.Key) {
		return "", invalid("unique.key", "must be valid UTF-8 of at most %d bytes", MaxUniqueKey)
	}
	if u.Period < 0 || (u.Period > 0 && u.Period < time.Second) || u.Period > MaxDelay {
		return "", invalid("unique.period", "must be from 1s to %v (got %v)", MaxDelay, u.Period)
	}
	states := u.States
	if len(states) == 0 {
		states = defaultUniqueStates
	}
	var b strings.Builder
	for _, st := range states {
		switch st {
		case StatusQueued, StatusScheduled, StatusRunning, StatusSucceeded, StatusDead, StatusCancelled:
		default:
			return "", invalid("unique.states", "has %q, which is not a status", st)
		}
		if c := store.StatusInitial(string(st)); !strings.ContainsRune(b.String(), rune(c)) {
			b.WriteByte(c)
		}
	}
	return b.String(), nil
}

// uniqueLock names the lock of a task of type typ with payload data: by
// its key or, without one, its payload (the store adds the period bucket,
// on the Redis clock).
func uniqueLock(typ string, u *UniqueOpts, data []byte) string {
	parts := []string{typ, "args", string(data)}
	if u.Key != "" {
		parts = []string{typ, "key", u.Key}
	}
	h := sha256.New()
	for _, s := range parts {
		h.Write([]byte(strconv.Itoa(len(s))))
		h.Write([]byte{':'})
		h.Write([]byte(s))
	}
	return hex.EncodeToString(h.Sum(nil))
}

// enqueueUnique creates a unique task, or finds the one holding its lock.
func (c *engine) enqueueUnique(ctx context.Context, q *queueState, item store.EnqueueItem, opts *EnqueueOpts, states string) (*EnqueueResult, error) {
	u := opts.Unique
	res, err := q.store.EnqueueUnique(ctx, store.EnqueueConfig{Durability: c.durability()}, store.UniqueItem{
		Item: item, Lock: uniqueLock(item.Type, u, item.Payload), Period: u.Period, States: states})
	if err != nil {
		return nil, err
	}
	return c.enqueueResult(ctx, q, item, res, opts)
}
