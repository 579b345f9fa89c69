// Package periodic computes the ticks of a schedule: a cron expression (5
// fields, an optional leading seconds field, or a descriptor such as
// @hourly or @every 30s) read in an IANA time zone, and which ticks are due
// after an outage under a missed-tick policy. It keeps no state and reads
// no clock: the caller passes the times (the Redis clock's), so firing is
// the same on every process and testable on a fake clock.
package periodic

import (
	"fmt"
	"strings"
	"time"

	"github.com/robfig/cron/v3"
)

// Policy says which missed ticks fire after an outage.
type Policy string

// Missed-tick policies.
const (
	// Skip fires once, for the latest missed tick.
	Skip Policy = "skip"
	// CatchUp fires every missed tick, up to a bound (the latest ones).
	CatchUp Policy = "catch_up"
)

// MaxCatchUp bounds the missed ticks one catch-up fires.
const MaxCatchUp = 1000

// maxSearch bounds the ticks walked to find the due ones: a schedule of
// @every 1s down for a day has 86,400 missed ticks, which Skip need not
// fire but must step over.
const maxSearch = 1_000_000

var parser = cron.NewParser(cron.SecondOptional | cron.Minute | cron.Hour | cron.Dom | cron.Month | cron.Dow | cron.Descriptor)

// Spec is a parsed cron expression in its time zone.
type Spec struct {
	expr  string
	loc   *time.Location
	sched cron.Schedule
}

// Error is a refused expression or time zone; Field is "cron" or
// "time_zone".
type Error struct {
	Field, Problem string
}

func (e *Error) Error() string { return e.Field + " " + e.Problem }

func cronErr(format string, args ...any) error {
	return &Error{Field: "cron", Problem: fmt.Sprintf(format, args...)}
}

// Parse parses expr in the IANA time zone tz ("" is UTC). The expression
// may not carry a time zone of its own (CRON_TZ=, TZ=): tz says it. A
// refusal is an *Error.
func Parse(expr, tz string) (*Spec, error) {
	expr = strings.TrimSpace(expr)
	if expr == "" {
		return nil, cronErr("is empty")
	}
	if strings.HasPrefix(expr, "CRON_TZ=") || strings.HasPrefix(expr, "TZ=") {
		return nil, cronErr("%q carries a time zone: give it as the schedule's time zone instead", expr)
	}
	if tz == "" {
		tz = "UTC"
	}
	loc, err := time.LoadLocation(tz)
	if err != nil || tz == "Local" {
		return nil, &Error{Field: "time_zone", Problem: fmt.Sprintf("%q is not an IANA time zone name (e.g. UTC, Europe/Berlin)", tz)}
	}
	s, err := parser.Parse(expr)
	if err != nil {
		return nil, cronErr("%q: %v", expr, err)
	}
	if d, ok := strings.CutPrefix(expr, "@every "); ok {
		// robfig/cron rounds the period to whole seconds: refuse what it
		// would change
		p, err := time.ParseDuration(strings.TrimSpace(d))
		if err != nil || p < time.Second || p%time.Second != 0 {
			return nil, cronErr("%q: @every needs whole seconds, at least 1s", expr)
		}
	}
	sp := &Spec{expr: expr, loc: loc, sched: s}
	if sp.Next(time.Unix(0, 0)).IsZero() {
		return nil, cronErr("%q never fires", expr)
	}
	return sp, nil
}

