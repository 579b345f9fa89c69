package dtq

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/dtq-dev/dtq/internal/store"
)

// RedriveFilter picks dead letters of one queue to requeue: each given
// field must match (none: every dead letter).
type RedriveFilter struct {
	Queue string
	Type  string // the task type, exactly
	// ErrorContains matches the dead reason (the last error), without
	// regard to letter case.
	ErrorContains string
	// After and Before bound when the task died (zero: open).
	After, Before time.Time
}

// RedriveOpts are the options of Redrive.
type RedriveOpts struct {
	// DryRun counts the matching dead letters and requeues nothing.
	DryRun bool
	// Limit is how many to requeue (or count) at most in this call:
	// 1-MaxRedriveLimit, default 1,000. Result.More says more match.
	Limit int
	// Rate is how many requeues per second at most, 0.1-MaxRedriveRate
	// (default 100): a redrive cannot flood a dependency that is just
	// recovering.
	Rate float64
}

// Bounds of RedriveOpts.
const (
	MaxRedriveLimit = 100000
	MaxRedriveRate  = 100000
)

// RedriveResult is what Redrive did.
type RedriveResult struct {
	Matched  int  `json:"matched"`  // dead letters that matched, up to the limit
	Requeued int  `json:"requeued"` // of those, requeued (0 on a dry run)
	DryRun   bool `json:"dry_run"`
	// More: more dead letters match beyond the limit (call again).
	More bool `json:"more"`
}

// Redrive requeues the dead letters of f.Queue that match f, oldest first,
// at most o.Rate per second, up to o.Limit — or, with o.DryRun, only
// counts them. Only the dead letters there when it starts are considered
// (a task requeued here that dies again is not requeued twice). An entry
// of the stream whose task is no dead letter any more (gone, or requeued
// meanwhile) is not requeued: a redrive that comes to it drops it. A redrive
// (not a dry run) is recorded in the audit stream with its filter.
func (a *Admin) Redrive(ctx context.Context, f RedriveFilter, o RedriveOpts) (*RedriveResult, error) {
	if err := checkQueue("queue", f.Queue); err != nil {
		return nil, err
	}
	if f.Type != "" {
		if err := checkType(f.Type); err != nil {
			return nil, err
		}
	}
	if !f.After.IsZero() && !f.Before.IsZero() && !f.After.Before(f.Before) {
		return nil, invalid("dead_before", "must be after dead_after")
	}
	switch {
	case o.Limit == 0:
		o.Limit = 1000
	case o.Limit < 0 || o.Limit > MaxRedriveLimit:
		return nil, invalid("limit", "must be 1-%d (got %d)", MaxRedriveLimit, o.Limit)
	}
	switch {
	case o.Rate == 0:
		o.Rate = 100
	case o.Rate < 0.1 || o.Rate > MaxRedriveRate:
		return nil, invalid("redrive_rate", "must be 0.1-%d per second (got %v)", MaxRedriveRate, o.Rate)
	}
	q := a.store.Queue(f.Queue)
	last, err := q.DeadLetters(ctx, 1, "")
	if err != nil {
		return nil, err
	}
	res := &RedriveResult{DryRun: o.DryRun}
	if len(last) == 0 {
		return res, nil
	}
	start, end := "-", last[0].EntryID
	if !f.After.IsZero() {
		start = strconv.FormatInt(f.After.UnixMilli(), 10) + "-0"
	}
	if !f.Before.IsZero() {
		if b := strconv.FormatInt(f.Before.UnixMilli(), 10) + "-0"; entryBefore(b, end) {
			end = "(" + b
		}
	}
	needle := strings.ToLower(f.ErrorContains)
	pace := newPacer(o.Rate)
	var batch []store.DeadEntry
	flush := func() error {
		defer func() { batch = batch[:0] }()
		for i := 0; i < len(batch) && !o.DryRun; i += dlqBatch {
			n, err := a.requeueDead(ctx, q, batch[i:min(i+dlqBatch, len(batch))])
			res.Requeued += n
			if err != nil {
				return err
			}
		}
		return nil
	}
	for cursor := start; ; {
		entries, err := q.DeadLettersRange(ctx, cursor, end, 200)
		if err != nil {
			return res, err
		}
		if len(entries) == 0 {
			break
		}
		cursor = "(" + entries[len(entries)-1].EntryID
		var cands []store.DeadEntry
		for _, e := range entries {
			if needle == "" || strings.Contains(strings.ToLower(e.Reason), needle) {
				cands = append(cands, e)
			}
		}
		if f.Type != "" && len(cands) > 0 {
			ids := make([]string, len(cands))
			for i, e := range cands {
				ids[i] = e.TaskID
			}
			recs, err := a.store.GetMany(ctx, ids)
			if err != nil {
				return res, err
			}
			kept := cands[:0]
			for i, r := range recs {
				if r != nil && r.Type == f.Type {
					kept = append(kept, cands[i])
				}
			}
			cands = kept
		}
		for _, e := range cands {
			if res.Matched == o.Limit {
				res.More = true
				break
			}
			res.Matched++
			batch = append(batch, e)
			if !o.DryRun && pace.due(len(batch)) {
				if err := flush(); err != nil {
					return res, err
				}
				if err := pace.wait(ctx); err != nil {
					return res, err
				}
			}
		}
		if res.More || len(entries) < 200 {
			break
		}
	}
	if err := flush(); err != nil {
		return res, err
	}
	if !o.DryRun {
		a.audit(ctx, auditRedrive, f.Queue, "", fmt.Sprintf("type=%q error~%q after=%s before=%s: %d requeued of %d matched",
			f.Type, f.ErrorContains, fmtOpenTime(f.After), fmtOpenTime(f.Before), res.Requeued, res.Matched))
	}
	return res, nil
}

