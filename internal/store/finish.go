package store

import (
	"context"
	"strconv"
	"strings"
	"time"

	"github.com/redis/rueidis"
)

// Outcome is how an execution ended, as finish.lua reads it and as a
// history field (FieldHistory) stores it. These codes are the stored
// ones; the public API shows them in its own words (dtq.Outcome).
type Outcome string

// Outcomes of an execution.
const (
	OutcomeOK     Outcome = "ok"
	OutcomeRetry  Outcome = "retry"
	OutcomeDead   Outcome = "dead"
	OutcomeCancel Outcome = "cancel"
	// OutcomeCrashed is never passed to finish.lua: start.lua records it
	// for the run of a lost worker when another takes the task over.
	OutcomeCrashed Outcome = "crashed"
	// OutcomeSuspend is never passed to finish.lua either: suspend.lua
	// records it for a run that ended so that its task waits (its error
	// says for what).
	OutcomeSuspend Outcome = "suspend"
)

// FinishItem is the outcome of one execution.
type FinishItem struct {
	TaskID   string
	IdemHash string // "" for none
	Band     int
	EntryID  string
	Run      int
	// Outcome is final except that a cancellation requested meanwhile
	// turns it into OutcomeCancel: the caller turns a retry with no
	// attempts left into OutcomeDead.
	Outcome    Outcome
	Text       string // result (OutcomeOK) or error
	RetryDelay time.Duration
	Crashes    int    // the task's crash count at this run's start
	Attempt    int    // this run's attempt
	Started    string // Unix ms of the run's start, as Start returned it
	// Born holds the fields of the task's birth entry when it was born as
	// the entry it ran from (its hash lacks them), or of a light ordered
	// task's entry (Entry.Light: Spec.OrderKey set); nil otherwise.
	Born *Spec
	// Workflow, Step and Prev: the workflow step the task is (Spec's), ""
	// for none. Its end is recorded there in the same call.
	Workflow string
	Step     int
	Prev     []byte
}

// FinishConfig is the per-queue input of Finish.
type FinishConfig struct {
	// Retention is how long finished tasks are kept; with KeepSucceeded
	// false a succeeded one is deleted at once instead.
	Retention     time.Duration
	KeepSucceeded bool
	IdemWindow    time.Duration
	Durability    Durability
}

// Finish runs finish.lua for items of this queue, run by worker, in one
// round trip. It returns each task's new status, or "" when the execution
// was stale — together with a *NotReplicatedError when durability asked for
// replicas that did not acknowledge in time.
func (q *Queue) Finish(ctx context.Context, cfg FinishConfig, worker string, items []FinishItem) ([]string, error) {
	ks := make([]string, 0, 17+2*len(items))
	ks = append(ks, q.k.Info(), q.k.Schedule(), q.k.DLQ(), q.k.Wakeup(), q.k.Done(), q.k.Run(), q.k.Finished())
	ks = q.k.bands(ks)
	kinds := make([]string, len(items))
	for i, it := range items {
		switch {
		case it.Born != nil && it.Crashes == 0 && (it.Outcome == OutcomeOK || it.Outcome == OutcomeCancel):
			kinds[i] = "P"
		case it.Born != nil:
			kinds[i] = "H"
		default:
			kinds[i] = "h"
		}
		if it.Born != nil && it.Born.OrderKey != "" { // a light ordered task's
			kinds[i] = lightKind(kinds[i])
		}
		ks = append(ks, q.k.Task(ulidOf(it.TaskID)))
	}
	args := make([]string, 0, 6+13*len(items))
	keep := "0"
	if cfg.KeepSucceeded {
		keep = "1"
	}
	args = append(args, Group, ms(cfg.Retention), ms(cfg.IdemWindow), worker, q.name, keep, itoa(len(items)))
	for i, it := range items {
		idemIdx := 0
		if it.IdemHash != "" {
			ks = append(ks, q.k.Idempotency(it.IdemHash))
			idemIdx = len(ks)
		}
		outcome := string(it.Outcome)
		if it.Outcome == OutcomeRetry {
			outcome += "/" + ms(it.RetryDelay)
		}
		text := it.Text
		if kinds[i] == "P" || kinds[i] == "Q" {
			text = packBody(&it, worker)
		}
		kind := kinds[i]
		if it.Workflow != "" {
			ks = append(ks, q.k.Workflow(it.Workflow))
			kind += itoa(len(ks))
		}
		args = append(args, itoa(it.Band), it.EntryID, itoa(it.Run), outcome, rueidis.BinaryString([]byte(text)), itoa(idemIdx), kind)
		if sp := it.Born; sp != nil && (kinds[i] == "H" || kinds[i] == "O") {
			args = append(args, sp.Type, rueidis.BinaryString(sp.Payload), itoa(sp.MaxAttempts), ms(sp.Timeout), sp.IdemHash, sp.Trace,
				it.Started, sp.Parent)
			if kinds[i] == "O" {
				args = append(args, sp.OrderKey, strconv.FormatInt(sp.Created, 10))
			}
		}
		if it.Workflow != "" {
			args = append(args, itoa(it.Step), rueidis.BinaryString(it.Prev))
			if kinds[i] == "P" {
				result := ""
				if it.Outcome == OutcomeOK {
					result = it.Text
				}
				args = append(args, rueidis.BinaryString([]byte(result)))
			}
		}
	}
	ks = append(ks, q.k.OrderHold(), q.k.OrderLine(), q.k.OrderIndex(), q.k.Progress())
	args = append(args, q.k.Events())
	res, replErr := finishScript.ExecDurable(ctx, q.s.r, cfg.Durability, ks, args)
	out, err := res.AsStrSlice()
	if err != nil {
		return nil, err
	}
	if len(out) < len(items) {
		return nil, unexpected("finish", out)
	}
	return out[:len(items)], replErr
}

