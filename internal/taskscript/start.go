package taskscript

import (
	"context"
	"crypto/sha1"
	"encoding/hex"
	"errors"
	"strconv"
	"time"

	"github.com/dtq-dev/dtq/internal/keys"
	"github.com/dtq-dev/dtq/internal/taskid"
	"github.com/redis/rueidis"
)

// StartConfig is the per-worker input of Start.
type StartConfig struct {
	Group      string
	Worker     string
	MaxCrashes int
	DLQMaxLen  int64
	Retention  time.Duration // of a task cancelled here
	// Durability: with Replicas > 0 the start waits for that many
	// replicas (see Start).
	Durability Durability
}

// StartCode is the outcome of starting one entry.
type StartCode int

// Outcomes of Start.
const (
	Skipped StartCode = 0
	Began   StartCode = 1  // RUNNING under Run
	Died    StartCode = -1 // past MaxCrashes: DEAD (its event was published)
	// Withdrawn: taken over from a lost worker after its cancellation was
	// requested: CANCELLED, not started (its event was published).
	Withdrawn StartCode = -2
)

// Started is the outcome of starting one entry. When Began, the other
// fields describe the task; when Died or Withdrawn, Type does.
type Started struct {
	Code        StartCode
	Run         int
	Attempt     int
	Crashes     int
	Priority    int
	MaxAttempts int
	Timeout     time.Duration
	Type        string
	Payload     []byte
	Created     int64  // Unix ms
	IdemHash    string // of its idempotency record, "" for none
	Started     string // Unix ms, as Redis recorded it
}

// Start takes the started tasks' other fields from their entries (Spec) or,
// for entries read without them (the reclaim pass), with a plain HGETALL
// each, pipelined after the script: passing them through Lua would cost
// Redis more.

var startSHA = func() string { s := sha1.Sum([]byte(startSource)); return hex.EncodeToString(s[:]) }()

