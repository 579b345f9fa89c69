package store

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"time"

	"github.com/dtq-dev/dtq/internal/taskid"
	"github.com/redis/rueidis"
)

// ScheduleDef is a schedule's definition as the periodic hash keeps it.
type ScheduleDef struct {
	Name       string          `json:"name"`
	Cron       string          `json:"cron"`
	TimeZone   string          `json:"tz"`
	Type       string          `json:"type"`
	Payload    json.RawMessage `json:"payload"`
	Priority   int             `json:"priority"`
	MaxAtt     int             `json:"max_attempts"`
	TimeoutMs  int64           `json:"timeout_ms"`
	Missed     string          `json:"missed"`
	CatchUpMax int             `json:"catch_up_max,omitempty"`
	Paused     bool            `json:"paused,omitempty"`
	Created    int64           `json:"created"` // Unix ms
	Updated    int64           `json:"updated"` // Unix ms
}

// ScheduleState is a schedule as stored: its definition (and the JSON it
// was read as, for Fire's check), next tick (0 when paused) and last fired
// tick (or the baseline it starts from) with the task that tick created
// ("" for a baseline).
type ScheduleState struct {
	Def        ScheduleDef
	Raw        string
	Next       int64
	LastTick   int64
	LastTaskID string
}

// Now returns the Redis clock, Unix ms.
func (q *Queue) Now(ctx context.Context) (int64, error) {
	c := q.s.r
	t, err := c.Do(ctx, c.B().Time().Build()).AsStrSlice()
	if err != nil {
		return 0, err
	}
	return redisMs(t)
}

func redisMs(t []string) (int64, error) {
	if len(t) != 2 {
		return 0, unexpected("time", t)
	}
	s, err1 := strconv.ParseInt(t[0], 10, 64)
	us, err2 := strconv.ParseInt(t[1], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, unexpected("time", t)
	}
	return s*1000 + us/1000, nil
}

// PutSchedule stores def. next is its next tick (0: paused, not due);
// baseline is the tick it starts after when it is new, or always with
// restart (a resume skips what was missed while paused). It reports
// whether the schedule existed.
func (q *Queue) PutSchedule(ctx context.Context, def ScheduleDef, next, baseline int64, restart bool) (existed bool, err error) {
	raw, err := json.Marshal(def)
	if err != nil {
		return false, err
	}
	nx := ""
	if next > 0 {
		nx = strconv.FormatInt(next, 10)
	}
	rs := "0"
	if restart {
		rs = "1"
	}
	n, err := scheduleScript.Exec(ctx, q.s.r, q.scheduleKeys(), []string{"put", def.Name, string(raw), nx,
		strconv.FormatInt(baseline, 10), rs}).AsInt64()
	return n == 1, err
}

// DeleteSchedule deletes schedule name (the tasks it fired stay); it
// reports whether it existed.
func (q *Queue) DeleteSchedule(ctx context.Context, name string) (bool, error) {
	n, err := scheduleScript.Exec(ctx, q.s.r, q.scheduleKeys(), []string{"del", name}).AsInt64()
	return n == 1, err
}

func (q *Queue) scheduleKeys() []string {
	return []string{q.k.Periodic(), q.k.PeriodicDue(), q.k.PeriodicFired(), q.k.Wakeup()}
}

// Schedules returns the queue's schedules, by name.
func (q *Queue) Schedules(ctx context.Context) ([]ScheduleState, error) {
	c := q.s.r
	res := c.DoMulti(ctx,
		c.B().Hgetall().Key(q.k.Periodic()).Build(),
		c.B().Hgetall().Key(q.k.PeriodicFired()).Build(),
		c.B().Zrange().Key(q.k.PeriodicDue()).Min("0").Max("-1").Withscores().Build())
	defs, err := res[0].AsStrMap()
	if err != nil {
		return nil, err
	}
	fired, err := res[1].AsStrMap()
	if err != nil {
		return nil, err
	}
	due, err := res[2].AsZScores()
	if err != nil {
		return nil, err
	}
	next := make(map[string]int64, len(due))
	for _, z := range due {
		next[z.Member] = int64(z.Score)
	}
	out := make([]ScheduleState, 0, len(defs))
	for name, raw := range defs {
		st, err := scheduleState(raw, fired[name])
		if err != nil {
			return nil, err
		}
		st.Next = next[name]
		out = append(out, st)
	}
	return out, nil
}

