package store

import (
	"strconv"
	"strings"
)

// Layout is the version of the key layout and record format this package
// reads and writes, stored at LayoutKey. A process that finds another
// version refuses to start (see Store.CheckLayout).
//
// Version 1 (before this package): a hash per task from its submission, a
// sorted-set index of every task, counters kept per band. Version 2: a
// waiting task is its band entry alone, and its id names that entry.
// Version 3: workflows (a workflow's task entries carry its workflow,
// which a worker of layout 2 would not record the end of).
const Layout = "3"

// UpgradesFrom is the layout whose data Layout reads and writes as it is:
// a process of Layout upgrades the record, and processes of the older
// layout refuse to start from then on (stop them first).
const UpgradesFrom = "2"

// Bands is the number of priority bands of a queue: priorities 0-9, 9
// first.
const Bands = 10

// Group is the consumer group of the workers on every band.
const Group = "workers"

// Keys builds the keys of one queue. All share the queue's hash tag
// "{<queue>}", so every script of a queue runs in one Redis Cluster slot.
// The zero value is not usable; build one with NewKeys.
type Keys struct {
	prefix string // "<ns>:{<queue>}:"
}

// NewKeys returns the keys of queue name in namespace ns; both must be
// valid names (internal/keys).
func NewKeys(ns, name string) Keys { return Keys{prefix: ns + ":{" + name + "}:"} }

// Band is the stream of ready and running tasks of priority p (0-9), group
// Group. A task submitted due now is born as an entry with the fields
// EntryType, EntryPayload, EntryMaxAttempts, EntryTimeout (and
// EntryIdem): nothing else of it exists while it waits, and its id names
// the entry (internal/taskid). An entry written again for a task that has a
// record (a retry, a requeue, a promoted delayed task) carries EntryID and
// EntryCreated too.
func (k Keys) Band(p int) string { return k.prefix + "band:" + strconv.Itoa(p) }

// Task is the hash of one task (fields Field*), by the ULID part of its id.
// It exists once the task was scheduled, retried, cancelled, dead-lettered,
// taken over from a lost worker or re-entered a band; a finished task's
// expires after the retention.
func (k Keys) Task(ulid string) string { return k.prefix + "task:" + ulid }

// Run is the hash of the queue's running tasks: field ULID, value the run's
// state "<run>|<attempt>|<crashes>|<started ms>|<cancel 0/1>|<worker>" (the
// fence of its execution), or RunWithdrawn for a task cancelled after a
// worker claimed its entry and before it started it.
func (k Keys) Run() string { return k.prefix + "run" }

// Schedule is the sorted set of SCHEDULED task ids by due time (Unix ms,
// Redis clock).
func (k Keys) Schedule() string { return k.prefix + "schedule" }

// Suspended is the sorted set of the suspended tasks (SCHEDULED after
// their execution suspended: suspend.lua; FieldWait) by due time: a subset
// of Schedule, for counting and listing them.
func (k Keys) Suspended() string { return k.prefix + "suspended" }

// DLQ is the dead-letter stream: entries DeadID (task id) and DeadReason.
func (k Keys) DLQ() string { return k.prefix + "dlq" }

// Done is the stream of finished tasks (SUCCEEDED, CANCELLED, discarded
// DEAD) in the order they finished, one entry per batch (DoneIDs: their
// ids, space-separated): the index List pages them by, trimmed by age (the
// retention) and by count (the cap, counted in InfoDone), records with
// them.
func (k Keys) Done() string { return k.prefix + "done" }

// Finished is the hash of packed records (see parseRecord) by ULID: the
// record of a task born as a band entry that finished, SUCCEEDED or
// CANCELLED, in its first execution — one field, written once, deleted
// when Done's trim takes its task (by age, the retention, or by count).
func (k Keys) Finished() string { return k.prefix + "fin" }

// Idempotency is the record of one idempotency key, by its SHA-256 (hex).
func (k Keys) Idempotency(sha256hex string) string { return k.prefix + "idem:" + sha256hex }

// Once is the record of one IdempotentOperation key, by its SHA-256 (hex).
func (k Keys) Once(sha256hex string) string { return k.prefix + "once:" + sha256hex }

