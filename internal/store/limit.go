package store

import (
	"context"
	_ "embed"
	"strconv"
	"time"

	"github.com/dtq-dev/dtq/internal/script"
	"github.com/redis/rueidis"
)

var (
	//go:embed lease.lua
	leaseSource string

	leaseScript = script.New("lease", leaseSource)
)

// ConcurrencyLimit returns the queue-wide concurrency limit (0: none) and
// how many of its leases are live now.
func (q *Queue) ConcurrencyLimit(ctx context.Context) (limit, inUse int64, err error) {
	c := q.s.r
	t, err := c.Do(ctx, c.B().Time().Build()).AsIntSlice()
	if err != nil {
		return 0, 0, err
	}
	now := strconv.FormatInt(t[0]*1000+t[1]/1000, 10)
	res := c.DoMulti(ctx, c.B().Hget().Key(q.k.Limits()).Field(LimitQueue).Build(),
		c.B().Zcount().Key(q.k.Leases()).Min("("+now).Max("+inf").Build())
	if v, err := res[0].ToString(); err == nil {
		limit, _ = strconv.ParseInt(v, 10, 64)
	} else if !rueidis.IsRedisNil(err) {
		return 0, 0, err
	}
	inUse, err = res[1].AsInt64()
	return limit, inUse, err
}

// Limit returns the queue-wide concurrency limit (0: none), in one HGET.
func (q *Queue) Limit(ctx context.Context) (int64, error) {
	c := q.s.r
	v, err := c.Do(ctx, c.B().Hget().Key(q.k.Limits()).Field(LimitQueue).Build()).AsInt64()
	if rueidis.IsRedisNil(err) {
		return 0, nil
	}
	return v, err
}

// SetConcurrencyLimit sets the queue-wide concurrency limit (0 removes it)
// and wakes the queue's workers, which read it again.
func (q *Queue) SetConcurrencyLimit(ctx context.Context, limit int64) error {
	c := q.s.r
	set := c.B().Hdel().Key(q.k.Limits()).Field(LimitQueue).Build()
	if limit > 0 {
		set = c.B().Hset().Key(q.k.Limits()).FieldValue().FieldValue(LimitQueue, strconv.FormatInt(limit, 10)).Build()
	}
	for _, r := range c.DoMulti(ctx, set,
		c.B().Xadd().Key(q.k.Wakeup()).Maxlen().Threshold("1").Id("*").FieldValue().FieldValue("w", "1").Build()) {
		if err := r.Error(); err != nil {
			return err
		}
	}
	return nil
}

// Grant is the answer to AcquireLeases.
type Grant struct {
	Granted  int       // the first Granted names are leases now (all, with no limit)
	Limit    int64     // the queue's limit; 0: none (no lease was written)
	Earliest time.Time // expiry of the earliest live lease (zero: none)
	Wakeup   string    // the wakeup stream's last id, to wait after
}

// AcquireLeases takes as many of names as the queue's limit has room for,
// each for ttl (see lease.lua).
func (q *Queue) AcquireLeases(ctx context.Context, ttl time.Duration, names []string) (Grant, error) {
	v, err := q.lease(ctx, "acquire", ttl, names).ToArray()
	if err != nil {
		return Grant{}, err
	}
	if len(v) != 4 {
		return Grant{}, unexpected("lease acquire", v)
	}
	var g Grant
	n, _ := v[0].AsInt64()
	g.Granted = int(n)
	g.Limit, _ = v[1].AsInt64()
	if ms, _ := v[2].AsInt64(); ms > 0 {
		g.Earliest = time.UnixMilli(ms)
	}
	g.Wakeup, _ = v[3].ToString()
	return g, nil
}

// RenewLeases moves the expiry of the live ones of names to ttl from now.
func (q *Queue) RenewLeases(ctx context.Context, ttl time.Duration, names []string) error {
	return q.lease(ctx, "renew", ttl, names).Error()
}

// ReleaseLeases deletes names, waking the queue's workers when the limit
// was full.
func (q *Queue) ReleaseLeases(ctx context.Context, names []string) error {
	return q.lease(ctx, "release", 0, names).Error()
}

func (q *Queue) lease(ctx context.Context, op string, ttl time.Duration, names []string) rueidis.RedisResult {
	args := append([]string{op, strconv.FormatInt(ttl.Milliseconds(), 10)}, names...)
	return leaseScript.Exec(ctx, q.s.r, []string{q.k.Limits(), q.k.Leases(), q.k.Wakeup()}, args)
}
