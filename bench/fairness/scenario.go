package main

import (
	"fmt"
	"math"
	"time"
)

// tenant is one tenant of a scenario: what it submits and when. Each
// tenant is one group (EnqueueOpts.Group) in the groups mode; the FIFO
// mode submits the same tasks with no group.
type tenant struct {
	name    string
	weight  int  // its group weight (Admin.SetGroupWeight); 0 means 1
	watched bool // its waits are reported

	// backlog tasks are submitted in one go: before the worker starts,
	// or, when late is set, as the arrivals begin.
	backlog int
	late    bool

	// burst tasks are submitted every `every`, from offset after the
	// arrivals begin until the arrivals end.
	burst  int
	every  time.Duration
	offset time.Duration
}

// backlogged says whether the tenant submits all its tasks in one go: it
// then has tasks waiting from its submission until its last one starts.
func (t *tenant) backlogged() bool { return t.burst == 0 }

// bursts returns the offsets, after the arrivals begin, at which the
// tenant submits a burst.
func (t *tenant) bursts(arrivals time.Duration) []time.Duration {
	var at []time.Duration
	if t.burst == 0 {
		return nil
	}
	for d := t.offset; d < arrivals; d += t.every {
		at = append(at, d)
	}
	return at
}

// tasks is how many tasks the tenant submits in all.
func (t *tenant) tasks(arrivals time.Duration) int {
	return t.backlog + t.burst*len(t.bursts(arrivals))
}

func (t *tenant) groupWeight() int { return max(t.weight, 1) }

// scenario is one named workload.
type scenario struct {
	name    string // short and unique: the report's row, -run's filter
	title   string // what it is, in a few words
	watched string // who is watched, in a few words
	tenants []tenant
	// rounds > 0 submits the preloaded backlogs in turns of this many
	// tasks per tenant; 0 submits each tenant's whole backlog in turn, in
	// the order of tenants.
	rounds int
	// warmup is how long the worker serves the preloaded backlogs before
	// the arrivals begin.
	warmup time.Duration
	// arrivals is how long the bursts go on; 0 when no tenant bursts.
	arrivals time.Duration
}

// streaming says whether some tenant submits over time (bursts).
func (s *scenario) streaming() bool {
	for i := range s.tenants {
		if !s.tenants[i].backlogged() {
			return true
		}
	}
	return false
}

// scenarios returns the six named workloads, their counts and durations
// multiplied by scale (1 is the size of the report in
// docs/performance.md; the test runs them small). At scale 1 the heavy
// backlogs outlast the arrivals at the default worker's ~3,800 starts/s.
func scenarios(scale float64) []scenario {
	n := func(x int) int { return max(1, int(math.Round(float64(x)*scale))) }
	d := func(x time.Duration) time.Duration { return time.Duration(float64(x) * scale) }
	named := func(prefix string, count int, t tenant) []tenant {
		out := make([]tenant, count)
		for i := range out {
			out[i] = t
			out[i].name = fmt.Sprintf("%s%02d", prefix, i+1)
		}
		return out
	}

	heavyLight := scenario{
		name:    "heavy-light",
		title:   fmt.Sprintf("1 tenant with %s queued, then 50 light tenants with %s each at once", thousands(n(20_000)), thousands(n(20))),
		watched: "the 50 light tenants",
		tenants: append([]tenant{{name: "heavy", backlog: n(20_000)}},
			named("light", 50, tenant{backlog: n(20), watched: true})...),
	}

	skew := scenario{
		name:    "skew",
		title:   fmt.Sprintf("4 tenants with %s, %s, %s and %s queued, the largest submitted first", thousands(n(10_000)), thousands(n(1_000)), thousands(n(100)), thousands(n(10))),
		watched: "all but the largest",
	}
	for _, size := range []int{10_000, 1_000, 100, 10} {
		skew.tenants = append(skew.tenants, tenant{name: fmt.Sprintf("q%d", size), backlog: n(size), watched: size < 10_000})
	}

	trickle := scenario{
		name:     "trickle",
		title:    fmt.Sprintf("1 tenant with %s queued; 10 light tenants submit 1 task each every %v for %v", thousands(n(20_000)), d(250*time.Millisecond), d(3*time.Second)),
		watched:  "the 10 light tenants",
		tenants:  []tenant{{name: "heavy", backlog: n(20_000)}},
		arrivals: d(3 * time.Second),
	}
	for i := range 10 {
		trickle.tenants = append(trickle.tenants, tenant{name: fmt.Sprintf("light%02d", i+1), watched: true,
			burst: 1, every: d(250 * time.Millisecond), offset: d(time.Duration(i) * 25 * time.Millisecond)})
	}

	bursty := scenario{
		name:     "bursty",
		title:    fmt.Sprintf("1 tenant with %s queued; 5 tenants submit %s tasks at once every %v, staggered, for %v", thousands(n(20_000)), thousands(n(100)), d(time.Second), d(3*time.Second)),
		watched:  "the 5 bursty tenants",
		tenants:  []tenant{{name: "heavy", backlog: n(20_000)}},
		arrivals: d(3 * time.Second),
	}
	for i := range 5 {
		bursty.tenants = append(bursty.tenants, tenant{name: fmt.Sprintf("burst%02d", i+1), watched: true,
			burst: n(100), every: d(time.Second), offset: d(time.Duration(i) * 200 * time.Millisecond)})
	}

	weights := scenario{
		name:    "weights-3:1",
		title:   fmt.Sprintf("2 tenants with %s queued each, submitted in turns of %s; one has weight 3", thousands(n(6_000)), thousands(n(100))),
		watched: "the weight-3 tenant",
		tenants: []tenant{{name: "w3", weight: 3, backlog: n(6_000), watched: true}, {name: "w1", backlog: n(6_000)}},
		rounds:  n(100),
	}

	late := scenario{
		name:    "late",
		title:   fmt.Sprintf("5 tenants with %s queued each, served for %v; then a new tenant submits %s", thousands(n(4_000)), d(time.Second), thousands(n(200))),
		watched: "the late tenant",
		tenants: append(named("busy", 5, tenant{backlog: n(4_000)}),
			tenant{name: "late", backlog: n(200), late: true, watched: true}),
		rounds: n(100),
		warmup: d(time.Second),
	}

	return []scenario{heavyLight, skew, trickle, bursty, weights, late}
}
