// Package script runs the module's Lua scripts: one runner for the task
// engine's store and the queue primitive. A script is sent as EVALSHA and,
// when Redis answers NOSCRIPT (first use on a node, a restart, a failover),
// as EVAL, which loads it on the node that owns its keys. In durable mode a
// write waits for replicas with WAIT on the connection that made it.
//
// Script text is constant: a Script is built once, from an embedded .lua
// file (optionally preceded by a library of shared functions), and every
// key it touches is passed in KEYS.
package script

import (
	"context"
	"crypto/sha1"
	"encoding/hex"

	"github.com/redis/rueidis"
)

// Script is one Lua script and its SHA1. Build it with New.
type Script struct {
	name   string
	source string
	sha    string
}

// New returns the script name whose text is the concatenation of parts
// (shared libraries first, then the script itself).
func New(name string, parts ...string) *Script {
	src := ""
	for _, p := range parts {
		src += p
		if len(p) > 0 && p[len(p)-1] != '\n' {
			src += "\n"
		}
	}
	sum := sha1.Sum([]byte(src))
	return &Script{name: name, source: src, sha: hex.EncodeToString(sum[:])}
}

// Name returns the script's name, for errors.
func (s *Script) Name() string { return s.name }

// SHA returns the script's SHA1 (hex), the name EVALSHA calls it by.
func (s *Script) SHA() string { return s.sha }

// Source returns the script's whole text.
func (s *Script) Source() string { return s.source }

// Command builds the script's call: EVALSHA, or with eval EVAL (which
// loads it). Commands are consumed when sent: build one per send.
func (s *Script) Command(c rueidis.Client, eval bool, keys, args []string) rueidis.Completed {
	if eval {
		return c.B().Eval().Script(s.source).Numkeys(int64(len(keys))).Key(keys...).Arg(args...).Build()
	}
	return c.B().Evalsha().Sha1(s.sha).Numkeys(int64(len(keys))).Key(keys...).Arg(args...).Build()
}

// Exec runs the script and returns its reply. A NOSCRIPT answer is
// retried with EVAL.
func (s *Script) Exec(ctx context.Context, c rueidis.Client, keys, args []string) rueidis.RedisResult {
	res := c.Do(ctx, s.Command(c, false, keys, args))
	if IsNoScript(res.Error()) {
		res = c.Do(ctx, s.Command(c, true, keys, args))
	}
	return res
}

// ExecDurable runs the script as Exec does and, with d.Replicas > 0, WAIT
// after it on the same dedicated connection (see DoPinned). The error is a
// *NotReplicatedError when too few replicas acknowledged a script that ran:
// its reply is still valid. With no replicas wanted it is Exec.
func (s *Script) ExecDurable(ctx context.Context, c rueidis.Client, d Durability, keys, args []string) (rueidis.RedisResult, error) {
	if d.Replicas <= 0 {
		return s.Exec(ctx, c, keys, args), nil
	}
	res := DoPinned(ctx, c, d, s.Command(c, false, keys, args))
	if IsNoScript(res[0].Error()) {
		res = DoPinned(ctx, c, d, s.Command(c, true, keys, args))
	}
	if res[0].Error() == nil {
		return res[0], d.Check(res[1])
	}
	return res[0], nil // the script's own error: the caller reads it from the result
}

// IsNoScript reports whether err is Redis's NOSCRIPT answer.
func IsNoScript(err error) bool {
	rerr, ok := rueidis.IsRedisErr(err)
	return ok && rerr.IsNoScript()
}
