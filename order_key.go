package dtq

import (
	"context"
	"strconv"

	"github.com/dtq-dev/dtq/internal/keys"
)

// OrderKeyNext is how many waiting tasks Admin.OrderKey lists: the first
// of the key's line.
const OrderKeyNext = 100

// MaxOrderKeysLimit bounds Admin.OrderKeys' limit.
const MaxOrderKeysLimit = 1000

// OrderKeyLine is an order key's line in a queue (EnqueueOpts.OrderKey):
// the task in flight and those waiting behind it, as Admin.OrderKey reads it.
type OrderKeyLine struct {
	Queue string `json:"queue"`
	Key   string `json:"key"`
	// InFlight is the id of the key's task in flight (queued in its band,
	// scheduled or running), "" when the key has none.
	InFlight string `json:"in_flight,omitempty"`
	// Waiting counts the key's tasks waiting for it (QUEUED, OrderWaiting).
	Waiting int64 `json:"waiting"`
	// Next is the ids of the first OrderKeyNext waiting tasks, in the order
	// they will start.
	Next []string `json:"next"`
}

// OrderKeyInfo is an order key of a queue with a task in flight, as
// Admin.OrderKeys lists it.
type OrderKeyInfo struct {
	Key string `json:"key"`
	// InFlight is the id of the key's task in flight.
	InFlight string `json:"in_flight"`
	// Waiting counts the key's tasks waiting for it.
	Waiting int64 `json:"waiting"`
}

// OrderKey reads the line of order key key in queue: its task in flight,
// how many wait and the first OrderKeyNext of them, in order. A key without
// tasks has an empty line (no error). One round trip; the three reads in it
// are not atomic, so a key passed on meanwhile may show its new holder
// among the waiters too.
func (a *Admin) OrderKey(ctx context.Context, queue, key string) (*OrderKeyLine, error) {
	if err := checkQueue("queue", queue); err != nil {
		return nil, err
	}
	if !keys.ValidName(key) {
		return nil, invalid("key", "must be %s (got %q)", keys.NameRule, key)
	}
	l, err := a.store.Queue(queue).OrderKey(ctx, key, OrderKeyNext)
	if err != nil {
		return nil, err
	}
	return &OrderKeyLine{Queue: queue, Key: key, InFlight: l.Holder, Waiting: l.Waiting, Next: l.Next}, nil
}

// OrderKeys lists up to limit (1 to MaxOrderKeysLimit) of queue's order
// keys that have a task in flight, from cursor ("" for the first page), each
// with its task in flight and how many wait; next is the cursor of the
// following page ("" at the end). It walks the keys as Redis HSCAN does, a
// step at a time, each step's keys by name: a key held or freed during the
// walk may be listed or not, one held throughout is listed (once, unless
// Redis rehashes the hash meanwhile). A page may hold fewer than limit keys
// before the end. A cursor not from a previous page is a ValidationError.
func (a *Admin) OrderKeys(ctx context.Context, queue string, limit int, cursor string) (ks []OrderKeyInfo, next string, err error) {
	if err := checkQueue("queue", queue); err != nil {
		return nil, "", err
	}
	if limit <= 0 || limit > MaxOrderKeysLimit {
		return nil, "", invalid("limit", "must be 1-%d (got %d)", MaxOrderKeysLimit, limit)
	}
	cur, after, ok := parseOrderCursor(cursor)
	if !ok {
		return nil, "", invalid("cursor", "is not a cursor from a previous page")
	}
	q := a.store.Queue(queue)
	ks = []OrderKeyInfo{}
	// A step returns the keys of some of the hash's buckets, sometimes none,
	// sometimes more than asked (a small hash at once): a step's keys past
	// the page's end are read again by the next page, which starts at the
	// same step after the last key listed.
	for range 8 {
		got, c, err := q.OrderKeys(ctx, cur, limit-len(ks))
		if err != nil {
			return nil, "", err
		}
		for _, k := range got {
			if k.Key <= after {
				continue
			}
			if len(ks) == limit {
				return ks, orderCursor(cur, ks[len(ks)-1].Key), nil
			}
			ks = append(ks, OrderKeyInfo{Key: k.Key, InFlight: k.Holder, Waiting: k.Waiting})
		}
		if cur, after = c, ""; cur == 0 {
			return ks, "", nil
		}
		if len(ks) == limit {
			break
		}
	}
	return ks, orderCursor(cur, ""), nil
}

// orderCursor is the cursor of OrderKeys' next page: the HSCAN cursor of
// its first step and the last key listed of that step ("" for none).
func orderCursor(scan uint64, after string) string {
	return strconv.FormatUint(scan, 10) + ":" + after
}

// parseOrderCursor parses cursor, "" or an orderCursor.
func parseOrderCursor(cursor string) (scan uint64, after string, ok bool) {
	if cursor == "" {
		return 0, "", true
	}
	n, after, found := cutByte(cursor, ':')
	scan, err := strconv.ParseUint(n, 10, 64)
	return scan, after, found && err == nil && (after == "" || keys.ValidName(after))
}