// Next returns the first tick strictly after t (zero if none within five
// years, e.g. for February 30).
//
// Daylight saving time: an expression that fires in every hour of the day
// (its hour field is * or covers 0-23) ticks at each real hour, so an
// hourly schedule fires 23 times on a spring-forward day and 25 times on a
// fall-back day. Any other expression names wall-clock times: one that
// does not exist (skipped by spring forward) fires once at the first
// instant after the gap, one that occurs twice (fall back) fires once, at
// its first occurrence — a daily 02:30 fires every day, once.
func (s *Spec) Next(t time.Time) time.Time {
	if c, ok := s.sched.(cron.ConstantDelaySchedule); ok {
		// @every d: ticks on the multiples of d since the Unix epoch, so
		// that every process computes the same ticks from any start.
		d := c.Delay
		return time.Unix(0, (t.UnixNano()/int64(d)+1)*int64(d)).In(s.loc)
	}
	if sp, ok := s.sched.(*cron.SpecSchedule); !ok || sp.Hour&allHours == allHours {
		return s.sched.Next(t.In(s.loc))
	}
	// Walk wall-clock times (a zone without DST), then place each in the
	// real zone; one that lands at or before t was fired already.
	w := wall(t.In(s.loc))
	for range 10 {
		nw := s.sched.Next(w)
		if nw.IsZero() {
			return time.Time{}
		}
		if r := s.place(nw); r.After(t) {
			return r
		}
		w = nw
	}
	return time.Time{}
}

// allHours is the bit set of a cron hour field that matches every hour.
const allHours = 1<<24 - 1

// wall returns t's wall-clock reading as a time in UTC.
func wall(t time.Time) time.Time {
	y, mo, d := t.Date()
	h, mi, sec := t.Clock()
	return time.Date(y, mo, d, h, mi, sec, 0, time.UTC)
}

// place returns the instant the wall-clock time w (in UTC) names in the
// spec's zone: its first occurrence when it occurs twice, the end of the
// gap when it does not occur.
func (s *Spec) place(w time.Time) time.Time {
	var first time.Time
	probe := time.Date(w.Year(), w.Month(), w.Day(), w.Hour(), w.Minute(), w.Second(), 0, s.loc)
	lo, hi := probe, probe
	for _, around := range []time.Duration{-3 * time.Hour, 0, 3 * time.Hour} {
		_, off := probe.Add(around).Zone()
		cand := w.Add(-time.Duration(off) * time.Second).In(s.loc)
		if wall(cand).Equal(w) && (first.IsZero() || cand.Before(first)) {
			first = cand
		}
		if cand.Before(lo) {
			lo = cand
		}
		if cand.After(hi) {
			hi = cand
		}
	}
	if !first.IsZero() {
		return first
	}
	// In a gap: the transition is the first instant whose wall clock is
	// past w.
	for hi.Sub(lo) > time.Second {
		mid := lo.Add(hi.Sub(lo) / 2)
		if wall(mid.In(s.loc)).After(w) {
			hi = mid
		} else {
			lo = mid
		}
	}
	return hi.Truncate(time.Second).In(s.loc)
}

// Due returns the ticks to fire at now for a schedule whose last fired (or
// baseline) tick is after: none when the next tick after it is still
// ahead; under Skip the latest tick at or before now; under CatchUp the
// ticks after it up to now, the latest max of them when more were missed
// (max ≤ 0 or beyond MaxCatchUp means MaxCatchUp). next is the first tick
// after now.
func (s *Spec) Due(after, now time.Time, policy Policy, max int) (ticks []time.Time, next time.Time) {
	if max <= 0 || max > MaxCatchUp {
		max = MaxCatchUp
	}
	if policy != CatchUp {
		max = 1
	}
	t := s.Next(after)
	for i := 0; !t.IsZero() && !t.After(now) && i < maxSearch; i++ {
		ticks = append(ticks, t)
		if len(ticks) > max {
			ticks = ticks[1:]
		}
		t = s.Next(t)
	}
	if !t.IsZero() && !t.After(now) {
		// more than maxSearch missed ticks: jump to now's neighbourhood
		t = s.Next(now)
		ticks = []time.Time{s.prevTick(now)}
	}
	return ticks, t
}

// prevTick returns a tick at or shortly before now (for a jump over more
// than maxSearch missed ticks): the last one found walking from a day
// before.
func (s *Spec) prevTick(now time.Time) time.Time {
	var last time.Time
	for t := s.Next(now.Add(-24 * time.Hour)); !t.IsZero() && !t.After(now); t = s.Next(t) {
		last = t
	}
	if last.IsZero() {
		return now
	}
	return last
}

// String returns the expression.
func (s *Spec) String() string { return s.expr }

// Location returns the time zone.
func (s *Spec) Location() *time.Location { return s.loc }