// Start runs start.lua for entries of one queue and reads the started
// tasks' fields, in one round trip. With cfg.Durability it then waits for
// the replicas on the same connection: an unanswered WAIT is an error (run
// nothing); too few replicas in time returns the results together with a
// *NotReplicatedError (the starts stand).
func Start(ctx context.Context, c rueidis.Client, k keys.Tasks, cfg StartConfig, entries []Entry) ([]Started, error) {
	ks := make([]string, 0, 12+len(entries))
	ks = append(ks, k.Info(), k.DLQ())
	ks = bands(ks, k)
	args := make([]string, 0, 7+4*len(entries))
	args = append(args, cfg.Group, cfg.Worker, itoa(cfg.MaxCrashes), k.Events(), strconv.FormatInt(cfg.DLQMaxLen, 10),
		strconv.FormatInt(cfg.Retention.Milliseconds(), 10), itoa(len(entries)))
	tasks := make([]string, 0, len(entries))
	for _, e := range entries {
		_, ulid, err := taskid.Parse(e.TaskID)
		if err != nil {
			ulid = "invalid" // no such task hash: the entry is acknowledged and skipped
		}
		ks = append(ks, k.Task(ulid))
		mode := "0"
		switch {
		case e.GiveBack:
			mode = "2"
		case e.Reclaimed:
			mode = "1"
		}
		args = append(args, itoa(e.Band), e.EntryID, e.TaskID, mode)
		if e.Spec == nil {
			tasks = append(tasks, k.Task(ulid))
		}
	}
	// Commands are consumed when sent: build them anew for each try.
	build := func(eval bool) rueidis.Commands {
		cmds := make(rueidis.Commands, 0, 1+len(tasks))
		if eval {
			cmds = append(cmds, c.B().Eval().Script(startSource).Numkeys(int64(len(ks))).Key(ks...).Arg(args...).Build())
		} else {
			cmds = append(cmds, c.B().Evalsha().Sha1(startSHA).Numkeys(int64(len(ks))).Key(ks...).Arg(args...).Build())
		}
		for _, tk := range tasks {
			cmds = append(cmds, c.B().Hgetall().Key(tk).Build())
		}
		return cmds
	}
	d := cfg.Durability
	var wait rueidis.RedisResult
	send := func(cmds rueidis.Commands) []rueidis.RedisResult {
		if d.Replicas <= 0 {
			return c.DoMulti(ctx, cmds...)
		}
		res := doPinned(ctx, c, d, cmds...)
		wait = res[len(res)-1]
		return res[:len(res)-1]
	}
	res := send(build(false))
	if rerr, ok := rueidis.IsRedisErr(res[0].Error()); ok && rerr.IsNoScript() {
		// The script is not loaded on the node of this queue's slot (first
		// use, a restart, a failover): run it with EVAL, which loads it there.
		// (A SCRIPT LOAD, having no key, would go to any node of a Cluster.)
		res = send(build(true))
	}
	flat, err := res[0].ToArray()
	if err != nil {
		return nil, err
	}
	var replErr error
	if d.Replicas > 0 {
		// A start the replicas may lack must not run: a failover to one
		// of them would deliver the task again under the same run number.
		// Unknown (the connection failed): the starts stay claimed and are
		// reclaimed after the visibility timeout. Too few replicas in time
		// (the master is alive): the starts stand, reported with the
		// results.
		var nre *NotReplicatedError
		if replErr = d.check(wait); replErr != nil && !errors.As(replErr, &nre) {
			return nil, replErr
		}
	}
	if len(flat) != 4*len(entries)+1 {
		return nil, unexpected("start", flat)
	}
	out := make([]Started, len(entries))
	next := 1 // the next HGETALL reply, for the next entry without a Spec
	for i := range entries {
		hgetall := 0
		if entries[i].Spec == nil {
			hgetall, next = next, next+1
		}
		code, err := flat[4*i].AsInt64()
		if err != nil {
			return nil, unexpected("start", flat[4*i])
		}
		s := &out[i]
		s.Code = StartCode(code)
		if s.Code == Died || s.Code == Withdrawn {
			s.Type = typeOf(entries[i].Spec, res[hgetall])
		}
		if s.Code != Began {
			continue
		}
		s.Run = atoiMsg(flat[4*i+1])
		s.Attempt = atoiMsg(flat[4*i+2])
		s.Crashes = atoiMsg(flat[4*i+3])
		s.Started, _ = flat[len(flat)-1].ToString()
		s.Priority = entries[i].Band
		spec := entries[i].Spec
		if spec == nil {
			h, err := res[hgetall].AsStrMap()
			if err != nil {
				return nil, unexpected("start spec", res[hgetall])
			}
			maxAtt, _ := strconv.Atoi(h["max_att"])
			timeout, _ := strconv.ParseInt(h["timeout"], 10, 64)
			created, _ := strconv.ParseInt(h["created"], 10, 64)
			spec = &Spec{Type: h["type"], Payload: []byte(h["payload"]), MaxAttempts: maxAtt,
				Timeout: time.Duration(timeout) * time.Millisecond, Created: created, IdemHash: h["idem"]}
		}
		s.Type, s.Payload, s.IdemHash = spec.Type, spec.Payload, spec.IdemHash
		s.MaxAttempts, s.Timeout, s.Created = spec.MaxAttempts, spec.Timeout, spec.Created
	}
	return out, replErr
}

// typeOf returns the task type of an entry: from its spec, else from the
// task hash read after the script ("" if that failed).
func typeOf(spec *Spec, hash rueidis.RedisResult) string {
	if spec != nil {
		return spec.Type
	}
	h, _ := hash.AsStrMap()
	return h["type"]
}

func atoiMsg(m rueidis.RedisMessage) int {
	if n, err := m.AsInt64(); err == nil {
		return int(n)
	}
	s, _ := m.ToString()
	n, _ := strconv.Atoi(s)
	return n
}