// lightKind is finish.lua's kind of a light ordered task's item of kind k
// ("P" or "H"): "Q" or "O".
func lightKind(k string) string {
	if k == "P" {
		return "Q"
	}
	return "O"
}

// RenewItem is one running execution to renew.
type RenewItem struct {
	TaskID  string
	Band    int
	EntryID string
	Run     int
	Started string // Unix ms of the run's start (an implicit first run's Run field gets it)
}

// RenewStatus is the outcome of renewing one execution.
type RenewStatus int

// Outcomes of Renew.
const (
	Lost      RenewStatus = 0 // not RUNNING under this run any more
	Renewed   RenewStatus = 1
	Cancelled RenewStatus = 2 // renewed, and its cancellation was requested
)

// Renew runs renew.lua for items of this queue in one round trip.
func (q *Queue) Renew(ctx context.Context, consumer string, items []RenewItem) ([]RenewStatus, error) {
	ks := append(q.k.bands([]string{q.k.Run()}), q.k.Info(), q.k.Finished())
	for _, it := range items {
		ks = append(ks, q.k.Task(ulidOf(it.TaskID)))
	}
	args := make([]string, 0, 3+5*len(items))
	args = append(args, Group, consumer, itoa(len(items)))
	for _, it := range items {
		args = append(args, ulidOf(it.TaskID), itoa(it.Band), it.EntryID, itoa(it.Run), it.Started)
	}
	replies, err := renewScript.Exec(ctx, q.s.r, ks, args).ToArray()
	if err != nil {
		return nil, err
	}
	if len(replies) != len(items) {
		return nil, unexpected("renew", replies)
	}
	out := make([]RenewStatus, len(items))
	for i, r := range replies {
		n, err := r.AsInt64()
		if err != nil {
			return nil, unexpected("renew", r)
		}
		out[i] = RenewStatus(n)
	}
	return out, nil
}

// packBody makes the body of the packed record of it, a task born as its
// entry finishing in its first execution (finish.lua prefixes it with the
// status, the finish time, the run and the error; parseRecord reads it):
//
//	prio|max_att|timeout|created|started|attempt|crashes|len(worker)|len(type)|len(result)|len(idem)|worker type result idem payload
//
// and for a workflow's task (an R4 record) with its workflow, step and
// previous result too:
//
//	prio|…|len(idem)|len(workflow)|step|len(prev)|worker type result idem workflow prev payload
//
// A traced task's body starts with "T", its traceparent and "|" (which
// makes finish.lua write an R5 record, or R6 for a workflow's task). A
// light ordered task's (Spec.OrderKey) starts with "K", its order key and
// "|" before that (an R7 record; never a workflow's task).
func packBody(it *FinishItem, worker string) string {
	sp := it.Born
	result := ""
	if it.Outcome == OutcomeOK {
		result = it.Text
	}
	var b strings.Builder
	b.Grow(64 + len(sp.OrderKey) + len(sp.Trace) + len(worker) + len(sp.Type) + len(result) + len(sp.IdemHash) + len(sp.Payload))
	if sp.OrderKey != "" {
		b.WriteByte('K')
		b.WriteString(sp.OrderKey)
		b.WriteByte('|')
	}
	if sp.Trace != "" && strings.IndexByte(sp.Trace, '|') < 0 {
		b.WriteByte('T')
		b.WriteString(sp.Trace)
		b.WriteByte('|')
	}
	nums := []string{itoa(it.Band), itoa(sp.MaxAttempts), ms(sp.Timeout), strconv.FormatInt(sp.Created, 10),
		it.Started, itoa(it.Attempt), itoa(it.Crashes), itoa(len(worker)), itoa(len(sp.Type)), itoa(len(result)), itoa(len(sp.IdemHash))}
	if it.Workflow != "" {
		nums = append(nums, itoa(len(it.Workflow)), itoa(it.Step), itoa(len(it.Prev)))
	}
	for _, n := range nums {
		b.WriteString(n)
		b.WriteByte('|')
	}
	b.WriteString(worker)
	b.WriteString(sp.Type)
	b.WriteString(result)
	b.WriteString(sp.IdemHash)
	if it.Workflow != "" {
		b.WriteString(it.Workflow)
		b.Write(it.Prev)
	}
	b.Write(sp.Payload)
	return b.String()
}
