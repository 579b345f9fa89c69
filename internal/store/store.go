// Package store is the task engine's storage: the one package that knows
// its Redis keys, record fields, commands and scripts (schema.go lists
// every key and field). The engine (the module root) calls its typed
// methods and builds no Redis command itself.
//
// A task submitted due now is one entry of its priority band's stream and
// nothing else until a worker starts it; its id names that entry. Starting
// it makes its hash (the run's state, the fence of its execution);
// finishing it moves the entry's fields into the hash, deletes the entry and
// lists the task in the done stream, trimmed by age and by count. Counts of
// what a queue holds are read from the streams, not kept.
//
// Every key a script touches is passed in KEYS, all under one queue's hash
// tag: a script never derives a key from data it reads, so claiming is two
// calls — read.lua (streams only) returns entries, and start.lua receives
// their task hashes in KEYS.
package store

import (
	_ "embed"
	"fmt"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/dtq-dev/dtq/internal/delivery"
	"github.com/dtq-dev/dtq/internal/script"
	"github.com/dtq-dev/dtq/internal/taskid"
	"github.com/redis/rueidis"
)

// Store is the engine's storage in one namespace. It is safe for concurrent
// use and does no I/O of its own.
type Store struct {
	r  rueidis.Client
	ns string
}

// New returns the store of namespace ns (a valid namespace) on r.
func New(r rueidis.Client, ns string) *Store { return &Store{r: r, ns: ns} }

// Queue is one queue of a Store.
type Queue struct {
	s    *Store
	name string
	k    Keys
	// wfSweep is where SweepWorkflows goes on from: a creation time
	// (Unix ms) in the workflow index.
	wfSweep atomic.Int64
}

// Queue returns queue name (a valid queue name) of s. It does no I/O.
func (s *Store) Queue(name string) *Queue {
	return &Queue{s: s, name: name, k: NewKeys(s.ns, name)}
}

// Name returns the queue's name.
func (q *Queue) Name() string { return q.name }

// Keys returns the queue's keys (for tests and tools that look inside).
func (q *Queue) Keys() Keys { return q.k }

var (
	//go:embed lib.lua
	libCore string
	//go:embed lib_group.lua
	libGroup string
	//go:embed lib_run.lua
	libRun string
	//go:embed lib_done.lua
	libDone string
	//go:embed lib_scope.lua
	libScope string
	//go:embed lib_order.lua
	libOrder string
	//go:embed lib_workflow.lua
	libWorkflow string
	// libSource is the store's library, by feature, in the order its
	// definitions depend on one another: libFor takes from it what a
	// script needs. It opens with the consumer-group recovery the queue
	// primitive's scripts share (delivery.GroupLib).
	libSource = delivery.GroupLib() + libCore + libGroup + libOrder + libRun + libDone + libScope + libWorkflow
	//go:embed enqueue.lua
	enqueueSource string
	//go:embed read.lua
	readSource string
	//go:embed take.lua
	takeSource string
	//go:embed start.lua
	startSource string
	//go:embed finish.lua
	finishSource string
	//go:embed renew.lua
	renewSource string
	//go:embed promote.lua
	promoteSource string
	//go:embed cancel.lua
	cancelSource string
	//go:embed dlq.lua
	dlqSource string
	//go:embed trim.lua
	trimSource string
	//go:embed lock.lua
	lockSource string
	//go:embed sweep.lua
	sweepSource string
	//go:embed schedule.lua
	scheduleSource string
	//go:embed fire.lua
	fireSource string
	//go:embed unique.lua
	uniqueSource string
	//go:embed unique_sweep.lua
	uniqueSweepSource string
	//go:embed gpromote.lua
	gpromoteSource string
	//go:embed gsweep.lua
	gsweepSource string

	enqueueScript = script.New("enqueue", libFor(enqueueSource), enqueueSource)
	readScript    = script.New("read", libFor(readSource), readSource)
	startScript   = script.New("start", libFor(startSource), startSource)
	takeScript    = script.New("take", libFor(takeSource), takeSource)
	finishScript  = script.New("finish", libFor(finishSource), finishSource)
	renewScript   = script.New("renew", libFor(renewSource), renewSource)
	promoteScript = script.New("promote", libFor(promoteSource), promoteSource)
	cancelScript  = script.New("cancel", libFor(cancelSource), cancelSource)
	dlqScript     = script.New("dlq", libFor(dlqSource), dlqSource)
	trimScript    = script.New("trim", trimSource)
	lockScript    = script.New("lock", lockSource)
	sweepScript   = script.New("sweep", libFor(sweepSource), sweepSource)
	// schedules (periodic tasks)
	scheduleScript = script.New("schedule", scheduleSource)
	fireScript     = script.New("fire", libFor(fireSource), fireSource)
	// unique tasks
	uniqueScript      = script.New("unique", libFor(uniqueSource), uniqueSource)
	uniqueSweepScript = script.New("unique_sweep", uniqueSweepSource)
	// fair scheduling across groups
	gpromoteScript = script.New("gpromote", libFor(gpromoteSource), gpromoteSource)
	gsweepScript   = script.New("gsweep", libFor(gsweepSource), gsweepSource)
	// ordered keys
)

