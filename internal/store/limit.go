package store

import (
	"context"
	_ "embed"
	"strconv"
	"strings"
	"time"

	"github.com/dtq-dev/dtq/internal/script"
	"github.com/redis/rueidis"
)

var (
	//go:embed lease.lua
	leaseSource string

	leaseScript = script.New("lease", leaseSource)
)

// LimitDef is a queue's flow-control limits.
type LimitDef struct {
	MaxRunning int64         // the concurrency limit; 0: none
	Rate       int64         // at most Rate claims per Per; 0: no rate limit
	Per        time.Duration // the rate's period
	Burst      int64         // the most claims at once within the rate (≥ 1)
	PausedTo   time.Time     // no claim before this (dtq.RetryAfter); zero: none
	// Scoped: the queue has limits of task types or limit keys too
	// (ScopeLimits reads them).
	Scoped bool
}

// Limited reports whether d holds any limit.
func (d LimitDef) Limited() bool { return d.MaxRunning > 0 || d.Rate > 0 }

// Limits returns the queue's limits and how many of its leases are live.
func (q *Queue) Limits(ctx context.Context) (LimitDef, int64, error) {
	defs, inUse, err := q.s.Limits(ctx, []string{q.name})
	if err != nil {
		return LimitDef{}, 0, err
	}
	return defs[0], inUse[0], nil
}

// Limits returns the limits of queues names and how many of each one's
// leases are live, in two round trips whatever their number (the Redis
// clock, then every queue's limits, leases and whether it has scoped
// limits).
func (s *Store) Limits(ctx context.Context, names []string) (defs []LimitDef, inUse []int64, err error) {
	c := s.r
	t, err := c.Do(ctx, c.B().Time().Build()).AsIntSlice()
	if err != nil {
		return nil, nil, err
	}
	now := t[0]*1000 + t[1]/1000
	live := "(" + strconv.FormatInt(now, 10)
	cmds := make(rueidis.Commands, 0, 3*len(names))
	for _, n := range names {
		k := NewKeys(s.ns, n)
		cmds = append(cmds, c.B().Hmget().Key(k.Limits()).Field(LimitQueue, LimitRate, LimitPause).Build(),
			c.B().Zcount().Key(k.Leases()).Min(live).Max("+inf").Build(), c.B().Hlen().Key(k.ScopeLimits()).Build())
	}
	res := c.DoMulti(ctx, cmds...)
	defs, inUse = make([]LimitDef, len(names)), make([]int64, len(names))
	for i := range names {
		f, err := res[3*i].ToArray()
		if err != nil {
			return nil, nil, err
		}
		defs[i] = parseLimits(f)
		if !defs[i].PausedTo.After(time.UnixMilli(now)) {
			defs[i].PausedTo = time.Time{}
		}
		if inUse[i], err = res[3*i+1].AsInt64(); err != nil {
			return nil, nil, err
		}
		scoped, err := res[3*i+2].AsInt64()
		if err != nil {
			return nil, nil, err
		}
		defs[i].Scoped = scoped > 0
	}
	return defs, inUse, nil
}

// parseLimits reads the answer to HMGET limits queue rate pause.
func parseLimits(f []rueidis.RedisMessage) LimitDef {
	var d LimitDef
	str := func(i int) string { s, _ := f[i].ToString(); return s }
	d.MaxRunning, _ = strconv.ParseInt(str(0), 10, 64)
	if parts := strings.Split(str(1), "/"); len(parts) == 3 {
		d.Rate, _ = strconv.ParseInt(parts[0], 10, 64)
		ms, _ := strconv.ParseInt(parts[1], 10, 64)
		d.Per = time.Duration(ms) * time.Millisecond
		d.Burst, _ = strconv.ParseInt(parts[2], 10, 64)
	}
	if ms, err := strconv.ParseInt(str(2), 10, 64); err == nil && ms > 0 {
		d.PausedTo = time.UnixMilli(ms)
	}
	return d
}

// Limited reports whether the queue has any limit, in one HMGET.
func (q *Queue) Limited(ctx context.Context) (bool, error) {
	c := q.s.r
	f, err := c.Do(ctx, c.B().Hmget().Key(q.k.Limits()).Field(LimitQueue, LimitRate).Build()).ToArray()
	if err != nil {
		return false, err
	}
	for _, m := range f {
		if !m.IsNil() {
			return true, nil
		}
	}
	return false, nil
}

// SetLimits replaces both of the queue's limits with d's (a zero field
// removes its limit; a pause stays), in one round trip.
func (q *Queue) SetLimits(ctx context.Context, d LimitDef) error {
	return q.setLimit(ctx, append(q.rateCmds(d.Rate, d.Per, d.Burst), q.concurrencyCmd(d.MaxRunning))...)
}

