// Package keys builds every Redis key dtq uses and validates the names that
// go into them.
//
// All keys of one queue share the hash tag "{<queue>}", so a queue lives in a
// single Redis Cluster slot and every multi-key script is legal there. User
// strings never shape a key: queue, topic and namespace names must match a
// strict pattern before they are used, and free-form strings (message keys,
// payloads) are only ever stored as values or hash fields.
package keys

import "fmt"

// ValidName reports whether s may be used as a queue, topic or group name:
// 1 to 64 characters from A-Z, a-z, 0-9, '_', '.' and '-'. (A byte loop:
// it runs on hot paths, where a regexp showed in profiles.)
func ValidName(s string) bool { return validChars(s, 64) }

func validChars(s string, maxLen int) bool {
	if len(s) == 0 || len(s) > maxLen {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '.' || c == '-') {
			return false
		}
	}
	return true
}

// CheckName returns an error naming what (for example "topic") when s is not a
// valid name.
func CheckName(what, s string) error {
	if !ValidName(s) {
		return fmt.Errorf("%s %q is invalid: want 1-64 characters from A-Z a-z 0-9 _ . -", what, s)
	}
	return nil
}

// CheckNamespace returns an error when s is not a valid key namespace: 1 to
// 32 characters from A-Z, a-z, 0-9, '_', '.' and '-'.
func CheckNamespace(s string) error {
	if !validChars(s, 32) {
		return fmt.Errorf("namespace %q is invalid: want 1-32 characters from A-Z a-z 0-9 _ . -", s)
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