// Schedule returns schedule name of the queue; ok is false when there is
// none.
func (q *Queue) Schedule(ctx context.Context, name string) (st ScheduleState, ok bool, err error) {
	c := q.s.r
	res := c.DoMulti(ctx,
		c.B().Hget().Key(q.k.Periodic()).Field(name).Build(),
		c.B().Hget().Key(q.k.PeriodicFired()).Field(name).Build(),
		c.B().Zscore().Key(q.k.PeriodicDue()).Member(name).Build())
	raw, err := res[0].ToString()
	if rueidis.IsRedisNil(err) {
		return st, false, nil
	}
	if err != nil {
		return st, false, err
	}
	fired, err := res[1].ToString()
	if err != nil && !rueidis.IsRedisNil(err) {
		return st, false, err
	}
	if st, err = scheduleState(raw, fired); err != nil {
		return st, false, err
	}
	if next, err := res[2].AsFloat64(); err == nil {
		st.Next = int64(next)
	} else if !rueidis.IsRedisNil(err) {
		return st, false, err
	}
	return st, true, nil
}

func scheduleState(raw, fired string) (ScheduleState, error) {
	st := ScheduleState{Raw: raw}
	if err := json.Unmarshal([]byte(raw), &st.Def); err != nil {
		return st, unexpected("schedule", raw)
	}
	tick, id, _ := strings.Cut(fired, "|")
	st.LastTick, _ = strconv.ParseInt(tick, 10, 64)
	st.LastTaskID = id
	return st, nil
}

// DueSchedules returns the Redis clock and up to max schedules whose next
// tick has come, and the time until the earliest of the others (-1: none).
// A non-zero at (Unix ms) stands for the clock (tests on a fake clock).
func (q *Queue) DueSchedules(ctx context.Context, max int, at int64) (now int64, due []ScheduleState, wait time.Duration, err error) {
	c := q.s.r
	res := c.DoMulti(ctx, c.B().Time().Build(),
		c.B().Zrange().Key(q.k.PeriodicDue()).Min("0").Max(strconv.Itoa(max)).Withscores().Build())
	t, err := res[0].AsStrSlice()
	if err != nil {
		return 0, nil, -1, err
	}
	if now, err = redisMs(t); err != nil {
		return 0, nil, -1, err
	}
	if at != 0 {
		now = at
	}
	zs, err := res[1].AsZScores()
	if err != nil {
		return 0, nil, -1, err
	}
	wait = -1
	var names []string
	var nexts []int64
	for _, z := range zs {
		if int64(z.Score) > now {
			wait = time.Duration(int64(z.Score)-now) * time.Millisecond
			break
		}
		if len(names) < max {
			names = append(names, z.Member)
			nexts = append(nexts, int64(z.Score))
		}
	}
	if len(names) == 0 {
		return now, nil, wait, nil
	}
	if len(names) == max && wait < 0 {
		wait = 0 // more may be due
	}
	res = c.DoMulti(ctx, c.B().Hmget().Key(q.k.Periodic()).Field(names...).Build(),
		c.B().Hmget().Key(q.k.PeriodicFired()).Field(names...).Build())
	defs, err := res[0].ToArray()
	if err != nil {
		return 0, nil, -1, err
	}
	fired, err := res[1].ToArray()
	if err != nil {
		return 0, nil, -1, err
	}
	for i := range names {
		raw, err := defs[i].ToString()
		if err != nil {
			continue // deleted meanwhile
		}
		f, _ := fired[i].ToString()
		st, err := scheduleState(raw, f)
		if err != nil {
			return 0, nil, -1, err
		}
		st.Next = nexts[i]
		due = append(due, st)
	}
	return now, due, wait, nil
}

// Fire creates one task per tick of st (Unix ms, ascending) that is after
// its last fired tick, and sets its next tick; now (the Redis clock, Unix
// ms) dates the new tasks' ids. Nothing fires when the definition changed
// since st was read (changed). It returns the ids of the tasks created.
func (q *Queue) Fire(ctx context.Context, st ScheduleState, ticks []int64, traces []string, next, now int64) (ids []string, changed bool, err error) {
	d := st.Def
	ks := q.k.bands([]string{q.k.Periodic(), q.k.PeriodicDue(), q.k.PeriodicFired()})
	args := []string{d.Name, st.Raw, strconv.FormatInt(next, 10), q.k.Events(), d.Type, rueidis.BinaryString(d.Payload),
		itoa(d.Priority), itoa(d.MaxAtt), strconv.FormatInt(d.TimeoutMs, 10), itoa(len(ticks))}
	for i, tick := range ticks {
		id := taskid.New(q.name, time.UnixMilli(now))
		_, ulid, _ := taskid.Parse(id)
		ks = append(ks, q.k.Task(ulid))
		trace := ""
		if i < len(traces) {
			trace = traces[i]
		}
		args = append(args, strconv.FormatInt(tick, 10), id, trace)
	}
	res, err := fireScript.Exec(ctx, q.s.r, ks, args).ToArray()
	if err != nil {
		return nil, false, err
	}
	if len(res) != 2 {
		return nil, false, unexpected("fire", res)
	}
	ids, err = res[0].AsStrSlice()
	if err != nil {
		return nil, false, unexpected("fire", res)
	}
	c, _ := res[1].AsInt64()
	return ids, c == 1, nil
}
