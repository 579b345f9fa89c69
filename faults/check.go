package faults

import (
	"context"
	"fmt"
	"sort"
	"time"

	"github.com/dtq-dev/dtq"
)

// State is what Redis holds of a queue: every task (as Client.List reads
// them) and the dead-letter stream.
type State struct {
	Tasks []*dtq.Task
	Dead  []dtq.DeadLetter
}

// ReadState reads every task and dead letter of queue.
func ReadState(ctx context.Context, c *dtq.Client, queue string) (*State, error) {
	st := &State{}
	cursor := ""
	for {
		page, err := c.List(ctx, dtq.ListOpts{Queue: queue, Limit: 500, Cursor: cursor})
		if err != nil {
			return nil, err
		}
		st.Tasks = append(st.Tasks, page.Tasks...)
		if page.Next == "" {
			break
		}
		cursor = page.Next
	}
	cursor = ""
	for {
		letters, next, err := dtq.NewAdmin(c).ListDead(ctx, queue, 500, cursor)
		if err != nil {
			return nil, err
		}
		st.Dead = append(st.Dead, letters...)
		if next == "" {
			break
		}
		cursor = next
	}
	return st, nil
}

// Unfinished returns the ids of the tasks of st that are not in a terminal
// status.
func (st *State) Unfinished() []string {
	var out []string
	for _, t := range st.Tasks {
		if !t.Status.Finished() {
			out = append(out, t.ID)
		}
	}
	return out
}

// Input is what Check compares.
type Input struct {
	Ledger  []Submit
	Effects []Effect
	// State is read from Redis after the run has drained.
	State *State
	// Flushed holds, for a run in which Redis lost its data on purpose
	// (FLUSHALL), the status of every task at that moment, by id; a task
	// absent from State is judged by it. Nil otherwise.
	Flushed map[string]dtq.Status
	// Cancelled holds the tasks a run cancelled on purpose while they ran
	// (the cancel was accepted): they need not run to success but must end
	// CANCELLED. Nil otherwise.
	Cancelled map[string]bool
}

// Report is Check's verdict. Lists name tasks (and their keys) with the
// reason, sorted.
type Report struct {
	Submitted, OK, Failed, Unknown int
	// UnknownWritten counts submissions with an unknown answer whose task
	// exists anyway (in Redis, or in an effect log): they must run too.
	UnknownWritten int
	// Executed counts tasks with at least one effect; Succeeded those
	// SUCCEEDED in Redis (or at the data loss); DeadByDesign those that
	// failed by design (Payload.Die) and ended DEAD unexecuted.
	Executed, Succeeded, DeadByDesign int

	// Lost: tasks that must run (an OK submission's, or a written unknown
	// one's) that did not both leave an effect and end SUCCEEDED.
	Lost []string
	// LostKeys are the ledger keys of Lost, sorted.
	LostKeys []string
	// Duplicated counts executions beyond the first one of each task, and
	// every execution of a task superseded by another of the same key (a
	// try whose answer never came wrote it, it was lost, a later try wrote
	// the answered one); DuplicatedTasks names the tasks.
	Duplicated      int
	DuplicatedTasks []string
	// Unexpected: an effect or a task for a key never submitted, for a
	// refused submission, or a second task for one key.
	Unexpected []string
	// MultipleTerminal: a task with more than one terminal execution in
	// its history, a SUCCEEDED task without exactly one successful
	// execution, or a task dead-lettered twice.
	MultipleTerminal []string
	// BadDead: dead letters — every one is bad here but those of tasks
	// that fail by design (Payload.Die), since the effect handler fails
	// only so and workers tolerate 100 crashes — and DEAD tasks missing
	// from the dead-letter stream.
	BadDead []string
	// Uncancelled: tasks of Input.Cancelled that did not end CANCELLED.
	Uncancelled []string
	// CountersOff lists the queue's counters that differ from what its
	// tasks say (CheckCounters), when CountersChecked (a run that kept
	// its data).
	CountersOff     []string
	CountersChecked bool
	// Phantom lists the runs recorded lost whose worker was never
	// faulted and never started their handler (PhantomCrashes).
	Phantom []string
}

