package bench

import (
	"context"

	"github.com/dtq-dev/dtq/internal/redisconn"
)

// UsageFunc reads what the Redis servers have spent so far; nil on a
// backend that cannot say (the embedded one).
type UsageFunc func(context.Context) (redisconn.Usage, error)

// redisCost reads the usage before a measured phase; its end adds, to r,
// the Redis CPU, commands and memory growth per task of the phase.
type redisCost struct {
	read   UsageFunc
	before redisconn.Usage
}

func startRedisCost(ctx context.Context, read UsageFunc) (*redisCost, error) {
	rc := &redisCost{read: read}
	if read == nil {
		return rc, nil
	}
	var err error
	rc.before, err = read(ctx)
	return rc, err
}

// end adds redis_cpu_us_per_task, redis_cmds_per_task and
// redis_memory_bytes_per_task (used_memory growth over the phase: for
// enqueue, what a queued task costs; for drain, what a finished task's
// retained record costs beyond its queued form, often negative).
func (rc *redisCost) end(ctx context.Context, r Result, tasks int) error {
	if rc.read == nil || tasks <= 0 {
		return nil
	}
	after, err := rc.read(ctx)
	if err != nil {
		return err
	}
	d := after.Sub(rc.before)
	n := float64(tasks)
	r["redis_cpu_us_per_task"] = round(float64(d.CPU.Microseconds())/n, 2)
	r["redis_cmds_per_task"] = round(float64(d.Commands)/n, 3)
	r["redis_memory_bytes_per_task"] = round(float64(d.Memory)/n, 1)
	return nil
}