// Workflow is the hash of one workflow (WF* fields and, per node i, the
// WFNode* prefixes followed by i), by the ULID part of its id. A finished
// workflow's expires after the retention (see workflow.lua).
func (k Keys) Workflow(ulid string) string { return k.prefix + "wf:" + ulid }

// Workflows is the sorted set of the queue's workflows by creation time
// (Unix ms, Redis clock): member the ULID part of the id, added by
// workflow.lua in the step that writes the workflow. An entry whose
// workflow expired or was deleted is taken out by Trim's sweep (or by a
// ListWorkflows that meets it); see workflow_list.go.
func (k Keys) Workflows() string { return k.prefix + "wfs" }

// Steps is the hash of the durable steps task ulid recorded: field the
// step's name, value "<run>|<Redis ms>|<result>" (see step.lua). It
// expires StepKeep after its last write (a run that reads it moves that
// on), and the retention after its task ended.
func (k Keys) Steps(ulid string) string { return k.prefix + "steps:" + ulid }

// Progress is the hash of the progress running executions reported:
// field ULID, value "<run>|<ms>|<fraction>|<note>" (see progress.lua).
func (k Keys) Progress() string { return k.prefix + "progress" }

// Info is the hash of the queue's flag and totals (Info*).
func (k Keys) Info() string { return k.prefix + "info" }

// Wakeup is a one-entry stream appended to when the scheduler or paused
// workers should look again (a new earlier due time, a resume).
func (k Keys) Wakeup() string { return k.prefix + "wakeup" }

// Periodic is the hash of the queue's schedules (periodic tasks): field =
// schedule name, value = its definition (JSON, see ScheduleDef).
func (k Keys) Periodic() string { return k.prefix + "periodic" }

// PeriodicDue is the sorted set of the active schedules by next tick
// (Unix ms): what the scheduler's leader fires.
func (k Keys) PeriodicDue() string { return k.prefix + "periodic:due" }

// PeriodicFired is the hash of each schedule's last fired tick: field =
// name, value = "<tick ms>|<task id>" (no task id for the baseline a new or
// resumed schedule starts from). A tick at or before it never fires again.
func (k Keys) PeriodicFired() string { return k.prefix + "periodic:fired" }

// Unique is the hash of the queue's unique locks: field = lock (hex),
// value = the task id holding it (see unique.lua).
func (k Keys) Unique() string { return k.prefix + "uniq" }

// Debounce is the hash of the queue's debounced tasks still pending: field
// = the debounce identity (hex, of the task type and the key), value
// "<task id> <first submission ms> <due ms>" (see debounce.lua). A field
// whose task has come due, was cancelled or is gone means nothing: the
// next submission of its identity replaces it, and the scheduler's sweep
// (debounce_sweep.lua) deletes it.
func (k Keys) Debounce() string { return k.prefix + "debounce" }

// Limits is the hash of the queue's flow-control limits (Limit* fields,
// see lease.lua): a concurrency limit across every worker, a rate limit,
// a pause.
func (k Keys) Limits() string { return k.prefix + "limits" }

// Leases is the sorted set of the queue's concurrency leases: member a
// lease name ("<worker>|<n>"), score its expiry (Unix ms, Redis clock).
// A worker holds one per task of the queue it runs (and a few while it
// reads); one it stops renewing expires, so a lost worker's slots come back.
func (k Keys) Leases() string { return k.prefix + "leases" }

// GroupWait is the sorted set of the tasks submitted with a group (a
// tenant) that wait for their group's turn: member GroupMember (equal
// scores, so ZRANGEBYLEX walks a group's waiters best first), the task's
// hash status QUEUED. A group keeps at most GroupWindow entries in the
// bands at once (GroupCount); the start of one moves the group's next
// waiter in, so the bands interleave every group with work.
func (k Keys) GroupWait() string { return k.prefix + "gwait" }

// OrderHold is the hash of the order keys with a task in flight: field =
// order key, value "<holder ULID>|<head>|<tail>|<waiting>|<entry>": the
// ULID of the one task of that key that may be queued, scheduled or
// running (its holder), and its line — the key's waiters are the fields
// "<key>|<n>" of OrderLine, head <= n < tail (one that left early leaves a
// gap), waiting of them — and the id of the band entry the hand-over wrote
// for the holder ("" when none: its hash has no FieldEntry then). The holder's end (succeeded, dead, cancelled,
// deleted — not a retry) passes the key to the first waiter, whose entry
// is written into its band from its OrderLine value at once (or which
// enters the schedule, at its delay or for its group's turn).
func (k Keys) OrderHold() string { return k.prefix + "ohold" }

