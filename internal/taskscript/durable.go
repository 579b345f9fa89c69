package taskscript

import (
	"context"
	"crypto/sha1"
	"encoding/hex"
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
	return fmt.Sprintf("taskscript: written, but acknowledged by %d of %d replicas within %v", e.Got, e.Want, e.Timeout)
}

// wait returns the WAIT command of d.
func (d Durability) wait(c rueidis.Client) rueidis.Completed {
	return c.B().Wait().Numreplicas(int64(d.Replicas)).Timeout(max(d.Timeout.Milliseconds(), 1)).Build()
}

// doPinned runs cmds, whose keyed ones share one slot, and then WAIT, all on
// one dedicated connection: WAIT counts the replicas that have that
// connection's writes, so it must reach the node that made them. (On a
// Cluster the shared client may send a keyless command to another node when
// it re-routes a pipeline after a redirect or a connection error: WAIT then
// answered for a connection with no writes, or failed on a replica.) A
// MOVED answer (nothing was written) is followed to the node it names, a
// few hops at most: the dedicated connection of a Cluster client goes where
// its slot map says, which lags a failover. The last result is WAIT's.
func doPinned(ctx context.Context, c rueidis.Client, d Durability, cmds ...rueidis.Completed) []rueidis.RedisResult {
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
				err = errors.New("taskscript: no connection for a durable write")
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

// check reads WAIT's answer.
func (d Durability) check(r rueidis.RedisResult) error {
	n, err := r.AsInt64()
	if err != nil {
		return err
	}
	if int(n) < d.Replicas {
		return &NotReplicatedError{Want: d.Replicas, Got: int(n), Timeout: d.Timeout}
	}
	return nil
}

// script is a Lua script with its SHA1, for pipelines that carry it.
type script struct {
	lua    *rueidis.Lua
	source string
	sha    string
}

func newScript(source string) script {
	s := sha1.Sum([]byte(source))
	return script{lua: rueidis.NewLuaScript(source), source: source, sha: hex.EncodeToString(s[:])}
}

// exec runs s; with d.Replicas > 0 it runs WAIT after it on the same
// dedicated connection (doPinned). The second result is a
// *NotReplicatedError when too few replicas acknowledged a script that ran:
// its result is still valid.
func (s script) exec(ctx context.Context, c rueidis.Client, d Durability, keys, args []string) (rueidis.RedisResult, error) {
	if d.Replicas <= 0 {
		return s.lua.Exec(ctx, c, keys, args), nil
	}
	build := func(eval bool) rueidis.Completed {
		if eval {
			return c.B().Eval().Script(s.source).Numkeys(int64(len(keys))).Key(keys...).Arg(args...).Build()
		}
		return c.B().Evalsha().Sha1(s.sha).Numkeys(int64(len(keys))).Key(keys...).Arg(args...).Build()
	}
	res := doPinned(ctx, c, d, build(false))
	if rerr, ok := rueidis.IsRedisErr(res[0].Error()); ok && rerr.IsNoScript() {
		res = doPinned(ctx, c, d, build(true))
	}
	if res[0].Error() != nil {
		return res[0], nil
	}
	return res[0], d.check(res[1])
}
