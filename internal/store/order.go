package store

import (
	"context"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/redis/rueidis"
)

// OrderLine is one order key's line in a queue: the task in flight and the
// tasks waiting behind it.
type OrderLine struct {
	// Holder is the id ("<queue>-<ULID>") of the key's task in flight, ""
	// when the key has none.
	Holder string
	// Next is the ids of the first waiters, in submission order.
	Next []string
	// Waiting counts every waiter of the key.
	Waiting int64
}

// OrderKeyState is an order key with a task in flight (OrderKeys).
type OrderKeyState struct {
	Key     string
	Holder  string // the id of its task in flight
	Waiting int64  // its waiters
}

// orderState parses an OrderHold value: the holder's ULID, the line's
// head and tail, how many wait, and the band entry written for the holder
// (zeros and "" when malformed).
func orderState(v string) (holder string, head, tail, waiting int64, entry string) {
	p := strings.Split(v, "|")
	if len(p) != 5 {
		return v, 0, 0, 0, ""
	}
	head, _ = strconv.ParseInt(p[1], 10, 64)
	tail, _ = strconv.ParseInt(p[2], 10, 64)
	waiting, _ = strconv.ParseInt(p[3], 10, 64)
	return p[0], head, tail, waiting, p[4]
}

// orderTask returns the task id of ULID ulid.
func (q *Queue) orderTask(ulid string) string {
	if len(ulid) != 26 {
		return q.name + "-" + invalidULID
	}
	return q.name + "-" + ulid
}

// OrderKey reads key's line: its holder, up to n of its waiters in order
// and how many wait. Not atomic: a key passed on between its reads may
// show the new holder among the waiters.
func (q *Queue) OrderKey(ctx context.Context, key string, n int) (OrderLine, error) {
	c := q.s.r
	line := OrderLine{Next: []string{}}
	v, err := c.Do(ctx, c.B().Hget().Key(q.k.OrderHold()).Field(key).Build()).ToString()
	switch {
	case rueidis.IsRedisNil(err):
		return line, nil
	case err != nil:
		return line, err
	}
	holder, head, tail, waiting, _ := orderState(v)
	line.Holder, line.Waiting = q.orderTask(holder), waiting
	// the waiters in order, skipping the gaps of those that left
	for pos := head; pos < tail && len(line.Next) < n; {
		end := min(tail, pos+int64(n-len(line.Next)))
		fields := make([]string, 0, end-pos)
		for ; pos < end; pos++ {
			fields = append(fields, key+"|"+strconv.FormatInt(pos, 10))
		}
		vs, err := c.Do(ctx, c.B().Hmget().Key(q.k.OrderLine()).Field(fields...).Build()).ToArray()
		if err != nil {
			return line, err
		}
		for _, r := range vs {
			if w, err := r.ToString(); err == nil {
				line.Next = append(line.Next, q.orderTask(lineULID(w)))
			}
		}
	}
	return line, nil
}

// lineULID returns the ULID of an OrderLine value ("" when malformed).
func lineULID(v string) string {
	p := strings.SplitN(v, "|", 3)
	if len(p) < 3 {
		return ""
	}
	return p[1]
}