// OrderLine is the hash of the tasks waiting for their order keys: field
// "<key>|<n>" (OrderHold's line), value "<due ms>|<ULID>|<priority>|<kind>|
// <attempt>" then, each after a newline, the fields of its band entry
// (type, max attempts, timeout, created, idempotency hash, limit key,
// traceparent, parent; the payload last) — lib_order.lua. Kind 0: a task
// with a hash (status QUEUED, its field kept in FieldOrderWait — also after
// it left: a reader checks the ULID in the value); 1: the same, of a group;
// 2: a task without a hash (OrderIndex): the value is its record.
func (k Keys) OrderLine() string { return k.prefix + "oline" }

// OrderIndex is the hash that finds the ordered tasks without a hash —
// submitted with an order key, due at once, without a group or a limit
// key — while they wait or are in flight: field = ULID, value
// "<priority>|<n>|<order key>", n its OrderLine field's number while it
// waits there (empty when it held its key at its submission; a number left
// after the key passed to it: a reader checks OrderLine's value, then
// OrderHold's holder). Such a task's band entry carries EntryOrderKey; it
// gets a hash only on a rare path (a crash, a give-back, a retry, a limit
// holding it back: lib.lua's copy_spec), and ends as a packed record (R7)
// or its hash. Its field goes when its key passes on (or it leaves the
// line).
func (k Keys) OrderIndex() string { return k.prefix + "oindex" }

// GroupCount is the hash of the entries each group has in the bands not
// started yet (field = group, admitted entries carry EntryGroup).
func (k Keys) GroupCount() string { return k.prefix + "gcount" }

// ScopeLimits is the hash of the queue's scoped limits (see Scope*): field
// = scope, value "<max running>/<rate n>/<rate period ms>/<burst>" (0s for
// none). Their state (GCRA, pause) is in Limits.
func (k Keys) ScopeLimits() string { return k.prefix + "limscope" }

// ScopeUse is the hash of the leases held per scoped limit (a task type's,
// a limit key's; see Scope): field = scope, value = leases live.
func (k Keys) ScopeUse() string { return k.prefix + "limuse" }

// ScopeLeases is the sorted set of the leases of scoped limits: member
// "<scope>\n<ULID>" (the task holding it), score its expiry (Unix ms, Redis
// clock), renewed with the task.
func (k Keys) ScopeLeases() string { return k.prefix + "limlease" }

// ScopeWait is the sorted set of the QUEUED tasks a scoped concurrency
// limit holds back: equal scores, member "<scope>\n<9-priority>|<seq>|<ULID>"
// (seq 16 digits, counted in ScopeUse's field GroupSeq), so ZRANGEBYLEX
// walks a scope's waiters best first. The task's hash keeps its member in
// FieldParked.
func (k Keys) ScopeWait() string { return k.prefix + "limwait" }

// HistoryMinute is the hash of the queue's history in minute m (Unix
// minutes): field "<task type>\n<counter>", value a count (history.go).
// It expires a day after its minute.
func (k Keys) HistoryMinute(m int64) string { return k.prefix + "hist:m:" + strconv.FormatInt(m, 10) }

// HistoryHour is HistoryMinute for hour h (Unix hours); it expires 30 days
// after its hour.
func (k Keys) HistoryHour(h int64) string { return k.prefix + "hist:h:" + strconv.FormatInt(h, 10) }

// SchedulerLock is the leader lock of the queue's scheduler.
func (k Keys) SchedulerLock() string { return k.prefix + "scheduler" }

// Events is the pub/sub channel of the queue's lifecycle events.
func (k Keys) Events() string { return k.prefix + "events" }

// Cancels is the pub/sub channel telling workers to cancel a running task.
func (k Keys) Cancels() string { return k.prefix + "cancels" }

// Namespace-wide keys, outside every queue's slot (no script touches them
// together with a queue's keys).

// LayoutKey holds the namespace's Layout.
func LayoutKey(ns string) string { return ns + ":layout" }

// QueuesKey is the set of the namespace's queue names.
func QueuesKey(ns string) string { return ns + ":queues" }

