package store

import (
	"context"
	_ "embed"
	"strconv"
	"strings"
	"time"

	"github.com/dtq-dev/dtq/internal/script"
	"github.com/dtq-dev/dtq/internal/taskid"
	"github.com/redis/rueidis"
)

var (
	//go:embed debounce.lua
	debounceSource string
	//go:embed debounce_sweep.lua
	debounceSweepSource string

	debounceScript      = script.New("debounce", libFor(debounceSource), debounceSource)
	debounceSweepScript = script.New("debounce_sweep", libFor(debounceSweepSource), debounceSweepSource)
)

// Joined is the outcome of a debounced submission that joined the pending
// task of its identity (ID): nothing was created.
const Joined EnqueueCode = 3

// DebounceItem is one debounced submission: Item, under the debounce
// identity Identity (hex, made by the caller from the task's type and its
// key), due Period after the identity's latest submission and at most
// MaxWait (0: no bound) after its first; KeepFirst keeps the pending
// task's payload instead of writing Item's. Item's Delay and RunAt are not
// used.
type DebounceItem struct {
	Item      EnqueueItem
	Identity  string
	Period    time.Duration
	MaxWait   time.Duration
	KeepFirst bool
}

// EnqueueDebounced submits d: it joins the identity's pending task (code
// Joined, with that task's record as it is now) or creates a new SCHEDULED
// one (Created, no record), or refuses a new one beyond cfg.MaxDepth
// (Full). A submission that creates takes one round trip, one that joins
// two (the script needs the pending task's hash in its KEYS).
func (q *Queue) EnqueueDebounced(ctx context.Context, cfg EnqueueConfig, d DebounceItem) (EnqueueResult, *Record, error) {
	it := d.Item
	id := it.RandomID
	if id == "" {
		id = taskid.New(q.name, time.Now())
	}
	_, ulid, _ := taskid.Parse(id)
	own := q.k.Task(ulid)
	pending, pendingKey := "", own
	keep := "0"
	if d.KeepFirst {
		keep = "1"
	}
	for range 8 { // the pending task changed between two calls: call again
		ks := q.k.bands([]string{q.k.Debounce(), pendingKey, q.k.Schedule(), q.k.Wakeup(), q.k.Info()})
		ks = append(ks, q.k.GroupWait(), own, q.k.OrderLine())
		args := []string{d.Identity, pending, id, it.Type, rueidis.BinaryString(it.Payload), itoa(it.Priority),
			itoa(it.MaxAttempts), ms(it.Timeout), it.Group, it.LimitKey, it.Trace, ms(d.Period), ms(d.MaxWait), keep,
			strconv.FormatInt(cfg.MaxDepth, 10)}
		res, err := debounceScript.ExecDurable(ctx, q.s.r, cfg.Durability, ks, args)
		if err != nil {
			return EnqueueResult{}, nil, err
		}
		v, err := res.ToArray()
		if err != nil || len(v) != 4 {
			return EnqueueResult{}, nil, unexpected("debounce", v)
		}
		code, _ := v[0].AsInt64()
		rid, _ := v[1].ToString()
		nowS, _ := v[2].ToString()
		now, _ := strconv.ParseInt(nowS, 10, 64)
		switch code {
		case 0:
			pending = rid
			if pendingKey, err = q.namedTaskKey(rid, own); err != nil {
				return EnqueueResult{}, nil, unexpected("debounce pending task", rid)
			}
			continue
		case 3:
			dueS, _ := v[3].ToString()
			due, _ := strconv.ParseInt(dueS, 10, 64)
			return EnqueueResult{Code: Created, ID: rid, Status: StatusScheduled, Created: now, Due: due}, nil, nil
		case 2:
			h, err := v[3].AsStrMap()
			if err != nil {
				return EnqueueResult{}, nil, unexpected("debounce", v[3])
			}
			return EnqueueResult{Code: Joined, ID: rid}, recordOf(rid, q.name, h, nil, 0, ""), nil
		case -2:
			return EnqueueResult{Code: Full}, nil, nil
		}
		return EnqueueResult{}, nil, unexpected("debounce", code)
	}
	return EnqueueResult{}, nil, unexpected("debounce", "the pending task kept changing")
}

// SweepDebounce deletes up to count fields of the debounce hash whose task
// is no longer pending, scanning from cursor; it returns the next cursor
// ("0": the scan is complete) and how many it deleted.
func (q *Queue) SweepDebounce(ctx context.Context, cursor string, count int) (string, int, error) {
	return q.sweepHash(ctx, q.k.Debounce(), cursor, count, debounceSweepScript, func(v string) string {
		id, _, _ := strings.Cut(v, " ")
		return ulidOf(id)
	})
}
