package dtq

import (
	"context"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/dtq-dev/dtq/internal/keys"
	"github.com/dtq-dev/dtq/internal/store"
)

// Event is a task's transition to a status, published (fire-and-forget) by
// the script that made it. A subscriber that is not connected misses events.
type Event struct {
	Queue    string    `json:"queue"`
	TaskID   string    `json:"task_id"`
	Status   Status    `json:"status"`
	Type     string    `json:"task_type"`
	Attempt  int       `json:"attempt"`
	Priority int       `json:"priority"`
	Time     time.Time `json:"time"`
	Error    string    `json:"error,omitempty"`
	// Progress is set on a RUNNING event that reports progress (Progress,
	// a lease's progress); At is then the event's Time.
	Progress *TaskProgress `json:"progress,omitempty"`
	// Suspended is set on the SCHEDULED event of a task whose execution
	// suspended (Sleep, WaitFor): what it waits for, until when.
	Suspended *Suspension `json:"suspended,omitempty"`
}

// suspendMark begins the last field of a suspension's event line (an
// error text never holds it).
const suspendMark = "\x1e"

// suspendLine is the event line of t suspended for s until the Unix ms due.
func suspendLine(t *Task, s *suspension, due int64) string {
	return eventLine(t, StatusScheduled, suspendMark+s.kind+" "+s.name+"|"+strconv.FormatInt(due, 10))
}

// Events calls fn for every lifecycle event of queues (all queues of the
// namespace when none are given) until ctx ends or the subscription fails.
// fn runs on the subscription's goroutine: it must not block.
func (c *Client) Events(ctx context.Context, queues []string, fn func(Event)) error {
	for _, q := range queues {
		if err := keys.CheckName("queue", q); err != nil {
			return invalid("queues", "%v", err)
		}
	}
	return c.store.SubscribeEvents(ctx, queues, func(queue, message string) {
		for _, line := range strings.Split(message, "\n") {
			if e, ok := parseEvent(queue, line); ok {
				fn(e)
			}
		}
	})
}

// parseEvent parses "id \t status \t type \t attempt \t priority \t ms [\t error]".
func parseEvent(queue, line string) (Event, bool) {
	f := strings.SplitN(line, "\t", 7)
	if len(f) < 6 {
		return Event{}, false
	}
	att, _ := strconv.Atoi(f[3])
	prio, _ := strconv.Atoi(f[4])
	ms, _ := strconv.ParseInt(f[5], 10, 64)
	e := Event{Queue: queue, TaskID: f[0], Status: Status(f[1]), Type: f[2], Attempt: att, Priority: prio, Time: time.UnixMilli(ms).UTC()}
	if len(f) == 7 && e.Status == StatusRunning {
		// a progress report: "<fraction>|<note>"
		frac, note, _ := strings.Cut(f[6], "|")
		if v, err := strconv.ParseFloat(frac, 64); err == nil {
			e.Progress = &TaskProgress{Fraction: v, Note: note, At: e.Time}
		}
	} else if w, ok := strings.CutPrefix(f[len(f)-1], suspendMark); ok && len(f) == 7 && e.Status == StatusScheduled {
		// a suspension: "<mark><kind> <name>|<until ms>"
		what, until, _ := strings.Cut(w, "|")
		u, _ := strconv.ParseInt(until, 10, 64)
		e.Suspended = suspensionOf(what, u)
	} else if len(f) == 7 {
		e.Error = f[6]
	}
	return e, true
}

// eventLine encodes an event of t reaching status, as parseEvent reads it.
func eventLine(t *Task, status Status, errText string) string {
	var b strings.Builder
	b.Grow(len(t.ID) + len(t.Type) + len(errText) + 48)
	b.WriteString(t.ID)
	b.WriteByte('\t')
	b.WriteString(string(status))
	b.WriteByte('\t')
	b.WriteString(t.Type)
	b.WriteByte('\t')
	b.WriteString(strconv.Itoa(t.Attempt))
	b.WriteByte('\t')
	b.WriteString(strconv.Itoa(t.Priority))
	b.WriteByte('\t')
	b.WriteString(strconv.FormatInt(time.Now().UnixMilli(), 10))
	if errText != "" {
		b.WriteByte('\t')
		b.WriteString(strings.Map(func(r rune) rune {
			if r == '\t' || r == '\n' {
				return ' '
			}
			return r
		}, errText))
	}
	return b.String()
}

// eventLinger is how long event lines wait to ride along with a
// submission's round trip (takeEvents) before they are published on their
// own: events reach subscribers at most this much later than their
// transition.
const eventLinger = 2 * time.Millisecond

// publisher coalesces event lines per channel. Lines wait up to
// eventLinger: a submission meanwhile takes them into its own round trip
// (one PUBLISH per channel riding along with its XADD), else a timer
// publishes them together. A process that submits one task at a time thus
// sends no command of its own for events, and none concurrently with its
// submissions — which keeps rueidis on its synchronous path (a second
// command in flight moves a connection to its pipelining goroutines for
// good: two goroutine hand-offs per call).
type publisher struct {
	linger  time.Duration // eventLinger (a test sets another: SetEventLinger)
	mu      sync.Mutex
	pending map[string][]string
	armed   bool      // a flush timer is set
	taken   time.Time // when a submission last took the pending lines
}

// publish sends event lines on channel, fire-and-forget, within
// eventLinger, without making the caller wait for Redis.
func (c *engine) publish(channel string, lines []string) {
	if len(lines) == 0 {
		return
	}
	p := &c.pub
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.pending == nil {
		p.pending = map[string][]string{}
	}
	p.pending[channel] = append(p.pending[channel], lines...)
	if !p.armed {
		p.armed = true
		time.AfterFunc(p.linger, c.flushEvents)
	}
}

// takeEvery spaces the submissions that take pending lines: concurrent
// submissions do not each carry a PUBLISH of a few lines.
const takeEvery = eventLinger / 8

// takeEvents takes the pending event lines for a submission to send in its
// round trip (nil: none, or another took lines less than takeEvery ago).
func (c *engine) takeEvents() []store.Publication {
	p := &c.pub
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.pending) == 0 || time.Since(p.taken) < takeEvery {
		return nil
	}
	p.taken = time.Now()
	return takePending(p)
}

// takePending empties p.pending into publications; p.mu is held.
func takePending(p *publisher) []store.Publication {
	out := make([]store.Publication, 0, len(p.pending))
	for ch, lines := range p.pending {
		out = append(out, store.Publication{Channel: ch, Lines: lines})
	}
	p.pending = nil
	return out
}

// flushEvents, the timer's, publishes the pending lines (on a connection
// of their own: store.Publish) — unless a submission took lines within
// eventLinger: submissions are under way, and the next will take these too
// (the timer is set again for the rest).
func (c *engine) flushEvents() {
	p := &c.pub
	p.mu.Lock()
	if since := time.Since(p.taken); len(p.pending) > 0 && since < p.linger {
		time.AfterFunc(p.linger-since, c.flushEvents)
		p.mu.Unlock()
		return
	}
	p.armed = false
	p.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	c.flushEventsNow(ctx)
}

// flushEventsNow publishes the pending lines at once (the timer's, and a
// stopping worker's last events, which would otherwise wait for it).
func (c *engine) flushEventsNow(ctx context.Context) {
	p := &c.pub
	p.mu.Lock()
	if len(p.pending) == 0 {
		p.mu.Unlock()
		return
	}
	batch := takePending(p)
	p.mu.Unlock()
	if err := c.store.Publish(ctx, batch); err != nil {
		c.redisError("publish", err)
		c.log.Debug("publishing events failed", "error", err)
	}
}