// requeueDead requeues the tasks of dead-letter entries es and returns how
// many; an entry whose task is no dead letter any more (gone, or not DEAD)
// is dropped from the stream.
func (c *engine) requeueDead(ctx context.Context, q *store.Queue, es []store.DeadEntry) (int, error) {
	ids := make([]string, len(es))
	for i, e := range es {
		ids[i] = e.TaskID
	}
	done, err := q.DLQ(ctx, store.Requeue, ids, c.keepOthers())
	if err != nil {
		return 0, err
	}
	n := 0
	var stale []string
	for i, r := range done {
		if r == store.DLQDone {
			n++
		} else {
			stale = append(stale, es[i].EntryID)
		}
	}
	if len(stale) > 0 {
		return n, q.DropDeadLetters(ctx, stale)
	}
	return n, nil
}

// entryBefore reports whether stream id a is before stream id b.
func entryBefore(a, b string) bool {
	am, as, _ := strings.Cut(a, "-")
	bm, bs, _ := strings.Cut(b, "-")
	an, _ := strconv.ParseUint(am, 10, 64)
	bn, _ := strconv.ParseUint(bm, 10, 64)
	if an != bn {
		return an < bn
	}
	x, _ := strconv.ParseUint(as, 10, 64)
	y, _ := strconv.ParseUint(bs, 10, 64)
	return x < y
}

func fmtOpenTime(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.UTC().Format(time.RFC3339)
}

// pacer spreads requeues at a rate: batches every 100 ms (or of one task,
// below 10 per second).
type pacer struct {
	per  int
	tick time.Duration
	next time.Time
}

func newPacer(rate float64) *pacer {
	per := int(rate / 10)
	tick := 100 * time.Millisecond
	if per < 1 {
		per, tick = 1, time.Duration(float64(time.Second)/rate)
	}
	return &pacer{per: per, tick: tick, next: time.Now().Add(tick)}
}

// due reports whether a batch of n is full.
func (p *pacer) due(n int) bool { return n >= p.per }

// wait sleeps until the next batch may go.
func (p *pacer) wait(ctx context.Context) error {
	d := time.Until(p.next)
	p.next = p.next.Add(p.tick)
	if d <= 0 {
		return nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