func (q *Queue) concurrencyCmd(limit int64) rueidis.Completed {
	c := q.s.r
	if limit > 0 {
		return c.B().Hset().Key(q.k.Limits()).FieldValue().FieldValue(LimitQueue, strconv.FormatInt(limit, 10)).Build()
	}
	return c.B().Hdel().Key(q.k.Limits()).Field(LimitQueue).Build()
}

// rateCmds set the rate limit (n 0: remove it) and clear its state.
func (q *Queue) rateCmds(n int64, per time.Duration, burst int64) []rueidis.Completed {
	c := q.s.r
	reset := c.B().Hdel().Key(q.k.Limits()).Field(LimitTAT).Build()
	if n > 0 {
		def := strconv.FormatInt(n, 10) + "/" + strconv.FormatInt(per.Milliseconds(), 10) + "/" + strconv.FormatInt(burst, 10)
		return []rueidis.Completed{reset, c.B().Hset().Key(q.k.Limits()).FieldValue().FieldValue(LimitRate, def).Build()}
	}
	return []rueidis.Completed{reset, c.B().Hdel().Key(q.k.Limits()).Field(LimitRate).Build()}
}

// LimitsChanged is the message on a queue's Cancels channel that tells its
// workers to read its limits again (no task id looks like it).
const LimitsChanged = "!limits"

// setLimit runs sets, wakes the queue's waiting workers and tells every
// worker of the queue to read its limits again, in one round trip.
func (q *Queue) setLimit(ctx context.Context, sets ...rueidis.Completed) error {
	c := q.s.r
	cmds := append(sets,
		c.B().Xadd().Key(q.k.Wakeup()).Maxlen().Threshold("1").Id("*").FieldValue().FieldValue("w", "1").Build(),
		c.B().Publish().Channel(q.k.Cancels()).Message(LimitsChanged).Build())
	for _, r := range c.DoMulti(ctx, cmds...) {
		if err := r.Error(); err != nil {
			return err
		}
	}
	return nil
}

// Lease modes of a Grant.
const (
	Unlimited = 0 // no limit: all granted, nothing written
	RateOnly  = 1 // a rate limit alone: no lease written
	Leased    = 2 // a concurrency limit: the granted names are leases
)

// Grant is the answer to AcquireLeases.
type Grant struct {
	Granted int       // the first Granted names may claim (and are leases, in mode Leased)
	Mode    int       // Unlimited, RateOnly or Leased
	Retry   time.Time // with nothing granted: when something may be (zero: at a wakeup)
	Wakeup  string    // with nothing granted: the wakeup stream's last id, to wait after
}

// AcquireLeases grants as many of names' claims as the queue's limits have
// room for (op "acquire"), or all of them whatever the limits (op "hold":
// for claims made before a worker knew of a limit), each lease for ttl
// (see lease.lua).
func (q *Queue) AcquireLeases(ctx context.Context, op string, ttl time.Duration, names []string) (Grant, error) {
	v, err := q.lease(ctx, op, ttl, 0, names).ToArray()
	if err != nil {
		return Grant{}, err
	}
	if len(v) != 4 {
		return Grant{}, unexpected("lease acquire", v)
	}
	var g Grant
	n, _ := v[0].AsInt64()
	m, _ := v[1].AsInt64()
	g.Granted, g.Mode = int(n), int(m)
	if ms, _ := v[2].AsInt64(); ms > 0 {
		g.Retry = time.UnixMilli(ms)
	}
	g.Wakeup, _ = v[3].ToString()
	return g, nil
}

// RenewLeases moves the expiry of the live ones of names to ttl from now.
func (q *Queue) RenewLeases(ctx context.Context, ttl time.Duration, names []string) error {
	return q.lease(ctx, "renew", ttl, 0, names).Error()
}

// ReleaseLeases deletes names and gives unused granted claims back to the
// rate limit, waking the queue's workers when the concurrency limit was
// full.
func (q *Queue) ReleaseLeases(ctx context.Context, names []string, unused int) error {
	return q.lease(ctx, "release", 0, unused, names).Error()
}

// PauseLimits grants no claim of the queue for d (dtq.RetryAfter of a
// limited task).
func (q *Queue) PauseLimits(ctx context.Context, d time.Duration) error {
	return q.lease(ctx, "pause", d, 0, nil).Error()
}

func (q *Queue) lease(ctx context.Context, op string, ms time.Duration, unused int, names []string) rueidis.RedisResult {
	args := append([]string{op, strconv.FormatInt(ms.Milliseconds(), 10), strconv.Itoa(unused)}, names...)
	return leaseScript.Exec(ctx, q.s.r, []string{q.k.Limits(), q.k.Leases(), q.k.Wakeup()}, args)
}
