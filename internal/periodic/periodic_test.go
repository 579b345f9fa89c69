package periodic

import (
	"strings"
	"testing"
	"time"
)

func at(t *testing.T, s string) time.Time {
	t.Helper()
	v, err := time.Parse(time.RFC3339, s)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// ticks returns the n ticks of spec after start, as RFC 3339 in UTC.
func ticks(t *testing.T, sp *Spec, start string, n int) []string {
	t.Helper()
	var out []string
	x := at(t, start)
	for range n {
		x = sp.Next(x)
		out = append(out, x.UTC().Format(time.RFC3339))
	}
	return out
}

func mustParse(t *testing.T, expr, tz string) *Spec {
	t.Helper()
	sp, err := Parse(expr, tz)
	if err != nil {
		t.Fatal(err)
	}
	return sp
}

func TestParseRejectsBadInput(t *testing.T) {
	for _, c := range []struct{ expr, tz, want string }{
		{"", "", "cron is empty"},
		{"* * *", "", `cron "* * *": expected`},
		{"61 * * * *", "", `cron "61 * * * *": `},
		{"0 0 30 2 *", "", "never fires"},
		{"@every 100ms", "", "at least 1s"},
		{"CRON_TZ=UTC 0 * * * *", "", "carries a time zone"},
		{"0 * * * *", "Mars/Olympus", `time_zone "Mars/Olympus" is not an IANA`},
		{"0 * * * *", "Local", "time_zone"},
	} {
		_, err := Parse(c.expr, c.tz)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Parse(%q, %q) = %v, want an error containing %q", c.expr, c.tz, err, c.want)
		}
	}
	for _, expr := range []string{"*/5 * * * *", "30 */2 * * * *", "@hourly", "@daily", "@every 30s", "0 9 * * MON-FRI"} {
		if _, err := Parse(expr, "Europe/Berlin"); err != nil {
			t.Errorf("Parse(%q): %v", expr, err)
		}
	}
}

// @every ticks on multiples of its period since the epoch: every process
// computes the same ticks whatever instant it starts from.
func TestEveryIsAligned(t *testing.T) {
	sp := mustParse(t, "@every 30s", "")
	got := ticks(t, sp, "2026-12-01T10:00:07Z", 3)
	want := []string{"2026-12-01T10:00:30Z", "2026-12-01T10:01:00Z", "2026-12-01T10:01:30Z"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("ticks %v, want %v", got, want)
	}
	if n := sp.Next(at(t, "2026-12-01T10:00:30Z")); !n.Equal(at(t, "2026-12-01T10:01:00Z")) {
		t.Errorf("Next of a tick = %v, want the one after it", n)
	}
}

// The optional seconds field.
func TestSecondsField(t *testing.T) {
	got := ticks(t, mustParse(t, "15 * * * * *", ""), "2026-12-01T10:00:00Z", 2)
	if got[0] != "2026-12-01T10:00:15Z" || got[1] != "2026-12-01T10:01:15Z" {
		t.Errorf("ticks %v", got)
	}
}

// A daily 02:30 in Europe/Berlin fires once every day across both DST
// transitions: on 2026-03-29 (02:00 -> 03:00) at 03:00 CEST, on
// 2026-10-25 (03:00 -> 02:00) at the first 02:30 only.
func TestDSTFixedHourFiresOncePerDay(t *testing.T) {
	sp := mustParse(t, "30 2 * * *", "Europe/Berlin")
	spring := ticks(t, sp, "2026-03-27T12:00:00Z", 4)
	wantSpring := []string{"2026-03-28T01:30:00Z", "2026-03-29T01:00:00Z", "2026-03-30T00:30:00Z", "2026-03-31T00:30:00Z"}
	if strings.Join(spring, " ") != strings.Join(wantSpring, " ") {
		t.Errorf("spring forward: %v, want %v", spring, wantSpring)
	}
	fall := ticks(t, sp, "2026-10-23T12:00:00Z", 4)
	wantFall := []string{"2026-10-24T00:30:00Z", "2026-10-25T00:30:00Z", "2026-10-26T01:30:00Z", "2026-10-27T01:30:00Z"}
	if strings.Join(fall, " ") != strings.Join(wantFall, " ") {
		t.Errorf("fall back: %v, want %v", fall, wantFall)
	}
	// Two wall times in the gap fire once, at its end.
	both := ticks(t, mustParse(t, "0,30 2 * * *", "Europe/Berlin"), "2026-03-28T12:00:00Z", 2)
	if both[0] != "2026-03-29T01:00:00Z" || both[1] != "2026-03-30T00:00:00Z" {
		t.Errorf("0,30 2 over spring forward: %v", both)
	}
}

// An hourly expression ticks at every real hour: 23 ticks on the
// spring-forward day, 25 on the fall-back day.
func TestDSTHourlyFiresEveryRealHour(t *testing.T) {
	sp := mustParse(t, "0 * * * *", "Europe/Berlin")
	count := func(fromLocal, toLocal string) int {
		loc := sp.Location()
		from, _ := time.ParseInLocation("2006-01-02", fromLocal, loc)
		to, _ := time.ParseInLocation("2006-01-02", toLocal, loc)
		n := 0
		for x := sp.Next(from.Add(-time.Second)); x.Before(to); x = sp.Next(x) {
			n++
		}
		return n
	}
	if n := count("2026-03-29", "2026-03-30"); n != 23 {
		t.Errorf("spring-forward day: %d hourly ticks, want 23", n)
	}
	if n := count("2026-10-25", "2026-10-26"); n != 25 {
		t.Errorf("fall-back day: %d hourly ticks, want 25", n)
	}
}

// After a 10-minute outage of a minutely schedule, Skip fires the latest
// missed tick only and CatchUp the missed ones (the latest max of them).
func TestDueSkipAndCatchUp(t *testing.T) {
	sp := mustParse(t, "* * * * *", "")
	last := at(t, "2026-12-01T10:00:00Z")
	now := at(t, "2026-12-01T10:10:30Z")
	got, next := sp.Due(last, now, Skip, 0)
	if len(got) != 1 || !got[0].Equal(at(t, "2026-12-01T10:10:00Z")) || !next.Equal(at(t, "2026-12-01T10:11:00Z")) {
		t.Errorf("skip: %v next %v", got, next)
	}
	got, _ = sp.Due(last, now, CatchUp, 0)
	if len(got) != 10 || !got[0].Equal(at(t, "2026-12-01T10:01:00Z")) || !got[9].Equal(at(t, "2026-12-01T10:10:00Z")) {
		t.Errorf("catch_up: %v, want the 10 missed ticks 10:01..10:10", got)
	}
	got, _ = sp.Due(last, now, CatchUp, 3)
	if len(got) != 3 || !got[0].Equal(at(t, "2026-12-01T10:08:00Z")) {
		t.Errorf("catch_up max 3: %v, want 10:08..10:10", got)
	}
	got, next = sp.Due(at(t, "2026-12-01T10:10:00Z"), now, Skip, 0)
	if len(got) != 0 || !next.Equal(at(t, "2026-12-01T10:11:00Z")) {
		t.Errorf("nothing due: %v next %v", got, next)
	}
}
