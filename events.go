package dtq

import (
	"context"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/dtq-dev/dtq/internal/keys"
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

// publisher coalesces event lines per channel: while one PUBLISH round is
// out, lines published meanwhile wait and go out together in the next, so
// a busy process sends one PUBLISH per channel per round trip, and an idle
// one publishes each event at once.
type publisher struct {
	mu       sync.Mutex
	pending  map[string][]string
	flushing bool
}

// publish sends event lines on channel, fire-and-forget, without making the
// caller wait for Redis.
func (c *Client) publish(channel string, lines []string) {
	if len(lines) == 0 {
		return
	}
	p := &c.pub
	p.mu.Lock()
	if p.pending == nil {
		p.pending = map[string][]string{}
	}
	p.pending[channel] = append(p.pending[channel], lines...)
	if p.flushing {
		p.mu.Unlock()
		return
	}
	p.flushing = true
	p.mu.Unlock()
	go c.flushEvents()
}

// flushEvents publishes pending lines until none are left.
func (c *Client) flushEvents() {
	p := &c.pub
	for {
		p.mu.Lock()
		batch := p.pending
		p.pending = nil
		if len(batch) == 0 {
			p.flushing = false
			p.mu.Unlock()
			return
		}
		p.mu.Unlock()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		for channel, lines := range batch {
			if err := c.store.Publish(ctx, channel, lines); err != nil {
				c.redisError("publish", err)
				c.log.Debug("publishing events failed", "channel", channel, "error", err)
			}
		}
		cancel()
	}
}