// WorkersKey is the sorted set of live worker ids by heartbeat expiry.
func WorkersKey(ns string) string { return ns + ":workers" }

// WorkerKey is the heartbeat hash of one worker (Worker* fields).
func WorkerKey(ns, id string) string { return ns + ":worker:" + id }

// WorkerControlChannel is the channel on which Admin.QuietWorker and
// StopWorker tell workers what they ask ("<worker id> quiet|stop"); a
// worker also reads its hash's WorkerControl at each heartbeat.
func WorkerControlChannel(ns string) string { return ns + ":workers:control" }

// AuditKey is the capped stream of admin actions (Audit* fields).
func AuditKey(ns string) string { return ns + ":audit" }

// Fields of a task hash. Lua scripts spell the same names; TestLuaFields
// holds them to this list.
const (
	FieldType      = "type"
	FieldPayload   = "payload"
	FieldPrio      = "prio"
	FieldStatus    = "status"
	FieldAttempt   = "attempt"
	FieldMaxAtt    = "max_att"
	FieldTimeout   = "timeout" // ms
	FieldCreated   = "created" // Unix ms
	FieldRun       = "run"     // execution number: the fence
	FieldCrashes   = "crashes"
	FieldStarted   = "started" // Unix ms, of the latest execution
	FieldWorker    = "worker"  // of the latest execution
	FieldDue       = "due"     // Unix ms, while SCHEDULED
	FieldResult    = "result"
	FieldError     = "error"
	FieldCancel    = "cancel"   // "1": cancellation requested while RUNNING
	FieldIdem      = "idem"     // SHA-256 of the idempotency key
	FieldDeadID    = "dead_id"  // the dead-letter entry while in the DLQ
	FieldFinished  = "finished" // Unix ms, for tasks finished without an execution
	FieldRequeued  = "requeued" // Unix ms of the last requeue
	FieldDiscarded = "discarded"
	FieldSchedule  = "sched"     // the schedule that fired the task
	FieldTick      = "tick"      // Unix ms of the tick it fired for
	FieldUnique    = "uniq"      // the unique lock it was created under
	FieldGroup     = "group"     // the group (tenant) it was submitted with
	FieldGroupWait = "gwait"     // its GroupWait member while it waits there
	FieldLimitKey  = "lkey"      // the limit key it was submitted with
	FieldOrderKey  = "okey"      // the order key it was submitted with
	FieldOrderWait = "owait"     // its OrderLine field while it waits there (left after: see OrderLine)
	FieldParked    = "parked"    // its ScopeWait member while a scoped limit holds it back
	FieldThrottled = "throttled" // the scope whose limit last held it back
	FieldReserved  = "rslot"     // the scope whose rate it holds a reserved start of (SCHEDULED until then)
	FieldWorkflow  = "wf"        // the ULID of the workflow it is a step of
	FieldStep      = "wstep"     // its node in that workflow
	FieldPrev      = "prev"      // the previous step's result (JSON) it was started with
	FieldTrace     = "trace"     // the W3C traceparent of its submission
	FieldParent    = "parent"    // "<task id> <step>": the task awaiting it (dtq.Child), woken when it ends
	FieldWait      = "wait"      // what a suspended task waits for ("sleep <step>", "signal <name>"), while SCHEDULED
	FieldResume    = "resume"    // "1": its next start resumes a suspension, keeping its attempt
	// FieldEntry is the id of the band entry the task was last written
	// again as (lib.lua's readd; its band is FieldPrio): what it waits as
	// while QUEUED, unless it waits in GroupWait or ScopeWait. cancel.lua
	// deletes that entry.
	FieldEntry = "entry"
	// FieldHistory prefixes one field per execution, h<run> =
	// "start|end|worker|outcome|error", outcome one of the Outcome codes
	// ("ok", "retry", "dead", "cancel", "crashed").
	FieldHistory = "h"
)

// Fields of the limits hash.
const (
	LimitQueue = "queue" // the queue-wide concurrency limit
	LimitRate  = "rate"  // the queue-wide rate limit: "<n>/<period ms>/<burst>"
	LimitTAT   = "tat"   // the rate limit's theoretical arrival time (Unix ms)
	LimitPause = "pause" // no claim before this (Unix ms): dtq.RetryAfter
)

