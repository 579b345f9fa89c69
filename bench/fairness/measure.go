package main

import (
	"errors"
	"math"
	"slices"
	"time"
)

// result is what the report says of one run.
type result struct {
	// The contended period: from the arrivals' beginning (t0) to the
	// first moment a backlogged tenant had no task left to start, or the
	// end of the arrivals if that came first.
	periodStarts int
	period       time.Duration
	// The worst-served tenant of the period: its starts over its fair
	// share of the period's starts, and its name.
	worstShare  float64
	worstTenant string
	// The watched tenants' waits, over all their tasks: from the
	// submission call to the handler's start (from the worker's start for
	// a task submitted before it).
	meanWait, p99Wait time.Duration
	watchedTasks      int
	// The watched tenant that waited longest for its first start: how
	// long, from its first submission call (or the worker's start).
	firstStart       time.Duration
	firstStartTenant string
}

func sortStarts(s []start) []start {
	s = slices.Clone(s)
	slices.SortStableFunc(s, func(a, b start) int { return int(a.at - b.at) })
	return s
}

// measure computes the result of a run.
//
// Fair share: over the contended period, a backlogged tenant (it submitted
// all its tasks at once, so it had some waiting throughout the period) may
// use any number of starts; a bursting tenant can use no more than it had
// waiting at the period's beginning plus what it submitted during it. The
// period's starts are shared out in proportion to the tenants' weights, no
// tenant getting more than it can use (max-min fairness, water-filling);
// a tenant's share is its starts in the period over that fair share.
func measure(d *runData) (*result, error) {
	sc := d.sc
	n := len(sc.tenants)
	// t1: the end of the contended period.
	t1 := time.Duration(math.MaxInt64)
	if sc.streaming() {
		t1 = d.t0 + sc.arrivals
	}
	last := make([]time.Duration, n)
	count := make([]int, n)
	for _, s := range d.starts {
		count[s.tenant]++
		last[s.tenant] = s.at
	}
	for i := range sc.tenants {
		t := &sc.tenants[i]
		if t.backlogged() && count[i] == t.tasks(sc.arrivals) && last[i] >= d.t0 {
			t1 = min(t1, last[i])
		}
	}
	if t1 == math.MaxInt64 {
		return nil, errors.New("the contended period did not end: no backlogged tenant ran out of tasks")
	}

	r := &result{period: t1 - d.t0}
	starts := make([]int, n)
	startedBefore := make([]int, n)
	for _, s := range d.starts {
		switch {
		case s.at < d.t0:
			startedBefore[s.tenant]++
		case s.at <= t1:
			starts[s.tenant]++
			r.periodStarts++
		}
	}
	demand := make([]float64, n)
	weight := make([]float64, n)
	for i := range sc.tenants {
		t := &sc.tenants[i]
		weight[i] = float64(t.groupWeight())
		if t.backlogged() {
			if t.tasks(sc.arrivals) > startedBefore[i] {
				demand[i] = math.Inf(1)
			}
			continue
		}
		submitted := 0
		for _, at := range d.submitted[i] {
			if at <= t1 {
				submitted++
			}
		}
		demand[i] = float64(submitted - startedBefore[i])
	}
	fair := waterFill(float64(r.periodStarts), demand, weight)
	r.worstShare = math.Inf(1)
	for i := range sc.tenants {
		if fair[i] <= 0 {
			continue
		}
		if share := float64(starts[i]) / fair[i]; share < r.worstShare {
			r.worstShare, r.worstTenant = share, sc.tenants[i].name
		}
	}

	var waits []time.Duration
	seen := make([]bool, n)
	for _, s := range d.starts {
		if !sc.tenants[s.tenant].watched {
			continue
		}
		waits = append(waits, s.at-max(d.submitted[s.tenant][s.seq], d.began))
		if !seen[s.tenant] {
			seen[s.tenant] = true
			if w := s.at - max(slices.Min(d.submitted[s.tenant]), d.began); w > r.firstStart {
				r.firstStart, r.firstStartTenant = w, sc.tenants[s.tenant].name
			}
		}
	}
	if len(waits) == 0 {
		return nil, errors.New("no watched task started")
	}
	r.watchedTasks = len(waits)
	var sum time.Duration
	for _, w := range waits {
		sum += w
	}
	r.meanWait = sum / time.Duration(len(waits))
	r.p99Wait = percentile(waits, 0.99)
	return r, nil
}

// waterFill shares total out among tenants in proportion to weight, none
// getting more than its demand (Inf: any); what a capped tenant leaves goes
// to the others. A tenant of demand 0 gets 0.
func waterFill(total float64, demand, weight []float64) []float64 {
	fair := make([]float64, len(demand))
	active := map[int]bool{}
	for i, d := range demand {
		if d > 0 {
			active[i] = true
		}
	}
	for len(active) > 0 {
		var sum float64
		for i := range active {
			sum += weight[i]
		}
		var capped []int
		for i := range active {
			if demand[i] <= total*weight[i]/sum {
				capped = append(capped, i)
			}
		}
		for _, i := range capped {
			fair[i] = demand[i]
			total -= demand[i]
			delete(active, i)
		}
		if len(capped) == 0 {
			for i := range active {
				fair[i] = total * weight[i] / sum
			}
			return fair
		}
	}
	return fair
}

// percentile returns the nearest-rank p-quantile of ds (sorted in place).
func percentile(ds []time.Duration, p float64) time.Duration {
	slices.Sort(ds)
	k := int(math.Ceil(p*float64(len(ds)))) - 1
	return ds[max(0, min(k, len(ds)-1))]
}
