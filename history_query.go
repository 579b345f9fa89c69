package dtq

import (
	"context"
	"sort"
	"strconv"
	"time"

	"github.com/dtq-dev/dtq/internal/keys"
	"github.com/dtq-dev/dtq/internal/store"
)

// HistoryQuery selects a stretch of the stored history (Admin.History).
type HistoryQuery struct {
	// Queue is the queue; "" adds up every queue of the namespace.
	Queue string
	// Type is the task type; "" adds up every type.
	Type string
	// Step is the bucket: time.Minute (kept a day) or time.Hour (kept 30
	// days). Zero: a minute for a stretch of up to 6 hours, else an hour.
	Step time.Duration
	// Since and Until bound the stretch, rounded out to whole buckets.
	// Until defaults to now, Since to an hour before Until. At most
	// MaxHistoryBuckets buckets, within the step's retention.
	Since, Until time.Time
}

// MaxHistoryBuckets bounds the buckets of one Admin.History call (a day of
// minutes).
const MaxHistoryBuckets = 1440

// History is a stretch of the stored history: per bucket, what the
// processes of the namespace counted of the selected queue and task type.
type History struct {
	Queue string
	Type  string
	Step  time.Duration
	// Types are the task types counted in the stretch, by name (one named
	// "(other)" holds a process's types beyond 50 in a minute).
	Types   []string
	Buckets []HistoryBucket
}

// HistoryBucket is one bucket of a History: the submissions, the outcomes
// of the executions that ended in it (and of tasks that ended without one:
// cancelled while waiting, DEAD at a takeover), and percentiles of the run
// time of those executions and of the pickup (ready to started) of the
// executions that started in it.
type HistoryBucket struct {
	At        time.Time
	Submitted int64
	Succeeded int64
	Retried   int64
	Dead      int64
	Cancelled int64
	Lost      int64
	Suspended int64
	Run       Percentiles
	Pickup    Percentiles
}

// Percentiles summarise the durations counted in a bucket's histogram
// (buckets of 1 ms to 1 h: a percentile is interpolated within its
// histogram bucket, so it is exact to that bucket's width). Count is how
// many were counted; with none, the percentiles are zero.
type Percentiles struct {
	Count int64
	P50   time.Duration
	P95   time.Duration
	P99   time.Duration
}

// History returns a stretch of the stored history (see HistoryQuery).
// Counts reach Redis a few seconds after their events (historyFlushEvery),
// and a process that dies loses those it had not added yet.
func (a *Admin) History(ctx context.Context, q HistoryQuery) (*History, error) {
	if q.Queue != "" {
		if err := checkQueue("queue", q.Queue); err != nil {
			return nil, err
		}
	}
	if q.Type != "" && q.Type != historyOtherType && !keys.ValidName(q.Type) {
		return nil, invalid("type", "must be %s (got %q)", keys.NameRule, q.Type)
	}
	until := q.Until
	if until.IsZero() {
		until = time.Now()
	}
	since := q.Since
	if since.IsZero() {
		since = until.Add(-time.Hour)
	}
	if !since.Before(until) {
		return nil, invalid("since", "must be before until")
	}
	step := q.Step
	if step == 0 {
		step = time.Minute
		if until.Sub(since) > 6*time.Hour {
			step = time.Hour
		}
	}
	keep := store.HistoryMinuteKeep
	switch step {
	case time.Minute:
	case time.Hour:
		keep = store.HistoryHourKeep
	default:
		return nil, invalid("step", "must be a minute or an hour (got %s)", step)
	}
	if since.Before(time.Now().Add(-keep - step)) {
		return nil, invalid("since", "is beyond what is kept: %s of %s buckets", keep, step)
	}
	unit := int64(step / time.Second)
	from, to := since.Unix()/unit, until.Unix()/unit
	if to-from+1 > MaxHistoryBuckets {
		return nil, invalid("since", "asks for %d buckets, more than %d: take a longer step or a shorter stretch", to-from+1, MaxHistoryBuckets)
	}
	queues := []string{q.Queue}
	if q.Queue == "" {
		names, err := a.store.QueueNames(ctx)
		if err != nil {
			return nil, err
		}
		queues = names
	}
	n := int(to - from + 1)
	sum := make([]store.HistoryBucket, n)
	types := map[string]bool{}
	for _, name := range queues {
		bs, err := a.store.Queue(name).ReadHistory(ctx, step == time.Hour, from, to)
		if err != nil {
			return nil, err
		}
		for i, b := range bs {
			for typ, counts := range b {
				types[typ] = true
				if q.Type != "" && typ != q.Type {
					continue
				}
				if sum[i] == nil {
					sum[i] = store.HistoryBucket{}
				}
				if sum[i][""] == nil {
					sum[i][""] = map[string]int64{}
				}
				for k, v := range counts {
					sum[i][""][k] += v
				}
			}
		}
	}
	h := &History{Queue: q.Queue, Type: q.Type, Step: step, Types: make([]string, 0, len(types)), Buckets: make([]HistoryBucket, n)}
	for t := range types {
		h.Types = append(h.Types, t)
	}
	sort.Strings(h.Types)
	for i := range n {
		h.Buckets[i] = historyBucketOf(time.Unix((from+int64(i))*unit, 0).UTC(), sum[i][""])
	}
	return h, nil
}

// historyBucketOf is the HistoryBucket at at of stored counters c.
func historyBucketOf(at time.Time, c map[string]int64) HistoryBucket {
	b := HistoryBucket{At: at, Submitted: c[histSubmitted], Succeeded: c[histSucceeded], Retried: c[histRetried],
		Dead: c[histDead], Cancelled: c[histCancelled], Lost: c[histLost], Suspended: c[histSuspended]}
	var run, pick [histBuckets]int64
	for i := range histBuckets {
		run[i], pick[i] = c["r"+strconv.Itoa(i)], c["p"+strconv.Itoa(i)]
	}
	b.Run, b.Pickup = percentilesOf(run), percentilesOf(pick)
	return b
}

// percentilesOf reads p50, p95 and p99 off histogram h.
func percentilesOf(h [histBuckets]int64) Percentiles {
	var p Percentiles
	for _, v := range h {
		p.Count += v
	}
	if p.Count == 0 {
		return p
	}
	p.P50, p.P95, p.P99 = histQuantile(h, p.Count, 0.50), histQuantile(h, p.Count, 0.95), histQuantile(h, p.Count, 0.99)
	return p
}

// histQuantile is quantile q of histogram h of n values: interpolated
// linearly within the bucket it falls in (the last, open bucket answers
// its lower bound).
func histQuantile(h [histBuckets]int64, n int64, q float64) time.Duration {
	rank := q * float64(n)
	var cum int64
	for i, v := range h {
		if v == 0 || float64(cum+v) < rank {
			cum += v
			continue
		}
		lo := int64(0)
		if i > 0 {
			lo = histBounds[i-1]
		}
		if i == len(histBounds) {
			return time.Duration(lo) * time.Millisecond
		}
		frac := (rank - float64(cum)) / float64(v)
		ms := float64(lo) + frac*float64(histBounds[i]-lo)
		return time.Duration(ms * float64(time.Millisecond))
	}
	return time.Duration(histBounds[len(histBounds)-1]) * time.Millisecond
}
