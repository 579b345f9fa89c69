package dtq

import (
	"context"
	"log/slog"
	"strconv"
	"sync"
	"time"

	"github.com/dtq-dev/dtq/internal/store"
)

// The stored history (Admin.History): each process counts its task events
// per queue, task type and minute in memory — submissions, execution
// outcomes, and histograms of run time and pickup — and adds them to the
// queue's minute and hour buckets in Redis (store.AddHistory) every
// historyFlushEvery, and when a Worker or LeaseServer stops. The plain path
// pays a map update per event; Redis sees a few commands per queue, type
// and flush, whatever the rate.

// historyFlushEvery is how long counts wait in a process before they are
// added to Redis: what a process that dies loses at most.
const historyFlushEvery = 5 * time.Second

// historyMaxTypes bounds the task types of one queue a process counts apart
// in one minute; the others count as historyOtherType.
const historyMaxTypes = 50

// historyOtherType names the task types counted beyond historyMaxTypes (a
// name no task type has: types are checked names).
const historyOtherType = "(other)"

// histBounds are the upper bounds (ms) of the run-time and pickup
// histograms' buckets; a last bucket holds what is above them.
var histBounds = [...]int64{1, 2, 5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10000, 30000, 60000, 300000, 900000, 3600000}

// histBuckets is the number of buckets of a histogram.
const histBuckets = len(histBounds) + 1

// Counter names of a history bucket's fields ("<type>\n<name>"); a
// histogram's bucket i is "r<i>" (run time) or "p<i>" (pickup).
const (
	histSubmitted = "submitted"
	histSucceeded = "succeeded"
	histRetried   = "retried"
	histDead      = "dead"
	histCancelled = "cancelled"
	histLost      = "lost"
	histSuspended = "suspended"
)

// HistoryBytesPerTypeBucket bounds the memory one task type takes in one
// bucket of a queue's stored history in Redis: at most 45 counters (7
// counts, two histograms of 19 buckets; those at zero are not stored), of
// fields "<type>\n<counter>" of at most 74 bytes, ~128 bytes each in a
// hash (its listpack form, under 128 fields, takes less). A queue keeps a
// day of minute buckets and 30 days of hour buckets: at most 2,160 × types
// × this, ~13 MiB per task type active every minute of 30 days.
const HistoryBytesPerTypeBucket = 6 << 10

// histCell is what one count is of: a queue, a task type, a minute.
type histCell struct {
	queue, typ string
	minute     int64
}

// histCounts are a cell's counts.
type histCounts struct {
	submitted, succeeded, retried, dead, cancelled, lost, suspended int64
	run, pickup                                                     [histBuckets]int64
}

// historyFold holds this process's counts until their flush. The zero
// value (nil store) counts nothing.
type historyFold struct {
	store *store.Store
	log   *slog.Logger

	mu    sync.Mutex
	cells map[histCell]*histCounts
	// apart are the (queue, type, minute) counted apart, and nApart how
	// many per (queue, minute): kept across flushes for the minute.
	apart  map[histCell]bool
	nApart map[histCell]int
	armed  bool       // a flush timer is set
	flushM sync.Mutex // one flush at a time
}

func newHistoryFold(s *store.Store, log *slog.Logger) *historyFold {
	return &historyFold{store: s, log: log}
}

// cell returns the counts of queue and typ now, arming the flush timer;
// h.mu is held.
func (h *historyFold) cell(queue, typ string) *histCounts {
	if h.cells == nil {
		h.cells = map[histCell]*histCounts{}
	}
	if h.apart == nil {
		h.apart, h.nApart = map[histCell]bool{}, map[histCell]int{}
	}
	m := time.Now().Unix() / 60
	k := histCell{queue, typ, m}
	if !h.apart[k] {
		qm := histCell{queue: queue, minute: m}
		if h.nApart[qm] >= historyMaxTypes {
			k.typ = historyOtherType
		} else {
			h.apart[k] = true
			h.nApart[qm]++
		}
	}
	c := h.cells[k]
	if c == nil {
		c = &histCounts{}
		h.cells[k] = c
	}
	if !h.armed {
		h.armed = true
		time.AfterFunc(historyFlushEvery, h.flushTimer)
	}
	return c
}

// histBucket is the histogram bucket of d.
func histBucket(d time.Duration) int {
	ms := d.Milliseconds()
	for i, b := range histBounds {
		if ms <= b {
			return i
		}
	}
	return len(histBounds)
}

