package dtq

import (
	"context"
	"strconv"
	"strings"
	"time"

	"github.com/dtq-dev/dtq/internal/keys"
	"github.com/redis/rueidis"
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
	handle := func(m rueidis.PubSubMessage) {
		queue := queueOfChannel(m.Channel)
		for _, line := range strings.Split(m.Message, "\n") {
			if e, ok := parseEvent(queue, line); ok {
				fn(e)
			}
		}
	}
	return c.redis.Dedicated(func(dc rueidis.DedicatedClient) error {
		if len(queues) == 0 {
			pattern := keys.NewTasks(c.cfg.Namespace, "*").Events()
			return dc.Receive(ctx, dc.B().Psubscribe().Pattern(pattern).Build(), handle)
		}
		chans := make([]string, len(queues))
		for i, q := range queues {
			chans[i] = keys.NewTasks(c.cfg.Namespace, q).Events()
		}
		return dc.Receive(ctx, dc.B().Subscribe().Channel(chans...).Build(), handle)
	})
}

// queueOfChannel extracts the queue name from "<ns>:{<queue>}:events".
func queueOfChannel(ch string) string {
	i, j := strings.IndexByte(ch, '{'), strings.IndexByte(ch, '}')
	if i < 0 || j < i {
		return ""
	}
	return ch[i+1 : j]
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
	if len(f) == 7 {
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

// publish sends event lines on channel, fire-and-forget, without making the
// caller wait for Redis.
func (c *Client) publish(channel string, lines []string) {
	if len(lines) == 0 {
		return
	}
	msg := strings.Join(lines, "\n")
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := c.redis.Do(ctx, c.redis.B().Publish().Channel(channel).Message(msg).Build()).Error(); err != nil {
			c.redisError("publish", err)
			c.log.Debug("publishing events failed", "channel", channel, "error", err)
		}
	}()
}
