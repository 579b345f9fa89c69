package store

import (
	"context"
	_ "embed"
	"strings"
	"time"

	"github.com/dtq-dev/dtq/internal/script"
	"github.com/redis/rueidis"
)

var (
	//go:embed step.lua
	stepSource string

	stepScript = script.New("step", libFor(stepSource), stepSource)
)

// StepKeep is how long a task's step records are kept after their last
// write, or after a run read them (Steps), while the task has not ended:
// a task that does not run for that long loses them.
const StepKeep = 7 * 24 * time.Hour

// StepRecord is a durable step's recorded result.
type StepRecord struct {
	Run    int   // the run that recorded it (0: a signal's or a timeout's)
	At     int64 // Unix ms (Redis clock)
	Result []byte
	// By says what wrote a wait's record: StepBySignal (Result is the
	// signal's payload) or StepByTimeout (no signal came in time); "" for
	// a run's.
	By string
}

// What wrote a step record other than a run (StepRecord.By).
const (
	StepBySignal  = "signal"
	StepByTimeout = "timeout"
)

// Steps reads the step records of task ulid, by name, and keeps them
// StepKeep from now (an empty map for none).
func (q *Queue) Steps(ctx context.Context, ulid string) (map[string]StepRecord, error) {
	c := q.s.r
	key := q.k.Steps(ulid)
	res := c.DoMulti(ctx,
		c.B().Hgetall().Key(key).Build(),
		c.B().Pexpire().Key(key).Milliseconds(StepKeep.Milliseconds()).Build())
	m, err := res[0].AsStrMap()
	if err != nil {
		return nil, err
	}
	out := make(map[string]StepRecord, len(m))
	for name, v := range m {
		if r, ok := parseStep(v); ok {
			out[name] = r
		}
	}
	return out, nil
}

// StepOf reads the record of step name of task ulid (false: none).
func (q *Queue) StepOf(ctx context.Context, ulid, name string) (StepRecord, bool, error) {
	c := q.s.r
	v, err := c.Do(ctx, c.B().Hget().Key(q.k.Steps(ulid)).Field(name).Build()).ToString()
	if rueidis.IsRedisNil(err) {
		return StepRecord{}, false, nil
	}
	if err != nil {
		return StepRecord{}, false, err
	}
	r, ok := parseStep(v)
	return r, ok, nil
}

// StepCode is the outcome of RecordStep.
type StepCode int

// Outcomes of RecordStep.
const (
	StepStale    StepCode = 0 // the run is not the task's running one: nothing recorded
	StepRecorded StepCode = 1
	StepHad      StepCode = 2 // recorded before, by another execution: the record stands
)

// RecordStep runs step.lua: it records result as step name of task
// ulid's execution f, unless the step was recorded already (then it
// returns that record). With d it waits for the replicas as every
// durable write does.
func (q *Queue) RecordStep(ctx context.Context, d Durability, ulid string, f Fence, name string, result []byte) (StepCode, StepRecord, error) {
	ks := []string{q.k.Run(), q.k.Steps(ulid), q.k.Band(min(max(f.Band, 0), Bands-1))}
	args := []string{ulid, itoa(f.Run), name, rueidis.BinaryString(result), Group, f.Worker, f.EntryID, f.Started,
		ms(StepKeep)}
	res, replErr := stepScript.ExecDurable(ctx, q.s.r, d, ks, args)
	v, err := res.ToArray()
	if err != nil {
		return 0, StepRecord{}, err
	}
	if len(v) == 0 {
		return 0, StepRecord{}, unexpected("step", v)
	}
	code, err := v[0].AsInt64()
	if err != nil {
		return 0, StepRecord{}, unexpected("step", v)
	}
	var rec StepRecord
	if StepCode(code) == StepHad && len(v) == 2 {
		s, _ := v[1].ToString()
		rec, _ = parseStep(s)
	}
	return StepCode(code), rec, replErr
}

// KeepSteps makes the step records of task ulid expire after keep (its
// task ended: the retention; or waits: how long it waits and StepKeep).
func (q *Queue) KeepSteps(ctx context.Context, ulid string, keep time.Duration) error {
	c := q.s.r
	return c.Do(ctx, c.B().Pexpire().Key(q.k.Steps(ulid)).Milliseconds(max(keep.Milliseconds(), 1)).Build()).Error()
}

// parseStep reads a value of a steps hash.
func parseStep(v string) (StepRecord, bool) {
	p := strings.SplitN(v, "|", 3)
	if len(p) != 3 {
		return StepRecord{}, false
	}
	r := StepRecord{At: atoi64(p[1]), Result: []byte(p[2])}
	switch p[0] {
	case "s":
		r.By = StepBySignal
	case "t":
		r.By, r.Result = StepByTimeout, nil
	default:
		r.Run = atoi(p[0])
	}
	return r, true
}