// Check compares a run's ledger, effect logs and final Redis state.
func Check(in Input) *Report {
	r := &Report{Submitted: len(in.Ledger)}
	byKey := map[string]*Submit{}
	for i := range in.Ledger {
		s := &in.Ledger[i]
		switch s.Answer {
		case OK:
			r.OK++
		case Failed:
			r.Failed++
		default:
			r.Unknown++
		}
		if byKey[s.Key] != nil {
			r.Unexpected = append(r.Unexpected, fmt.Sprintf("key %s: in the ledger twice", s.Key))
			continue
		}
		byKey[s.Key] = s
	}
	// must: the tasks that must run, with their key.
	must := map[string]string{}
	for _, s := range byKey {
		if s.Answer == OK && !in.Cancelled[s.TaskID] {
			must[s.TaskID] = s.Key
		}
	}
	keyOf := func(t *dtq.Task) string { return PayloadOf(t.Payload).Key }
	tasks := map[string]*dtq.Task{}
	written := map[string]string{} // unknown submissions' written tasks: key -> id
	superseded := map[string]*Submit{}
	// admit reports whether the task (id, key), found in Redis or in an
	// effect, belongs to the ledger, and adds it to must if it does.
	admit := func(id, key, where string) bool {
		s := byKey[key]
		switch {
		case s == nil:
			r.Unexpected = append(r.Unexpected, fmt.Sprintf("%s (key %q): %s, but the key was never submitted", id, key, where))
		case s.Answer == OK && s.TaskID != id && s.Ambiguous > 0:
			// A try whose answer never came wrote this task; it was lost
			// (a failover) and a later try wrote the answered one: the
			// key may run twice, as the tasks' duplicate executions.
			superseded[id] = s
			return true
		case s.Answer == OK && s.TaskID != id:
			r.Unexpected = append(r.Unexpected, fmt.Sprintf("%s (key %s): %s, but the key's submission answered task %s", id, key, where, s.TaskID))
		case s.Answer == Failed:
			r.Unexpected = append(r.Unexpected, fmt.Sprintf("%s (key %s): %s, but its submission was refused (%s)", id, key, where, s.Err))
		case s.Answer == Unknown && written[key] != "" && written[key] != id:
			r.Unexpected = append(r.Unexpected, fmt.Sprintf("%s (key %s): %s, but the key already has task %s", id, key, where, written[key]))
		default:
			if s.Answer == Unknown && written[key] == "" {
				written[key] = id
				r.UnknownWritten++
				must[id] = key
			}
			return true
		}
		return false
	}
	if in.State != nil {
		for _, t := range in.State.Tasks {
			if tasks[t.ID] != nil {
				continue // listed twice (a page boundary moved); same task
			}
			tasks[t.ID] = t
			admit(t.ID, keyOf(t), "in Redis")
		}
	}
	effects := map[string][]Effect{}
	for _, e := range in.Effects {
		if len(effects[e.TaskID]) == 0 {
			admit(e.TaskID, e.Key, "executed")
		} else if k := effects[e.TaskID][0].Key; k != e.Key {
			r.Unexpected = append(r.Unexpected, fmt.Sprintf("%s: executed with key %s and with key %s", e.TaskID, k, e.Key))
		}
		effects[e.TaskID] = append(effects[e.TaskID], e)
	}
	for id, es := range effects {
		if len(es) > 0 && must[id] != "" {
			r.Executed++
		}
		if len(es) > 1 && must[id] != "" {
			r.Duplicated += len(es) - 1
			r.DuplicatedTasks = append(r.DuplicatedTasks, fmt.Sprintf("%s (key %s): %d executions", id, must[id], len(es)))
		}
	}
	for id, s := range superseded {
		if n := len(effects[id]); n > 0 {
			r.Duplicated += n
			r.DuplicatedTasks = append(r.DuplicatedTasks, fmt.Sprintf("%s (key %s): %d executions of a task an unanswered try wrote, superseded by task %s",
				id, s.Key, n, s.TaskID))
		}
	}
	for id, key := range must {
		status, where := dtq.Status(""), "in Redis"
		if t := tasks[id]; t != nil {
			status = t.Status
		} else if s, ok := in.Flushed[id]; ok {
			status, where = s, "at the data loss"
		}
		n := len(effects[id])
		if status == dtq.StatusSucceeded {
			r.Succeeded++
		}
		if t := tasks[id]; t != nil && PayloadOf(t.Payload).Die {
			// It fails by design: DEAD, never executed.
			if status == dtq.StatusDead && n == 0 {
				r.DeadByDesign++
				continue
			}
			r.Lost = append(r.Lost, fmt.Sprintf("%s (key %s): fails by design, but %s %s with %d executions", id, key, status, where, n))
			r.LostKeys = append(r.LostKeys, key)
			continue
		}
		switch {
		case status == "":
			r.Lost = append(r.Lost, fmt.Sprintf("%s (key %s): gone from Redis, %d executions", id, key, n))
		case status != dtq.StatusSucceeded:
			r.Lost = append(r.Lost, fmt.Sprintf("%s (key %s): %s %s, %d executions", id, key, status, where, n))
		case n == 0:
			r.Lost = append(r.Lost, fmt.Sprintf("%s (key %s): SUCCEEDED %s but never executed", id, key, where))
		default:
			continue
		}
		r.LostKeys = append(r.LostKeys, key)
	}
	for id := range in.Cancelled {
		if t := tasks[id]; t == nil || t.Status != dtq.StatusCancelled {
			status := dtq.Status("gone")
			if t != nil {
				status = t.Status
			}
			r.Uncancelled = append(r.Uncancelled, fmt.Sprintf("%s: cancelled while it ran, but %s", id, status))
		}
	}
	for _, t := range tasks {
		terminal, oks := 0, 0
		for _, x := range t.History {
			switch x.Outcome {
			case dtq.OutcomeSucceeded:
				oks++
				terminal++
			case dtq.OutcomeDead, dtq.OutcomeCancelled:
				terminal++
			}
		}
		switch {
		case terminal > 1:
			r.MultipleTerminal = append(r.MultipleTerminal, fmt.Sprintf("%s: %d terminal executions in its history", t.ID, terminal))
		case t.Status == dtq.StatusSucceeded && oks != 1:
			r.MultipleTerminal = append(r.MultipleTerminal, fmt.Sprintf("%s: SUCCEEDED with %d successful executions", t.ID, oks))
		}
	}
	if in.State != nil {
		lettered := map[string]int{}
		for _, l := range in.State.Dead {
			id := "?"
			if l.Task != nil {
				id = l.Task.ID
			}
			lettered[id]++
			if lettered[id] == 2 {
				r.MultipleTerminal = append(r.MultipleTerminal, fmt.Sprintf("%s: dead-lettered twice", id))
			}
			status := dtq.Status("gone")
			if t := tasks[id]; t != nil {
				status = t.Status
				if PayloadOf(t.Payload).Die && status == dtq.StatusDead {
					continue // its letter by design
				}
			}
			r.BadDead = append(r.BadDead, fmt.Sprintf("%s: dead letter (task %s): %s", id, status, l.Reason))
			if status == dtq.StatusSucceeded || status == dtq.StatusCancelled {
				r.MultipleTerminal = append(r.MultipleTerminal, fmt.Sprintf("%s: %s and in the dead-letter stream", id, status))
			}
		}
		for id, t := range tasks {
			if t.Status == dtq.StatusDead && lettered[id] == 0 {
				r.BadDead = append(r.BadDead, fmt.Sprintf("%s: DEAD but not in the dead-letter stream", id))
			}
		}
	}
	for _, l := range [][]string{r.Lost, r.LostKeys, r.DuplicatedTasks, r.Unexpected, r.MultipleTerminal, r.BadDead, r.Uncancelled} {
		sort.Strings(l)
	}
	return r
}

// Recovery measures how long after faultEnd the system worked again: the
// later of the first successful submission sent after faultEnd (its
// answer's arrival) and the first handler start after faultEnd. It is -1
// when either never happened.
func Recovery(faultEnd time.Time, ledger []Submit, trace []TraceEvent) time.Duration {
	var sub, start time.Time
	for _, s := range ledger {
		if s.Answer == OK && !s.Sent.Before(faultEnd) && (sub.IsZero() || s.Done.Before(sub)) {
			sub = s.Done
		}
	}
	for _, e := range trace {
		if e.Kind == 'S' && !e.At.Before(faultEnd) && (start.IsZero() || e.At.Before(start)) {
			start = e.At
		}
	}
	if sub.IsZero() || start.IsZero() {
		return -1
	}
	if start.After(sub) {
		sub = start
	}
	return sub.Sub(faultEnd)
}