// Fields of a band entry.
const (
	EntryID          = "i" // the task id (an entry written again for a task with a record)
	EntryType        = "t"
	EntryPayload     = "p"
	EntryMaxAttempts = "m"
	EntryTimeout     = "o" // ms
	EntryCreated     = "c" // Unix ms (an entry written again)
	EntryIdem        = "k"
	EntrySchedule    = "s" // the schedule that fired the task (an entry written again)
	EntryTick        = "g" // Unix ms of its tick
	// EntryGroup is the group of an entry admitted under its group's window
	// (counted in GroupCount until it starts).
	EntryGroup = "f"
	// EntryLimitKey is the limit key the task was submitted with.
	EntryLimitKey = "l"
	// EntryWorkflow, EntryStep and EntryPrev: the workflow (its ULID) a
	// task is a step of, its node there, and the previous step's result
	// (JSON) it starts with (none for a first step).
	EntryWorkflow = "w"
	EntryStep     = "n"
	EntryPrev     = "v"
	// EntryTrace is the W3C traceparent of the task's submission.
	EntryTrace = "x"
	// EntryParent is "<task id> <step>": the task awaiting the task
	// (dtq.Child).
	EntryParent = "a"
	// EntryOrderKey is the order key of an ordered task without a hash
	// (OrderIndex); such an entry carries EntryID and EntryCreated too.
	EntryOrderKey = "q"
)

// Fields of a workflow hash (Keys.Workflow). Its plan and state are kept
// per node i (0 is the root) in fields named by a prefix and i.
const (
	WFStatus   = "status"   // RUNNING, SUCCEEDED, FAILED, CANCELLED
	WFCreated  = "created"  // Unix ms (Redis clock)
	WFFinished = "finished" // Unix ms
	WFCancel   = "cancel"   // "1": cancellation requested
	WFNodes    = "nodes"    // how many nodes the plan has
	WFTasks    = "tasks"    // how many of them are tasks
	WFTrace    = "trace"    // the W3C traceparent of the submission ("" for none)
	// WFNodeKind: "<kind>|<parent>|<role>": kind T (a task), C (a chain)
	// or G (a parallel step); parent the parent node ("-" for the root);
	// role the position in a parent chain (from 0), "c" a parallel step's
	// child, "S" its on_success callback, "E" its on_complete callback.
	WFNodeKind  = "k"
	WFNodeKids  = "l" // a chain's steps or a parallel step's children: node numbers, comma-separated
	WFNodeNext  = "n" // a chain's step: the step after it (none for the last)
	WFNodeOnOK  = "y" // a parallel step's on_success callback node
	WFNodeOnEnd = "z" // a parallel step's on_complete callback node
	// WFNodeSpec: a task's "<type>\n<priority>\n<max attempts>\n<timeout ms>".
	WFNodeSpec    = "t"
	WFNodePayload = "p"
	// WFNodeState: absent while pending, else "<state>|<task id>" (no task
	// id for a chain or a parallel step): A active, S succeeded, F failed, X
	// cancelled, K skipped (its descendants never started).
	WFNodeState  = "s"
	WFNodeResult = "r" // the node's result (JSON), when it has one
	WFNodeWhy    = "w" // why it failed, was skipped or cancelled
	WFNodeLeft   = "c" // a parallel step's children (then callbacks) not ended yet
	WFNodeFailed = "f" // a parallel step's children that did not succeed
	WFNodeFirst  = "x" // a parallel step's first child failure, described
)

// Workflow node states (WFNodeState's first letter).
const (
	WFActive    = 'A'
	WFSucceeded = 'S'
	WFFailed    = 'F'
	WFCancelled = 'X'
	WFSkipped   = 'K'
)

// Scopes of limits (fields of ScopeLimits): a task type's limit is
// ScopeType+type, a limit key's ScopeKey+key, and ScopeKey+EachKey applies
// to each limit key that has none of its own. A scope's rate state is
// field scope+"\ntat" of Limits, a pause scope+"\npause".
const (
	ScopeType = "t:"
	ScopeKey  = "k:"
	// EachKey is the limit key of the limit that applies to each key.
	EachKey = "*"
)

// GroupWindow is how many entries of one group the bands hold at once,
// not started yet (lib.lua's GROUP_WINDOW): the rest wait in GroupWait.
// Small, so that the bands interleave the groups; large enough that one
// group alone keeps a busy worker fed between its starts.
const GroupWindow = 10

