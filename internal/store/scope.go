package store

import (
	"context"
	_ "embed"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/dtq-dev/dtq/internal/script"
	"github.com/redis/rueidis"
)

var (
	//go:embed scope.lua
	scopeSource string

	scopeScript = script.New("scope", libFor(scopeSource), scopeSource)
)

// ScopeDef is one scoped limit of a queue: a task type's (Scope
// ScopeType+type) or a limit key's (ScopeKey+key, ScopeKey+EachKey for
// each key without one of its own).
type ScopeDef struct {
	Scope      string
	MaxRunning int64         // 0: no concurrency limit
	Rate       int64         // at most Rate starts per Per; 0: none
	Per        time.Duration // the rate's period
	Burst      int64         // the most starts at once within the rate (≥ 1)
	// OnFull is what a start does when the concurrency limit is full: ""
	// (or OnFullWait) it waits; OnFullCancelRunning, OnFullCancelNewest,
	// OnFullReplaceWaiting (lib_scope.lua's letters).
	OnFull string
}

// The rules of a full scoped concurrency limit (ScopeDef.OnFull).
const (
	OnFullWait           = "q" // the task waits QUEUED for a lease
	OnFullCancelRunning  = "r" // the oldest run under it is cancelled; the task waits for its lease
	OnFullCancelNewest   = "n" // the task is cancelled at its start
	OnFullReplaceWaiting = "w" // the task waits; those waiting before it are cancelled
)

// ScopeState is a scoped limit with what it holds now.
type ScopeState struct {
	ScopeDef
	InUse    int64     // leases live (tasks running under it)
	Waiting  int64     // QUEUED tasks its full concurrency limit holds back
	PausedTo time.Time // no start before this (dtq.RetryAfter); zero: none
}

func (d ScopeDef) value() string {
	v := strconv.FormatInt(d.MaxRunning, 10) + "/" + strconv.FormatInt(d.Rate, 10) + "/" +
		strconv.FormatInt(d.Per.Milliseconds(), 10) + "/" + strconv.FormatInt(max(1, d.Burst), 10)
	if d.OnFull != "" && d.OnFull != OnFullWait {
		v += "/" + d.OnFull // (the value of before otherwise)
	}
	return v
}

func parseScopeDef(scope, v string) (ScopeDef, bool) {
	p := strings.Split(v, "/")
	if len(p) != 4 && len(p) != 5 {
		return ScopeDef{}, false
	}
	n := make([]int64, 4)
	for i, s := range p[:4] {
		var err error
		if n[i], err = strconv.ParseInt(s, 10, 64); err != nil {
			return ScopeDef{}, false
		}
	}
	d := ScopeDef{Scope: scope, MaxRunning: n[0], Rate: n[1], Per: time.Duration(n[2]) * time.Millisecond, Burst: n[3],
		OnFull: OnFullWait}
	if len(p) == 5 {
		d.OnFull = p[4]
	}
	return d, true
}

// SetScopeLimit replaces the scoped limit of d.Scope (one with neither a
// concurrency nor a rate limit removes it, and its state), starts its rate
// afresh and tells the queue's workers to read its limits again.
func (q *Queue) SetScopeLimit(ctx context.Context, d ScopeDef) error {
	c := q.s.r
	cmds := []rueidis.Completed{c.B().Hdel().Key(q.k.Limits()).Field(d.Scope + "\ntat").Build()}
	if d.MaxRunning > 0 || d.Rate > 0 {
		cmds = append(cmds, c.B().Hset().Key(q.k.ScopeLimits()).FieldValue().FieldValue(d.Scope, d.value()).Build())
	} else {
		cmds = append(cmds, c.B().Hdel().Key(q.k.ScopeLimits()).Field(d.Scope).Build(),
			c.B().Hdel().Key(q.k.Limits()).Field(d.Scope+"\npause").Build())
	}
	return q.setLimit(ctx, cmds...)
}

// ScopeDefs returns the queue's scoped limits by scope, in one HGETALL.
func (q *Queue) ScopeDefs(ctx context.Context) (map[string]ScopeDef, error) {
	c := q.s.r
	m, err := c.Do(ctx, c.B().Hgetall().Key(q.k.ScopeLimits()).Build()).AsStrMap()
	if err != nil {
		return nil, err
	}
	out := make(map[string]ScopeDef, len(m))
	for scope, v := range m {
		if d, ok := parseScopeDef(scope, v); ok {
			out[scope] = d
		}
	}
	return out, nil
}

