package store

import (
	"context"
	"strconv"
	"time"

	"github.com/dtq-dev/dtq/internal/taskid"
	"github.com/redis/rueidis"
)

// UniqueItem is one unique task to create: Item under lock Lock (hex, made
// by the caller from the task's type and its key or payload), per Period
// of the Redis clock when set, held while the holder's status is one of
// States (status initials: Q queued, S scheduled, R running, D dead, U
// succeeded, C cancelled).
type UniqueItem struct {
	Item   EnqueueItem
	Lock   string
	Period time.Duration
	States string
}

// StatusInitial is the initial of status in UniqueItem.States.
func StatusInitial(status string) byte {
	switch status {
	case StatusSucceeded:
		return 'U'
	default:
		return status[0]
	}
}

// EnqueueUnique creates u's task unless the lock's holder is in its
// states: then it returns code Replay with the holder's id (a duplicate).
// A free lock takes one round trip; a held one two (the script needs the
// holder's hash in its KEYS).
func (q *Queue) EnqueueUnique(ctx context.Context, cfg EnqueueConfig, u UniqueItem) (EnqueueResult, error) {
	it := u.Item
	id := it.RandomID
	if id == "" {
		id = taskid.New(q.name, time.Now())
	}
	_, ulid, _ := taskid.Parse(id)
	own := q.k.Task(ulid)
	holder, holderKey := "", own
	for range 8 { // the holder changed between two calls: call again
		ks := q.k.bands([]string{q.k.Unique(), holderKey, q.k.Schedule(), q.k.Wakeup()})
		ks = append(ks, own, q.k.GroupWait(), q.k.GroupCount())
		args := []string{u.Lock, holder, u.States, id, it.Type, rueidis.BinaryString(it.Payload), itoa(it.Priority),
			itoa(it.MaxAttempts), ms(it.Timeout), strconv.FormatInt(it.RunAt, 10), ms(it.Delay), ms(u.Period), it.Group, it.LimitKey, it.Trace}
		res, err := uniqueScript.ExecDurable(ctx, q.s.r, cfg.Durability, ks, args)
		if err != nil {
			return EnqueueResult{}, err
		}
		v, err := res.ToArray()
		if err != nil || len(v) != 3 {
			return EnqueueResult{}, unexpected("unique", v)
		}
		code, _ := v[0].AsInt64()
		rid, _ := v[1].ToString()
		nowS, _ := v[2].ToString()
		now, _ := strconv.ParseInt(nowS, 10, 64)
		switch code {
		case 0:
			holder = rid
			if holderKey, err = q.namedTaskKey(rid, own); err != nil {
				return EnqueueResult{}, unexpected("unique holder", rid)
			}
			continue
		case 1, 4:
			return EnqueueResult{Code: Created, ID: rid, Status: StatusQueued, Created: now, GroupWaiting: code == 4}, nil
		case 3:
			due := it.RunAt
			if it.Delay > 0 {
				due = now + it.Delay.Milliseconds()
			}
			return EnqueueResult{Code: Created, ID: rid, Status: StatusScheduled, Created: now, Due: due}, nil
		case 2:
			return EnqueueResult{Code: Replay, ID: rid}, nil
		}
		return EnqueueResult{}, unexpected("unique", code)
	}
	return EnqueueResult{}, unexpected("unique", "the lock's holder kept changing")
}

// SweepUnique frees up to count unique locks whose holders are gone,
// scanning the uniq hash from cursor; it returns the next cursor ("0":
// the scan is complete) and how many it freed.
func (q *Queue) SweepUnique(ctx context.Context, cursor string, count int) (string, int, error) {
	return q.sweepHash(ctx, q.k.Unique(), cursor, count, uniqueSweepScript, func(holder string) string {
		_, ulid, err := taskid.Parse(holder)
		if err != nil {
			return invalidULID
		}
		return ulid
	})
}

// namedTaskKey is the hash key of task id, which a script answered to be
// called again with (own when id is "": none).
func (q *Queue) namedTaskKey(id, own string) (string, error) {
	if id == "" {
		return own, nil
	}
	_, ulid, err := taskid.Parse(id)
	if err != nil {
		return "", err
	}
	return q.k.Task(ulid), nil
}

func mustUint(s string) uint64 {
	n, _ := strconv.ParseUint(s, 10, 64)
	return n
}
