// Package keys builds every Redis key dtq uses and validates the names that
// go into them.
//
// All keys of one queue share the hash tag "{<queue>}", so a queue lives in a
// single Redis Cluster slot and every multi-key script is legal there. User
// strings never shape a key: queue, topic, group, schedule and namespace
// names must follow one strict rule (ValidName) before they are used, and
// free-form strings (message keys, payloads, task types) are only ever
// stored as values or hash fields.
package keys

import "fmt"

// The one rule for the names dtq takes from its users — queue, topic,
// group and schedule names, and (up to 32 characters) namespaces: 1 to 64
// characters from A-Z, a-z, 0-9, '_', '.' and '-', not only dots. Names are
// parts of keys and of URL paths (/api/v1/queues/{name}), where "." and
// ".." are not names but steps up the path. docs/CONTRACT.md §2.1.1 states
// it; every check is one of the functions below.
const nameRule = "1-%d characters from A-Z a-z 0-9 _ . -, not only dots"

// ValidName reports whether s may be used as a queue, topic, group or
// schedule name (see nameRule). (A byte loop: it runs on hot paths, where
// a regexp showed in profiles.)
func ValidName(s string) bool { return validChars(s, 64) }

func validChars(s string, maxLen int) bool {
	if len(s) == 0 || len(s) > maxLen {
		return false
	}
	dots := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '.' {
			dots++
			continue
		}
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return dots < len(s)
}

// NameRule is the rule of names (not namespaces), for messages.
var NameRule = fmt.Sprintf(nameRule, 64)

// CheckName returns an error naming what (for example "topic") when s is not a
// valid name.
func CheckName(what, s string) error {
	if !ValidName(s) {
		return fmt.Errorf("%s %q is invalid: want "+nameRule, what, s, 64)
	}
	return nil
}

// CheckNamespace returns an error when s is not a valid key namespace: the
// rule of names, at most 32 characters long.
func CheckNamespace(s string) error {
	if !validChars(s, 32) {
		return fmt.Errorf("namespace %q is invalid: want "+nameRule, s, 32)
	}
	return nil
}

// Queue builds the keys of one queue of the queue primitive. The zero value
// is not usable; build one with NewQueue.
type Queue struct {
	prefix string // "<ns>:{<queue>}:"
}

// NewQueue returns the key builder for queue name in namespace ns. Both must
// already be valid (see CheckNamespace and CheckName).
func NewQueue(ns, name string) Queue {
	return Queue{prefix: ns + ":{" + name + "}:"}
}

// Prefix is the common prefix of every key of the queue, hash tag included.
func (q Queue) Prefix() string { return q.prefix }

// Stream is the stream holding a topic's queued and in-flight messages.
func (q Queue) Stream(topic string) string { return q.prefix + "t:" + topic }

// Delayed is the sorted set of a topic's delayed messages, scored by due
// time in Unix milliseconds.
func (q Queue) Delayed(topic string) string { return q.prefix + "d:" + topic }

// Waiters is a flag key that exists while publishers wait for room in topic.
func (q Queue) Waiters(topic string) string { return q.prefix + "w:" + topic }

// Room is the list that wakes publishers waiting for room in topic: one
// element is pushed per freed slot while Waiters exists.
func (q Queue) Room(topic string) string { return q.prefix + "r:" + topic }

// Dedup is the hash of live and tombstoned message keys of the whole queue.
func (q Queue) Dedup() string { return q.prefix + "keys" }

// Tombstones is the sorted set of tombstoned message keys by expiry.
func (q Queue) Tombstones() string { return q.prefix + "tombs" }

// Dead is the queue's dead-letter stream.
func (q Queue) Dead() string { return q.prefix + "dead" }

// Wake is a one-entry stream appended to whenever subscribers should look
// again at something other than new stream entries: handed-back messages or
// a new earliest delayed message.
func (q Queue) Wake() string { return q.prefix + "wake" }

// Stats is the hash of the queue's counters.
func (q Queue) Stats() string { return q.prefix + "stats" }

// Topics is the set of the queue's topic names: each topic is added before
// its first message is put (see queue.Queue.Topics).
func (q Queue) Topics() string { return q.prefix + "topics" }

// Queues is the namespace-wide set of the names of the queues of the queue
// primitive that had a message put (see queue.Queues). It is outside every
// queue's slot: no script touches it.
func Queues(ns string) string { return ns + ":mq:queues" }
