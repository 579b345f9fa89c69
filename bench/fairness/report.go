package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"
)

// row is one scenario run in both modes.
type row struct {
	sc           *scenario
	groups, fifo *runData
	g, f         *result
}

// harness runs the selected scenarios, each with groups and then as the
// tenant-blind FIFO baseline (the same tasks, no group).
func harness(ctx context.Context, o *options) ([]row, error) {
	var rows []row
	all := scenarios(o.scale)
	for i := range all {
		sc := &all[i]
		if !strings.Contains(sc.name, o.only) {
			continue
		}
		r := row{sc: sc}
		for _, groups := range []bool{true, false} {
			began := time.Now()
			d, err := runOne(ctx, o, sc, groups)
			if err != nil {
				return nil, fmt.Errorf("%s (%s): %w", sc.name, modeName(groups), err)
			}
			res, err := measure(d)
			if err != nil {
				return nil, fmt.Errorf("%s (%s): %w", sc.name, modeName(groups), err)
			}
			if groups {
				r.groups, r.g = d, res
			} else {
				r.fifo, r.f = d, res
			}
			if o.progress != nil {
				o.progress("%s, %s: %d starts in %.1f s of run; contended period %d starts; worst share %.2f (%s); watched wait mean %v, p99 %v; slowest first start %v (%s)\n",
					sc.name, modeName(groups), len(d.starts), time.Since(began).Seconds(), res.periodStarts,
					res.worstShare, res.worstTenant, res.meanWait.Round(time.Millisecond), res.p99Wait.Round(time.Millisecond),
					res.firstStart.Round(time.Millisecond), res.firstStartTenant)
			}
		}
		rows = append(rows, r)
	}
	return rows, nil
}

func modeName(groups bool) string {
	if groups {
		return "groups"
	}
	return "FIFO"
}

// writeReport writes the markdown table of rows and the list of scenarios.
func writeReport(w io.Writer, o *options, rows []row) {
	fmt.Fprintf(w, "Backend %s, one worker of concurrency %d, handlers sleeping %v, scale %g. Each cell: groups · FIFO (no group).\n\n",
		o.backend, o.concurrency, o.handler, o.scale)
	fmt.Fprintln(w, "| scenario | watched | worst tenant's share of its fair share | watched wait, mean | watched wait, p99 | slowest watched tenant's first start | contended period: starts, starts/s |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|")
	for _, r := range rows {
		fmt.Fprintf(w, "| %s | %s | %s · %s | %s · %s | %s · %s | %s · %s | %s · %s |\n", r.sc.name, r.sc.watched,
			share(r.g), share(r.f), duration(r.g.meanWait), duration(r.f.meanWait),
			duration(r.g.p99Wait), duration(r.f.p99Wait), duration(r.g.firstStart), duration(r.f.firstStart),
			period(r.g), period(r.f))
	}
	fmt.Fprintln(w)
	for _, r := range rows {
		fmt.Fprintf(w, "- `%s`: %s.\n", r.sc.name, r.sc.title)
	}
}

func share(r *result) string { return fmt.Sprintf("%.2f (%s)", r.worstShare, r.worstTenant) }

func period(r *result) string {
	rate := 0.0
	if r.period > 0 {
		rate = float64(r.periodStarts) / r.period.Seconds()
	}
	return fmt.Sprintf("%s, %s/s", thousands(r.periodStarts), thousands(int(rate+0.5)))
}

// duration prints d in ms under a second, else in s.
func duration(d time.Duration) string {
	if d < time.Second {
		return fmt.Sprintf("%.1f ms", float64(d)/float64(time.Millisecond))
	}
	return fmt.Sprintf("%.2f s", d.Seconds())
}

// thousands prints n with commas: 20,000.
func thousands(n int) string {
	s := fmt.Sprint(n)
	for i := len(s) - 3; i > 0 && s[i-1] != '-'; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