// GroupMember is a task's member of GroupWait,
// "<group>|<9-priority>|<seq>|<ULID>" (a group is a name, which holds no
// "|"; seq is 16 digits, counted in GroupCount's field GroupSeq): a
// group's members sort by priority, then by submission. GroupMemberTask
// reads one.
func GroupMemberTask(m string) (prio int, ulid string, ok bool) {
	parts := strings.Split(m, "|")
	if len(parts) != 4 || len(parts[1]) != 1 || parts[1][0] < '0' || parts[1][0] > '9' || len(parts[3]) != 26 {
		return 0, "", false
	}
	return 9 - int(parts[1][0]-'0'), parts[3], true
}

// GroupSeq is the field of GroupCount that numbers the waiters (no group
// is named so).
const GroupSeq = "#"

// GroupWeightField prefixes the fields of GroupCount that hold a group's
// weight (1 to MaxGroupWeight; none: 1): its window is GroupWindow times
// it, and the bands serve it in proportion.
const GroupWeightField = "w:"

// MaxGroupWeight bounds a group's weight.
const MaxGroupWeight = 100

// Fields of a dead-letter and of a done entry.
const (
	DeadID     = "i"
	DeadReason = "r"
	DoneIDs    = "i" // space-separated task ids
)

// Fields of the info hash: the paused flag and totals since the queue was
// created. Counts of what a queue holds now are read from the streams and
// the schedule, not kept.
const (
	InfoPaused = "paused"
	// InfoPausedAt is the Redis time (Unix ms) a pause was written, read
	// just after the flag: a claim delivered after it was given back, not
	// started (records.go).
	InfoPausedAt  = "paused_at"
	InfoSucceeded = "succeeded"
	InfoRetried   = "retried"
	InfoDead      = "dead"
	InfoCancelled = "cancelled"
	InfoRequeued  = "requeued" // DEAD tasks made QUEUED again
	InfoDone      = "done"     // tasks the done stream lists
	// InfoBehind prefixes, per band (b0..b9), the acknowledged entries not
	// yet trimmed: they wait behind an older running one.
	InfoBehind = "b"
	// InfoRegrouped prefixes, per band (g0..g9), the last entry id of the
	// band when its consumer group was recreated (destroyed, then created
	// again at id 0 on entries already there): entries up to it may be
	// acknowledged leftovers of finished tasks, so start.lua checks their
	// records before starting them. A band's first group records "0-0":
	// its entries were never delivered (tasks submitted before any worker
	// ran are not suspect).
	InfoRegrouped = "g"
)

// RunPad is a field of the run hash that is no task: its long value
// (lib.lua's RUN_PAD) keeps the hash out of Redis's linear-scan listpack
// encoding, which costs ~1.2 µs per field looked up at a hundred running
// tasks. start.lua writes it with every batch of starts.
const RunPad = "~"

// RunWithdrawn is the Run value of a task cancelled between its claim and
// its start: the start skips it.
const RunWithdrawn = "C"

// Fields of a worker's heartbeat hash.
const (
	WorkerID          = "id"
	WorkerHost        = "host"
	WorkerPID         = "pid"
	WorkerQueues      = "queues"
	WorkerConcurrency = "concurrency"
	WorkerBusy        = "busy"
	WorkerStarted     = "started"
	WorkerHeartbeat   = "heartbeat"
	WorkerKind        = "kind"    // "go" (a dtq.Worker) or "http" (a lease holder)
	WorkerLibrary     = "library" // what the worker runs on, e.g. "dtq-go/1.2.0" ("" unknown)
	WorkerState       = "state"   // what the worker says it does: "running", "quiet" or "stopping"
	WorkerControl     = "control" // what an admin asked of it: "quiet" or "stop" (control.lua)
)

// Fields of an audit entry.
const (
	AuditAction = "action"
	AuditQueue  = "queue"
	AuditTask   = "task"
	AuditDetail = "detail"
)

// Statuses, as stored in FieldStatus.
const (
	StatusQueued    = "QUEUED"
	StatusScheduled = "SCHEDULED"
	StatusRunning   = "RUNNING"
	StatusSucceeded = "SUCCEEDED"
	StatusDead      = "DEAD"
	StatusCancelled = "CANCELLED"
)
