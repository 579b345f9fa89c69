package store

import (
	"sort"
	"strconv"
	"strings"
	"time"
)

// Record is what the store holds of one task, from its hash and, for a
// task born as a band entry, that entry.
type Record struct {
	ID, Queue   string
	Type        string
	Payload     []byte
	Priority    int
	Status      string
	Attempt     int
	MaxAttempts int
	Crashes     int
	Run         int
	Timeout     time.Duration
	// Times in Unix ms; 0 when unset.
	Created, Due, Started, Finished int64
	Result                          []byte // nil: none
	Error                           string
	Worker                          string
	Cancel                          bool // cancellation requested while RUNNING
	Idem                            string
	History                         []Execution // oldest first
	// Schedule and Tick (Unix ms) name the schedule tick that fired the
	// task; "" and 0 for a submitted one.
	Schedule string
	Tick     int64
	// Group is the group (tenant) the task was submitted with, "" for
	// none; GroupWaiting says it waits for its group's turn (GroupWait).
	Group        string
	GroupWaiting bool
	// LimitKey is the limit key the task was submitted with; Throttled the
	// scope whose limit holds it back (QUEUED in ScopeWait, or SCHEDULED
	// for its reserved start), "" when none does.
	LimitKey  string
	Throttled string
	// OrderKey is the order key the task was submitted with, "" for none;
	// OrderWaiting says it waits for its key (OrderWait).
	OrderKey     string
	OrderWaiting bool
	// Wait is what a suspended task waits for, SCHEDULED until Due: "sleep
	// <step>" or "signal <name>" (suspend.lua); "" otherwise.
	Wait string
	// Workflow is the ULID of the workflow the task is step Step of (""
	// for none); Prev the previous step's result it started with.
	Workflow string
	Step     int
	Prev     []byte
	// Progress is what its running execution last reported (nil: none).
	Progress *Progress
	// Steps are its durable steps' records by name (read by GetWithSteps
	// only; nil for none).
	Steps map[string]StepRecord
	// Trace is the W3C traceparent of its submission ("" for none).
	Trace string
	// Parent is "<task id> <step>" of the task awaiting it (dtq.Child; ""
	// for none).
	Parent string
}

// Execution is one run of a task in its history.
type Execution struct {
	Run               int
	Started, Finished int64 // Unix ms
	Worker            string
	Outcome           Outcome
	Error             string
}

func atoi(s string) int { n, _ := strconv.Atoi(s); return n }

// atoi64 is s as a number, 0 when it is none (without ParseInt's error,
// an allocation, for the fields a born entry lacks).
func atoi64(s string) int64 {
	if s == "" {
		return 0
	}
	n, _ := strconv.ParseInt(s, 10, 64)
	return n
}

