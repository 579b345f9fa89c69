package store

import (
	"context"
	"strconv"
	"strings"
	"time"

	"github.com/redis/rueidis"
)

// Retention of the history buckets: a minute bucket is kept for a day, an
// hour bucket for 30 days, each counted from its start.
const (
	HistoryMinuteKeep = 24 * time.Hour
	HistoryHourKeep   = 30 * 24 * time.Hour
)

// HistoryAdd is what one process counted of one queue in one minute: per
// task type, counters by name (history.go of the engine names them).
type HistoryAdd struct {
	Queue  string
	Minute int64 // Unix minutes
	Counts map[string]map[string]int64
}

// AddHistory adds counts to the minute and hour buckets of their queues, in
// one pipeline (each bucket's HINCRBYs, then its EXPIREAT: concurrent
// processes add to the same fields).
func (s *Store) AddHistory(ctx context.Context, adds []HistoryAdd) error {
	c := s.r
	var cmds rueidis.Commands
	for _, a := range adds {
		k := NewKeys(s.ns, a.Queue)
		hour := a.Minute / 60
		for _, b := range []struct {
			key string
			end int64 // Unix s the bucket expires
		}{
			{k.HistoryMinute(a.Minute), a.Minute*60 + int64(HistoryMinuteKeep/time.Second) + 60},
			{k.HistoryHour(hour), hour*3600 + int64(HistoryHourKeep/time.Second) + 3600},
		} {
			n := 0
			for typ, counts := range a.Counts {
				for name, v := range counts {
					if v != 0 {
						cmds = append(cmds, c.B().Hincrby().Key(b.key).Field(typ+"\n"+name).Increment(v).Build())
						n++
					}
				}
			}
			if n > 0 {
				cmds = append(cmds, c.B().Expireat().Key(b.key).Timestamp(b.end).Build())
			}
		}
	}
	if len(cmds) == 0 {
		return nil
	}
	for _, r := range c.DoMulti(ctx, cmds...) {
		if err := r.Error(); err != nil {
			return err
		}
	}
	return nil
}

// HistoryBucket is one bucket of a queue's history as stored: per task
// type, counters by name.
type HistoryBucket map[string]map[string]int64

// ReadHistory returns the buckets of queue from bucket from to bucket to
// (Unix minutes with hours false, Unix hours with hours true), in order;
// a bucket nothing was counted in is empty.
func (q *Queue) ReadHistory(ctx context.Context, hours bool, from, to int64) ([]HistoryBucket, error) {
	c := q.s.r
	if to < from {
		return nil, nil
	}
	cmds := make(rueidis.Commands, 0, to-from+1)
	for b := from; b <= to; b++ {
		key := q.k.HistoryMinute(b)
		if hours {
			key = q.k.HistoryHour(b)
		}
		cmds = append(cmds, c.B().Hgetall().Key(key).Build())
	}
	out := make([]HistoryBucket, len(cmds))
	for i, r := range c.DoMulti(ctx, cmds...) {
		m, err := r.AsStrMap()
		if err != nil {
			return nil, err
		}
		b := HistoryBucket{}
		for f, v := range m {
			typ, name, ok := strings.Cut(f, "\n")
			n, err := strconv.ParseInt(v, 10, 64)
			if !ok || err != nil {
				continue // not a counter of this layout
			}
			if b[typ] == nil {
				b[typ] = map[string]int64{}
			}
			b[typ][name] = n
		}
		out[i] = b
	}
	return out, nil
}