func (h *historyFold) submitted(queue, typ string) {
	if h == nil {
		return
	}
	h.mu.Lock()
	h.cell(queue, typ).submitted++
	h.mu.Unlock()
}

func (h *historyFold) started(queue, typ string, pickup time.Duration) {
	if h == nil {
		return
	}
	b := histBucket(pickup)
	h.mu.Lock()
	h.cell(queue, typ).pickup[b]++
	h.mu.Unlock()
}

// finished counts an execution's outcome and its run time.
func (h *historyFold) finished(queue, typ string, o Outcome, run time.Duration) {
	if h == nil {
		return
	}
	b := histBucket(run)
	h.mu.Lock()
	c := h.cell(queue, typ)
	c.run[b]++
	c.count(o)
	h.mu.Unlock()
}

// ended counts a task that ended without an execution.
func (h *historyFold) ended(queue, typ string, o Outcome) {
	if h == nil {
		return
	}
	h.mu.Lock()
	h.cell(queue, typ).count(o)
	h.mu.Unlock()
}

func (c *histCounts) count(o Outcome) {
	switch o {
	case OutcomeSucceeded:
		c.succeeded++
	case OutcomeRetried:
		c.retried++
	case OutcomeDead:
		c.dead++
	case OutcomeCancelled:
		c.cancelled++
	case OutcomeLost:
		c.lost++
	case OutcomeSuspended:
		c.suspended++
	}
}

// fields are c's counters by field name, the zero ones left out.
func (c *histCounts) fields() map[string]int64 {
	f := map[string]int64{}
	for name, v := range map[string]int64{histSubmitted: c.submitted, histSucceeded: c.succeeded, histRetried: c.retried,
		histDead: c.dead, histCancelled: c.cancelled, histLost: c.lost, histSuspended: c.suspended} {
		if v != 0 {
			f[name] = v
		}
	}
	for i := range histBuckets {
		if c.run[i] != 0 {
			f["r"+strconv.Itoa(i)] = c.run[i]
		}
		if c.pickup[i] != 0 {
			f["p"+strconv.Itoa(i)] = c.pickup[i]
		}
	}
	return f
}

// flushTimer is the timer's flush.
func (h *historyFold) flushTimer() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	h.flush(ctx)
}

// flush adds the counts held to Redis. Counts it could not add are kept
// for the next flush (the timer is set again).
func (h *historyFold) flush(ctx context.Context) {
	if h == nil {
		return
	}
	h.flushM.Lock()
	defer h.flushM.Unlock()
	h.mu.Lock()
	cells := h.cells
	h.cells, h.armed = nil, false
	now := time.Now().Unix() / 60
	for k := range h.apart { // (the past minutes' are done with)
		if k.minute < now {
			delete(h.apart, k)
		}
	}
	for k := range h.nApart {
		if k.minute < now {
			delete(h.nApart, k)
		}
	}
	h.mu.Unlock()
	if len(cells) == 0 {
		return
	}
	byQM := map[histCell]*store.HistoryAdd{}
	var adds []*store.HistoryAdd
	for k, c := range cells {
		qm := histCell{queue: k.queue, minute: k.minute}
		a := byQM[qm]
		if a == nil {
			a = &store.HistoryAdd{Queue: k.queue, Minute: k.minute, Counts: map[string]map[string]int64{}}
			byQM[qm] = a
			adds = append(adds, a)
		}
		a.Counts[k.typ] = c.fields()
	}
	list := make([]store.HistoryAdd, len(adds))
	for i, a := range adds {
		list[i] = *a
	}
	if err := h.store.AddHistory(ctx, list); err != nil {
		h.log.Warn("adding to the stored history failed; kept for the next try", "error", err)
		h.mu.Lock()
		for k, c := range cells {
			h.cell(k.queue, k.typ).add(c) // (counted in the current minute)
		}
		h.mu.Unlock()
	}
}

// add adds o's counts to c.
func (c *histCounts) add(o *histCounts) {
	c.submitted += o.submitted
	c.succeeded += o.succeeded
	c.retried += o.retried
	c.dead += o.dead
	c.cancelled += o.cancelled
	c.lost += o.lost
	c.suspended += o.suspended
	for i := range histBuckets {
		c.run[i] += o.run[i]
		c.pickup[i] += o.pickup[i]
	}
}