// recordOf builds the record of task id of queue from its hash h (empty
// when it has none) and, for a task born as an entry, that entry's fields
// e (nil when gone) at band with entry id eid. It returns nil when neither
// holds the task.
func recordOf(id, queue string, h map[string]string, e map[string]string, band int, eid string) *Record {
	if len(h) == 0 && e == nil {
		return nil
	}
	r := &Record{ID: id, Queue: queue, Status: StatusQueued}
	if _, ok := h[FieldType]; !ok && e != nil {
		// Born as the entry, which still holds its fields (or a light
		// ordered task's entry: its creation and order key in it).
		r.Type, r.Payload = e[EntryType], []byte(e[EntryPayload])
		r.Priority, r.MaxAttempts = band, atoi(e[EntryMaxAttempts])
		r.Timeout = time.Duration(atoi64(e[EntryTimeout])) * time.Millisecond
		r.Created = atoi64(eid[:strings.IndexByte(eid, '-')])
		if c, ok := e[EntryCreated]; ok {
			r.Created = atoi64(c)
		}
		r.OrderKey = e[EntryOrderKey]
		r.Idem = e[EntryIdem]
		r.workflowOf(e[EntryWorkflow], e[EntryStep], e, EntryPrev)
		r.Trace, r.Parent = e[EntryTrace], e[EntryParent]
	} else {
		r.Type, r.Payload = h[FieldType], []byte(h[FieldPayload])
		r.Priority, r.MaxAttempts = atoi(h[FieldPrio]), atoi(h[FieldMaxAtt])
		r.Timeout = time.Duration(atoi64(h[FieldTimeout])) * time.Millisecond
		r.Created = atoi64(h[FieldCreated])
		r.Idem = h[FieldIdem]
		r.workflowOf(h[FieldWorkflow], h[FieldStep], h, FieldPrev)
		r.Trace, r.Parent = h[FieldTrace], h[FieldParent]
	}
	if len(h) == 0 {
		return r
	}
	if s := h[FieldStatus]; s != "" {
		r.Status = s
	}
	r.Attempt, r.Crashes, r.Run = atoi(h[FieldAttempt]), atoi(h[FieldCrashes]), atoi(h[FieldRun])
	r.Started, r.Finished = atoi64(h[FieldStarted]), atoi64(h[FieldFinished])
	if r.Status == StatusScheduled {
		r.Due, r.Wait = atoi64(h[FieldDue]), h[FieldWait]
	}
	if v, ok := h[FieldResult]; ok {
		r.Result = []byte(v)
	}
	r.Error, r.Worker = h[FieldError], h[FieldWorker]
	r.Schedule, r.Tick = h[FieldSchedule], atoi64(h[FieldTick])
	r.Group, r.GroupWaiting = h[FieldGroup], h[FieldGroupWait] != "" && r.Status == StatusQueued
	r.LimitKey = h[FieldLimitKey]
	if k, ok := h[FieldOrderKey]; ok {
		r.OrderKey = k
	}
	r.OrderWaiting = h[FieldOrderWait] != "" && r.Status == StatusQueued
	if th := h[FieldThrottled]; th != "" && (r.Status == StatusQueued && h[FieldParked] != "" || r.Status == StatusScheduled) {
		r.Throttled = th
	}
	r.Cancel = h[FieldCancel] == "1" && r.Status == StatusRunning
	for k, v := range h {
		if len(k) < 2 || k[0] != FieldHistory[0] || k[1] < '0' || k[1] > '9' {
			continue
		}
		parts := strings.SplitN(v, "|", 5)
		if len(parts) < 4 {
			continue
		}
		x := Execution{Run: atoi(k[1:]), Started: atoi64(parts[0]), Finished: atoi64(parts[1]), Worker: parts[2], Outcome: Outcome(parts[3])}
		if len(parts) == 5 {
			x.Error = parts[4]
		}
		r.History = append(r.History, x)
	}
	sort.Slice(r.History, func(i, j int) bool { return r.History[i].Run < r.History[j].Run })
	return r
}

// workflowOf sets r's workflow step: wf (a ULID, "" for none), step, and
// the previous result in fields[prev] when there is one.
func (r *Record) workflowOf(wf, step string, fields map[string]string, prev string) {
	if wf == "" {
		return
	}
	r.Workflow, r.Step = wf, atoi(step)
	if v, ok := fields[prev]; ok {
		r.Prev = []byte(v)
	}
}

// runState is a Run value: a running task's execution.
type runState struct {
	run, attempt, crashes int
	started               int64
	cancel                bool
	worker                string
}

// parseRun parses a Run value; false for none or RunWithdrawn.
func parseRun(v string) (runState, bool) {
	// A lost implicit first run noted by its takeover (read.lua): the task
	// is seen as that run until the takeover's start writes its own.
	v = strings.TrimPrefix(v, "L|")
	p := strings.SplitN(v, "|", 6)
	if len(p) != 6 {
		return runState{}, false
	}
	return runState{run: atoi(p[0]), attempt: atoi(p[1]), crashes: atoi(p[2]), started: atoi64(p[3]),
		cancel: p[4] == "1", worker: p[5]}, true
}

