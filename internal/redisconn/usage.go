package redisconn

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/rueidis"
)

// Usage is what the Redis servers behind a client have spent: CPU time
// (user + system, every thread of the process), memory in use and
// commands processed, summed over the nodes the client writes to (rueidis
// lists a Cluster's primaries, not their replicas).
type Usage struct {
	CPU       time.Duration
	Memory    int64 // used_memory, bytes
	Commands  int64 // total_commands_processed
	Primaries int
}

// ReadUsage reads INFO cpu, memory and stats of every node.
func ReadUsage(ctx context.Context, c rueidis.Client) (Usage, error) {
	var u Usage
	for addr, node := range c.Nodes() {
		cmd := node.B().Info().Section("cpu").Section("memory").Section("stats").Build()
		info, err := node.Do(ctx, cmd).ToString()
		if err != nil {
			return u, fmt.Errorf("redisconn: INFO of %s: %w", addr, err)
		}
		user, err1 := strconv.ParseFloat(infoField(info, "used_cpu_user"), 64)
		sys, err2 := strconv.ParseFloat(infoField(info, "used_cpu_sys"), 64)
		mem, err3 := strconv.ParseInt(infoField(info, "used_memory"), 10, 64)
		cmds, err4 := strconv.ParseInt(infoField(info, "total_commands_processed"), 10, 64)
		for _, err := range []error{err1, err2, err3, err4} {
			if err != nil {
				return u, fmt.Errorf("redisconn: INFO of %s: %w", addr, err)
			}
		}
		u.CPU += time.Duration((user + sys) * float64(time.Second))
		u.Memory += mem
		u.Commands += cmds
		u.Primaries++
	}
	return u, nil
}

// Sub is u minus an earlier reading.
func (u Usage) Sub(before Usage) Usage {
	return Usage{CPU: u.CPU - before.CPU, Memory: u.Memory - before.Memory,
		Commands: u.Commands - before.Commands, Primaries: u.Primaries}
}
