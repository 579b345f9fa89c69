package taskscript

import (
	"context"
	"errors"
	"strconv"

	"github.com/dtq-dev/dtq/internal/keys"
	"github.com/redis/rueidis"
)

// Plain-command paths: work that needs no check inside Redis costs far less
// as plain commands than through a script (whose every argument and reply
// crosses into Lua).

// EnqueuePlain creates tasks that need no check — no idempotency key, no
// delay or run-at, no depth bound — with one MULTI/EXEC of plain commands:
// per task HSET (QUEUED), XADD to its band and ZADD to the index, then the
// queue's counters. Created is each item's creation time (Unix ms, the
// submitting client's clock, as in the task id).
// With d.Replicas > 0, a WAIT follows the transaction on its connection.
func EnqueuePlain(ctx context.Context, c rueidis.Client, k keys.Tasks, d Durability, items []EnqueueItem) ([]EnqueueResult, error) {
	cmds := make(rueidis.Commands, 0, 3*len(items)+keys.Bands+4)
	cmds = append(cmds, c.B().Multi().Build())
	var perBand [keys.Bands]int64
	for _, it := range items {
		created := strconv.FormatInt(it.Created, 10)
		cmds = append(cmds,
			c.B().Hset().Key(k.Task(it.ULID)).FieldValue().
				FieldValue("type", it.Type).FieldValue("payload", rueidis.BinaryString(it.Payload)).
				FieldValue("prio", itoa(it.Priority)).FieldValue("status", "QUEUED").
				FieldValue("max_att", itoa(it.MaxAttempts)).FieldValue("timeout", ms(it.Timeout)).
				FieldValue("created", created).Build(),
			c.B().Xadd().Key(k.Band(it.Priority)).Id("*").FieldValue().FieldValue("i", it.ID).
				FieldValue("t", it.Type).FieldValue("p", rueidis.BinaryString(it.Payload)).
				FieldValue("m", itoa(it.MaxAttempts)).FieldValue("o", ms(it.Timeout)).FieldValue("c", created).Build(),
			c.B().Zadd().Key(k.Index()).ScoreMember().ScoreMember(float64(it.Created), it.ID).Build(),
		)
		perBand[it.Priority]++
	}
	n := int64(len(items))
	cmds = append(cmds,
		c.B().Hincrby().Key(k.Info()).Field("depth").Increment(n).Build(),
		c.B().Hincrby().Key(k.Info()).Field("submitted").Increment(n).Build())
	for p, cnt := range perBand {
		if cnt > 0 {
			cmds = append(cmds, c.B().Hincrby().Key(k.Info()).Field("q"+itoa(p)).Increment(cnt).Build())
		}
	}
	cmds = append(cmds, c.B().Exec().Build())
	var res []rueidis.RedisResult
	if d.Replicas > 0 {
		res = doPinned(ctx, c, d, cmds...)
		wait := res[len(res)-1]
		res = res[:len(res)-1]
		if err := res[len(res)-1].Error(); err == nil {
			if err := d.check(wait); err != nil {
				return nil, err
			}
		}
	} else {
		res = c.DoMulti(ctx, cmds...)
	}
	for _, r := range res[:len(res)-1] {
		if err := r.Error(); err != nil {
			return nil, err
		}
	}
	exec, err := res[len(res)-1].ToArray()
	if err != nil {
		return nil, err
	}
	for _, r := range exec {
		if err := r.Error(); err != nil {
			return nil, err
		}
	}
	if len(exec) != len(cmds)-2 {
		return nil, errors.New("taskscript: enqueue transaction was not executed")
	}
	out := make([]EnqueueResult, len(items))
	for i, it := range items {
		out[i] = EnqueueResult{Code: Created, ID: it.ID}
	}
	return out, nil
}

// ReadPlanned claims up to credit entries for consumer with plain commands,
// highest priority first: it reads the queue's paused flag and per-band
// queued counts (one HMGET), then runs one XREADGROUP per band that holds
// tasks, asking each for what its count says, until the credit is used —
// all pipelined after the counts are known. The counts are kept by the
// scripts and can lag a moment behind; a read finding less is harmless.
// It returns no entries when the counts show nothing queued.
func ReadPlanned(ctx context.Context, c rueidis.Client, k keys.Tasks, group, consumer string, credit int) (paused bool, entries []Entry, err error) {
	fields := []string{"paused"}
	for p := keys.Bands - 1; p >= 0; p-- {
		fields = append(fields, "q"+itoa(p))
	}
	v, err := c.Do(ctx, c.B().Hmget().Key(k.Info()).Field(fields...).Build()).ToArray()
	if err != nil {
		return false, nil, err
	}
	if s, _ := v[0].ToString(); s == "1" {
		return true, nil, nil
	}
	var cmds rueidis.Commands
	var bandOf []int
	left := credit
	for i, p := 1, keys.Bands-1; p >= 0 && left > 0; i, p = i+1, p-1 {
		s, _ := v[i].ToString()
		queued, _ := strconv.Atoi(s)
		if queued <= 0 {
			continue
		}
		take := min(left, queued)
		left -= take
		cmds = append(cmds, c.B().Xreadgroup().Group(group, consumer).Count(int64(take)).Streams().Key(k.Band(p)).Id(">").Build())
		bandOf = append(bandOf, p)
	}
	if len(cmds) == 0 {
		return false, nil, nil
	}
	for i, r := range c.DoMulti(ctx, cmds...) {
		streams, err := r.AsXRead()
		if err != nil && !rueidis.IsRedisNil(err) {
			return false, entries, err
		}
		for _, e := range streams[k.Band(bandOf[i])] {
			if entry, ok := entryOf(bandOf[i], e); ok {
				entries = append(entries, entry)
			} // else not a task entry: the script read path drops it
		}
	}
	return false, entries, nil
}