// withRun marks r RUNNING under its run's state.
func (r *Record) withRun(rs runState) {
	r.Status, r.Run, r.Attempt, r.Crashes = StatusRunning, rs.run, rs.attempt, rs.crashes
	r.Started, r.Worker, r.Cancel = rs.started, rs.worker, rs.cancel
	r.Finished, r.Due = 0, 0
}

// parseRecord reads a packed record: a header finish.lua writes, then the
// body packBody makes:
//
//	R3|status|finished|run|len(error)|error|prio|max_att|timeout|created|started|attempt|crashes|
//	  len(worker)|len(type)|len(result)|len(idem)|worker type result idem payload
//
// An R4 record (a workflow's task) has its workflow, step and previous
// result too (see packBody). R5 and R6 are R3 and R4 of a traced task:
// the body starts with "T", its traceparent and "|". An R7 record is a
// light ordered task's (Keys.OrderIndex): its body starts with "K", its
// order key and "|", then an R3 or R5 body. It returns nil for a value it
// cannot read.
func parseRecord(id, queue, v string) *Record {
	h := strings.SplitN(v, "|", 6)
	if len(h) != 6 || len(h[0]) != 2 || h[0][0] != 'R' || h[0][1] < '3' || h[0][1] > '7' {
		return nil
	}
	nums := 11 // R3's numbers before the blobs
	if h[0] == "R4" || h[0] == "R6" {
		nums = 14
	}
	lerr, rest := atoi(h[4]), h[5]
	if lerr < 0 || lerr >= len(rest) || rest[lerr] != '|' {
		return nil
	}
	errText, rest := rest[:lerr], rest[lerr+1:]
	trace, okey := "", ""
	traced := h[0] == "R5" || h[0] == "R6"
	if h[0] == "R7" {
		end := strings.IndexByte(rest, '|')
		if end < 1 || rest[0] != 'K' {
			return nil
		}
		okey, rest = rest[1:end], rest[end+1:]
		traced = strings.HasPrefix(rest, "T")
	}
	if traced {
		end := strings.IndexByte(rest, '|')
		if end < 1 || rest[0] != 'T' {
			return nil
		}
		trace, rest = rest[1:end], rest[end+1:]
	}
	p := strings.SplitN(rest, "|", nums+1)
	if len(p) != nums+1 {
		return nil
	}
	rest = p[nums]
	var blobs [6]string
	lens := []int{atoi(p[7]), atoi(p[8]), atoi(p[9]), atoi(p[10])}
	if nums == 14 {
		lens = append(lens, atoi(p[11]), atoi(p[13]))
	}
	for i, n := range lens {
		if n < 0 || n > len(rest) {
			return nil
		}
		blobs[i], rest = rest[:n], rest[n:]
	}
	r := &Record{ID: id, Queue: queue, Status: h[1], Run: atoi(h[3]), Error: errText, Priority: atoi(p[0]), MaxAttempts: atoi(p[1]),
		Timeout: time.Duration(atoi64(p[2])) * time.Millisecond, Created: atoi64(p[3]), Started: atoi64(p[4]),
		Attempt: atoi(p[5]), Crashes: atoi(p[6]), Worker: blobs[0], Type: blobs[1], Idem: blobs[3], Payload: []byte(rest), Trace: trace,
		OrderKey: okey}
	if blobs[2] != "" {
		r.Result = []byte(blobs[2])
	}
	if nums == 14 {
		r.Workflow, r.Step = blobs[4], atoi(p[12])
		if blobs[5] != "" {
			r.Prev = []byte(blobs[5])
		}
	}
	outcome := OutcomeOK
	if r.Status == StatusCancelled {
		outcome = OutcomeCancel
	}
	r.History = []Execution{{Run: r.Run, Started: r.Started, Finished: atoi64(h[2]), Worker: r.Worker, Outcome: outcome, Error: r.Error}}
	return r
}