// OrderKeys reads one HSCAN step of OrderHold from cursor ("0" to start),
// count its hint: the keys with a task in flight it returned (by name),
// each with its holder and how many wait, and the next cursor ("0": the
// scan is done). A step may return more or fewer keys than count, none
// even before the scan is done. One round trip.
func (q *Queue) OrderKeys(ctx context.Context, cursor uint64, count int) ([]OrderKeyState, uint64, error) {
	c := q.s.r
	e, err := c.Do(ctx, c.B().Hscan().Key(q.k.OrderHold()).Cursor(cursor).Count(int64(count)).Build()).AsScanEntry()
	if err != nil {
		return nil, 0, err
	}
	var out []OrderKeyState
	for i := 0; i+1 < len(e.Elements); i += 2 {
		holder, _, _, waiting, _ := orderState(e.Elements[i+1])
		out = append(out, OrderKeyState{Key: e.Elements[i], Holder: q.orderTask(holder), Waiting: waiting})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	return out, e.Cursor, nil
}

// lineCheck is a record whose hash says it waits for its order key.
type lineCheck struct {
	i                  int // its index in the records
	queue, field, ulid string
}

// confirmInLine clears OrderWaiting of the records of checks that no
// longer wait in their OrderLine field: a task the key passed to keeps
// FieldOrderWait in its hash (lib_order.lua's order_release). One round
// trip.
func (s *Store) confirmInLine(ctx context.Context, out []*Record, checks []lineCheck) error {
	c := s.r
	cmds := make(rueidis.Commands, len(checks))
	for j, l := range checks {
		cmds[j] = c.B().Hget().Key(NewKeys(s.ns, l.queue).OrderLine()).Field(l.field).Build()
	}
	for j, r := range c.DoMulti(ctx, cmds...) {
		v, err := r.ToString()
		if err != nil && !rueidis.IsRedisNil(err) {
			return err
		}
		if lineULID(v) != checks[j].ulid {
			out[checks[j].i].OrderWaiting = false
		}
	}
	return nil
}

// lightCand is a task getMany found an OrderIndex field of (index) and
// neither a hash's fields nor a packed record: an ordered task without a
// hash. It keeps what getMany read of it.
type lightCand struct {
	i                int // its index in the records
	l                located
	index, run, prog string
	h                map[string]string
	steps            map[string]StepRecord
}

// findLight sets the records of cands (out[c.i]): an ordered task without
// a hash, waiting in its key's line (its OrderLine value is its record),
// or holding its key (its band entry, as OrderHold names it, holds its
// fields, with its Run field once started); one that is neither any more
// is built from what getMany read (nil when nothing). Up to two round
// trips, for these only.
func (s *Store) findLight(ctx context.Context, out []*Record, cands []lightCand) error {
	c := s.r
	type where struct {
		prio       int
		key, field string
		line, hold string
		eid        string
		e          map[string]string
	}
	ws := make([]*where, len(cands))
	var look rueidis.Commands
	var lookOf []int
	for j, x := range cands {
		p := strings.SplitN(x.index, "|", 3)
		if len(p) != 3 {
			continue
		}
		w := &where{prio: atoi(p[0]), key: p[2]}
		ws[j] = w
		k := NewKeys(s.ns, x.l.queue)
		if p[1] != "" {
			w.field = p[2] + "|" + p[1]
			look = append(look, c.B().Hget().Key(k.OrderLine()).Field(w.field).Build())
			lookOf = append(lookOf, j)
		}
		look = append(look, c.B().Hget().Key(k.OrderHold()).Field(w.key).Build())
		lookOf = append(lookOf, -j-1)
	}
	if len(look) > 0 {
		for n, r := range c.DoMulti(ctx, look...) {
			v, err := r.ToString()
			if err != nil && !rueidis.IsRedisNil(err) {
				return err
			}
			if j := lookOf[n]; j >= 0 {
				ws[j].line = v
			} else {
				ws[-j-1].hold = v
			}
		}
	}
	var reads rueidis.Commands
	var readOf []int
	for j, w := range ws {
		if w == nil || lineULID(w.line) == cands[j].l.ulid {
			continue
		}
		if holder, _, _, _, eid := orderState(w.hold); holder == cands[j].l.ulid && eid != "" {
			w.eid = eid
			reads = append(reads, c.B().Xrange().Key(NewKeys(s.ns, cands[j].l.queue).Band(w.prio)).Start(w.eid).End(w.eid).Build())
			readOf = append(readOf, j)
		}
	}
	if len(reads) > 0 {
		for n, r := range c.DoMulti(ctx, reads...) {
			xs, err := r.AsXRange()
			if err != nil {
				return err
			}
			if len(xs) == 1 {
				ws[readOf[n]].e = xs[0].FieldValues
			}
		}
	}
	for j, x := range cands {
		w := ws[j]
		switch {
		case w != nil && lineULID(w.line) == x.l.ulid:
			out[x.i] = lineRecord(x.l, w.key, w.line)
		case w != nil && w.e != nil:
			out[x.i] = buildRecord(x.l, x.h, w.e, w.prio, w.eid, x.run, x.prog, x.steps)
		default:
			out[x.i] = buildRecord(x.l, x.h, nil, 0, "", x.run, x.prog, x.steps)
		}
	}
	return nil
}

// lineRecord is the record of light task l waiting in the line of order
// key key, from its OrderLine value v: QUEUED, waiting for its key.
func lineRecord(l located, key, v string) *Record {
	head, payload, ok := strings.Cut(v, "\n")
	f := strings.Split(head, "|")
	rest := strings.SplitN(payload, "\n", 9)
	if !ok || len(f) != 5 || len(rest) != 9 {
		return nil
	}
	return &Record{ID: l.id, Queue: l.queue, Status: StatusQueued, Type: rest[0], Payload: []byte(rest[8]), Priority: atoi(f[2]),
		MaxAttempts: atoi(rest[1]), Timeout: time.Duration(atoi64(rest[2])) * time.Millisecond, Created: atoi64(rest[3]),
		Attempt: atoi(f[4]), Idem: rest[4], Trace: rest[6], Parent: rest[7], OrderKey: key, OrderWaiting: true}
}