// scripts lists every script, for the tests that hold them to the schema.
var scripts = []*script.Script{enqueueScript, readScript, takeScript, startScript, finishScript, renewScript,
	promoteScript, cancelScript, dlqScript, trimScript, lockScript, sweepScript, scheduleScript, fireScript, uniqueScript, uniqueSweepScript,
	dropScript, dropSweepScript, leaseScript, gpromoteScript, gsweepScript, scopeScript, workflowScript, workflowCancelScript,
	progressScript, stepScript, suspendScript, signalScript, wakeScript,
	debounceScript, debounceSweepScript, runNowScript, deleteScript, controlScript}

// ScriptSHA returns the SHA1 by which EVALSHA calls the script of this
// name ("start" for start.lua), "" for none: for tests that fail a
// script's call on its way (a proxy losing its answer).
func ScriptSHA(name string) string {
	for _, s := range scripts {
		if s.Name() == name {
			return s.SHA()
		}
	}
	return ""
}

// ScriptName returns the name of the script EVALSHA calls by sha ("" for
// none): for benchmarks that account Redis time per script.
func ScriptName(sha string) string {
	for _, s := range scripts {
		if s.SHA() == sha {
			return s.Name()
		}
	}
	return ""
}

// bands appends the queue's ten band streams, priority 0 to 9.
func (k Keys) bands(ks []string) []string {
	for p := range Bands {
		ks = append(ks, k.Band(p))
	}
	return ks
}

// invalidULID stands for the ULID of a string that is no task id: no task
// has it.
const invalidULID = "invalid"

// ulidOf returns the ULID part of task id, or invalidULID.
func ulidOf(id string) string {
	if _, ulid, err := taskid.Parse(id); err == nil {
		return ulid
	}
	return invalidULID
}

// ValidEntryID reports whether s is a stream entry id as Redis writes them,
// "<ms>-<seq>" in decimal: the scripts compare the ids they are handed
// without parsing them (lib.lua's id_le), so one from outside (a lease
// token) is checked first.
func ValidEntryID(s string) bool {
	ms, seq, ok := strings.Cut(s, "-")
	return ok && digits(ms) && digits(seq) && len(ms) <= 20 && len(seq) <= 20
}

// digits reports whether s is a decimal number without leading zeros.
func digits(s string) bool {
	if s == "" || (len(s) > 1 && s[0] == '0') {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

func ms(d time.Duration) string { return strconv.FormatInt(d.Milliseconds(), 10) }

func itoa(n int) string { return strconv.Itoa(n) }

func unexpected(what string, v any) error {
	return fmt.Errorf("store: %s: unexpected reply %v", what, v)
}

// Durability makes a write wait for replicas (see package script).
type Durability = script.Durability

// NotReplicatedError reports a write fewer replicas acknowledged than
// wanted (see package script).
type NotReplicatedError = script.NotReplicatedError