// ScopeLimits returns the queue's scoped limits, by scope, with what each
// holds: in two round trips (the definitions, the leases in use and the
// pauses; then the waiters of each).
func (q *Queue) ScopeLimits(ctx context.Context) ([]ScopeState, error) {
	c := q.s.r
	res := c.DoMulti(ctx, c.B().Hgetall().Key(q.k.ScopeLimits()).Build(), c.B().Hgetall().Key(q.k.ScopeUse()).Build(),
		c.B().Time().Build())
	defs, err := res[0].AsStrMap()
	if err != nil {
		return nil, err
	}
	use, err := res[1].AsStrMap()
	if err != nil {
		return nil, err
	}
	t, err := res[2].AsIntSlice()
	if err != nil {
		return nil, err
	}
	now := t[0]*1000 + t[1]/1000
	out := make([]ScopeState, 0, len(defs))
	for scope, v := range defs {
		d, ok := parseScopeDef(scope, v)
		if !ok {
			continue
		}
		st := ScopeState{ScopeDef: d, InUse: atoi64(use[scope])}
		if scope == ScopeKey+EachKey {
			// each key counts apart: the keys without a limit of their own
			for f, v := range use {
				if strings.HasPrefix(f, ScopeKey) && f != scope && defs[f] == "" {
					st.InUse += atoi64(v)
				}
			}
		}
		out = append(out, st)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Scope < out[j].Scope })
	if len(out) == 0 {
		return out, nil
	}
	cmds := make(rueidis.Commands, 0, 2*len(out))
	each := -1 // the index of the limit of each key, if any
	for i, s := range out {
		lo, hi := "["+s.Scope+"\n", "["+s.Scope+"\n\xff"
		if s.Scope == ScopeKey+EachKey {
			each, lo, hi = i, "["+ScopeKey, "["+ScopeKey+"\xff" // every key's waiters
		}
		cmds = append(cmds, c.B().Zlexcount().Key(q.k.ScopeWait()).Min(lo).Max(hi).Build(),
			c.B().Hget().Key(q.k.Limits()).Field(s.Scope+"\npause").Build())
	}
	res = c.DoMulti(ctx, cmds...)
	for i := range out {
		if out[i].Waiting, err = res[2*i].AsInt64(); err != nil {
			return nil, err
		}
		if p, err := res[2*i+1].AsInt64(); err == nil && p > now {
			out[i].PausedTo = time.UnixMilli(p)
		}
	}
	if each >= 0 { // less the waiters of keys with a limit of their own
		for i, s := range out {
			if i != each && strings.HasPrefix(s.Scope, ScopeKey) {
				out[each].Waiting -= s.Waiting
			}
		}
	}
	return out, nil
}

// ScopeLease is the name of the lease run run of task ulid holds under
// scope: one per run, so that a run taken over from a lost worker counts
// apart from the lost one until the lost one's lease expires.
func ScopeLease(scope, ulid string, run int) string {
	return scope + "\n" + ulid + "|" + strconv.Itoa(run)
}

func (q *Queue) scopeKeys(ks ...string) []string {
	k := q.k
	out := append(make([]string, 0, 17+len(ks)), k.Limits(), k.ScopeUse(), k.ScopeLeases(), k.ScopeWait(),
		k.GroupWait(), k.GroupCount(), k.ScopeLimits())
	out = k.bands(out)
	return append(out, ks...)
}

// RenewScopeLeases moves the expiry of the live ones of leases (ScopeLease
// names) to ttl from now.
func (q *Queue) RenewScopeLeases(ctx context.Context, ttl time.Duration, leases []string) error {
	args := append([]string{"renew", strconv.FormatInt(ttl.Milliseconds(), 10)}, leases...)
	return scopeScript.Exec(ctx, q.s.r, q.scopeKeys(), args).Error()
}

// ReleaseScopeLeases deletes leases (of tasks that ended) and moves the
// waiters their scopes have room for now back into their bands.
func (q *Queue) ReleaseScopeLeases(ctx context.Context, leases []string) error {
	args := append([]string{"release", ""}, leases...)
	waiters, err := scopeScript.Exec(ctx, q.s.r, q.scopeKeys(), args).AsStrSlice()
	if err != nil {
		return err
	}
	_, err = q.unpark(ctx, waiters)
	return err
}

// PauseScopes lets no task under scopes start for d (dtq.RetryAfter).
func (q *Queue) PauseScopes(ctx context.Context, d time.Duration, scopes []string) error {
	args := append([]string{"pause", strconv.FormatInt(d.Milliseconds(), 10)}, scopes...)
	return scopeScript.Exec(ctx, q.s.r, q.scopeKeys(), args).Error()
}

// SweepScopes is the repair pass of scoped limits: it deletes expired
// leases (of lost workers) and moves in the waiters of up to visits scopes
// from after ("" = the first) that have room. It returns the scope to go
// on after ("" = every one was visited) and how many tasks it moved.
func (q *Queue) SweepScopes(ctx context.Context, after string, visits int) (string, int, error) {
	res, err := scopeScript.Exec(ctx, q.s.r, q.scopeKeys(), []string{"sweep", strconv.Itoa(visits), after}).AsStrSlice()
	if err != nil {
		return "", 0, err
	}
	if len(res) == 0 {
		return "", 0, unexpected("scope sweep", res)
	}
	n, err := q.unpark(ctx, res[1:])
	return res[0], n, err
}

// PruneScopeStates deletes past rate states and pauses of scoped limits
// from one HSCAN step of the queue's limits hash at cursor ("0" to start);
// it returns the next cursor ("0": a pass is done) and the fields deleted.
// A limit of each key leaves a rate state per key it has seen: without
// this its fields would grow with the keys.
func (q *Queue) PruneScopeStates(ctx context.Context, cursor string) (string, int, error) {
	v, err := scopeScript.Exec(ctx, q.s.r, q.scopeKeys(), []string{"prune", cursor}).ToArray()
	if err != nil {
		return "", 0, err
	}
	if len(v) != 2 {
		return "", 0, unexpected("scope prune", v)
	}
	next, _ := v[0].ToString()
	n, _ := v[1].AsInt64()
	return next, int(n), nil
}

// unpark moves limwait members ms back into their bands (those whose
// scope still has room).
func (q *Queue) unpark(ctx context.Context, ms []string) (int, error) {
	if len(ms) == 0 {
		return 0, nil
	}
	hashes := make([]string, len(ms))
	for i, m := range ms {
		ulid := invalidULID
		if len(m) >= 26 {
			ulid = m[len(m)-26:]
		}
		hashes[i] = q.k.Task(ulid)
	}
	args := append([]string{"unpark", q.name}, ms...)
	n, err := scopeScript.Exec(ctx, q.s.r, q.scopeKeys(hashes...), args).AsInt64()
	return int(n), err
}
