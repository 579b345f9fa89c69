package taskscript

import (
	"context"
	"crypto/sha1"
	"encoding/hex"
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

// exec runs s; with d.Replicas > 0 it pipelines WAIT after it, on the same
// connection (on a Cluster the keyless WAIT goes to the node of the
// script's keys). The second result is a *NotReplicatedError when too few
// replicas acknowledged a script that ran: its result is still valid.
func (s script) exec(ctx context.Context, c rueidis.Client, d Durability, keys, args []string) (rueidis.RedisResult, error) {
	if d.Replicas <= 0 {
		return s.lua.Exec(ctx, c, keys, args), nil
	}
	build := func(eval bool) rueidis.Commands {
		if eval {
			return rueidis.Commands{c.B().Eval().Script(s.source).Numkeys(int64(len(keys))).Key(keys...).Arg(args...).Build(), d.wait(c)}
		}
		return rueidis.Commands{c.B().Evalsha().Sha1(s.sha).Numkeys(int64(len(keys))).Key(keys...).Arg(args...).Build(), d.wait(c)}
	}
	res := c.DoMulti(ctx, build(false)...)
	if rerr, ok := rueidis.IsRedisErr(res[0].Error()); ok && rerr.IsNoScript() {
		res = c.DoMulti(ctx, build(true)...)
	}
	if res[0].Error() != nil {
		return res[0], nil
	}
	return res[0], d.check(res[1])
}
