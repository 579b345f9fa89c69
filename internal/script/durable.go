package script

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/redis/rueidis"
)

// Durability makes a write wait until Replicas replicas have it (Redis
// WAIT, on the connection that made the write, bounded by Timeout). Zero
// Replicas: a write is done once the master has it.
type Durability struct {
	Replicas int
	Timeout  time.Duration
}

// NotReplicatedError reports a write the master made but fewer than the
// wanted replicas acknowledged within the timeout. The write is not undone:
// it may survive, or be lost if the master fails before replicating it.
type NotReplicatedError struct {
	Want, Got int
	Timeout   time.Duration
}

func (e *NotReplicatedError) Error() string {
	return fmt.Sprintf("script: written, but acknowledged by %d of %d replicas within %v", e.Got, e.Want, e.Timeout)
}

// wait returns the WAIT command of d.
func (d Durability) wait(c rueidis.Client) rueidis.Completed {
	return c.B().Wait().Numreplicas(int64(d.Replicas)).Timeout(max(d.Timeout.Milliseconds(), 1)).Build()
}

// DoPinned runs cmds, whose keyed ones share one slot, and then WAIT, all on
// one dedicated connection: WAIT counts the replicas that have that
// connection's writes, so it must reach the node that made them. (On a
// Cluster the shared client may send a keyless command to another node when
// it re-routes a pipeline after a redirect or a connection error: WAIT then
// answered for a connection with no writes, or failed on a replica.) A
// MOVED answer (nothing was written) is followed to the node it names, a
// few hops at most: the dedicated connection of a Cluster client goes where
// its slot map says, which lags a failover. The last result is WAIT's.
func DoPinned(ctx context.Context, c rueidis.Client, d Durability, cmds ...rueidis.Completed) []rueidis.RedisResult {
	for i := range cmds {
		cmds[i] = cmds[i].Pin() // sent again after a MOVED: not recycled
	}
	target := c
	for hop := 0; ; hop++ {
		var res []rueidis.RedisResult
		err := target.Dedicated(func(dc rueidis.DedicatedClient) error {
			res = dc.DoMulti(ctx, append(cmds[:len(cmds):len(cmds)], d.wait(c))...)
			return nil
		})
		if err != nil || res == nil {
			if err == nil {
				err = errors.New("script: no connection for a durable write")
			}
			res = make([]rueidis.RedisResult, len(cmds)+1)
			for i := range res {
				res[i] = rueidis.NewErrorResult(err)
			}
			return res
		}
		addr := movedTo(res)
		if addr == "" || hop == 3 {
			return res
		}
		node, ok := c.Nodes()[addr]
		if !ok {
			return res
		}
		target = node
	}
}

// movedTo returns the node a MOVED answer among res names, or "".
func movedTo(res []rueidis.RedisResult) string {
	for _, r := range res {
		if rerr, ok := rueidis.IsRedisErr(r.Error()); ok {
			if addr, moved := rerr.IsMoved(); moved {
				return addr
			}
		}
	}
	return ""
}

// Check reads WAIT's answer: a *NotReplicatedError when fewer than
// d.Replicas acknowledged.
func (d Durability) Check(r rueidis.RedisResult) error {
	n, err := r.AsInt64()
	if err != nil {
		return err
	}
	if int(n) < d.Replicas {
		return &NotReplicatedError{Want: d.Replicas, Got: int(n), Timeout: d.Timeout}
	}
	return nil
}
