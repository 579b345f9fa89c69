package keys

import "strconv"

// Bands is the number of priority bands of a task queue: priorities 0-9,
// 9 first.
const Bands = 10

// Tasks builds the keys of one task-engine queue. All share the queue's hash
// tag, so every engine script runs in one Redis Cluster slot. The zero value
// is not usable; build one with NewTasks.
type Tasks struct {
	prefix string // "<ns>:{<queue>}:"
}

// NewTasks returns the key builder of task queue name in namespace ns; both
// must already be valid.
func NewTasks(ns, name string) Tasks { return Tasks{prefix: ns + ":{" + name + "}:"} }

// Band is the stream of ready tasks of priority p (0-9); entries hold the
// task id only.
func (t Tasks) Band(p int) string { return t.prefix + "band:" + strconv.Itoa(p) }

// Task is the hash of one task, by the random part of its id.
func (t Tasks) Task(ulid string) string { return t.prefix + "task:" + ulid }

// Schedule is the sorted set of SCHEDULED task ids by due time (Unix ms).
func (t Tasks) Schedule() string { return t.prefix + "schedule" }

// DLQ is the dead-letter stream of the queue.
func (t Tasks) DLQ() string { return t.prefix + "dlq" }

// Idempotency is the record of one idempotency key, by its SHA-256 (hex):
// user strings never shape a key.
func (t Tasks) Idempotency(sha256hex string) string { return t.prefix + "idem:" + sha256hex }

// Info is the hash of the queue's counters and flags (paused, depth, ...).
func (t Tasks) Info() string { return t.prefix + "info" }

// Index is the sorted set of all the queue's task ids by creation time, for
// listing; cleaned of expired tasks by the scheduler.
func (t Tasks) Index() string { return t.prefix + "index" }

// Wakeup is a one-entry stream appended to when the scheduler or paused
// workers should look again (a new earlier due time, a resume).
func (t Tasks) Wakeup() string { return t.prefix + "wakeup" }

// SchedulerLock is the leader lock of the queue's scheduler.
func (t Tasks) SchedulerLock() string { return t.prefix + "scheduler" }

// Events is the pub/sub channel of the queue's lifecycle events.
func (t Tasks) Events() string { return t.prefix + "events" }

// Cancels is the pub/sub channel telling workers to cancel a running task.
func (t Tasks) Cancels() string { return t.prefix + "cancels" }

// Global keys of a namespace, outside any queue's slot. Scripts never touch
// them together with queue keys.

// Queues is the set of task queue names of namespace ns.
func Queues(ns string) string { return ns + ":queues" }

// Workers is the sorted set of worker ids of namespace ns by heartbeat
// expiry (Unix ms).
func Workers(ns string) string { return ns + ":workers" }

// Worker is the hash describing one worker; it expires when the worker
// stops heartbeating.
func Worker(ns, id string) string { return ns + ":worker:" + id }

// Audit is the capped stream of admin actions of namespace ns.
func Audit(ns string) string { return ns + ":audit" }

// Once is the record of a handler side effect done under
// IdempotentOperation, by the SHA-256 (hex) of its key.
func (t Tasks) Once(sha256hex string) string { return t.prefix + "once:" + sha256hex }
