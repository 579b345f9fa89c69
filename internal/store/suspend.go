package store

import (
	"context"
	_ "embed"
	"time"

	"github.com/dtq-dev/dtq/internal/script"
	"github.com/dtq-dev/dtq/internal/taskid"
	"github.com/redis/rueidis"
)

var (
	//go:embed suspend.lua
	suspendSource string
	//go:embed signal.lua
	signalSource string
	//go:embed wake.lua
	wakeSource string

	suspendScript = script.New("suspend", libFor(suspendSource), suspendSource)
	signalScript  = script.New("signal", libFor(signalSource), signalSource)
	wakeScript    = script.New("wake", libFor(wakeSource), wakeSource)
)

// What a suspended task waits for (Record.Wait is "<kind> <name>").
const (
	WaitSleep  = "sleep"
	WaitSignal = "signal"
)

// SuspendCode is the outcome of Suspend.
type SuspendCode int

// Outcomes of Suspend.
const (
	SuspendStale     SuspendCode = 0 // the run is not the task's running one: nothing changed
	Suspended        SuspendCode = 1
	SuspendCancelled SuspendCode = 2 // its cancellation was requested: record the run CANCELLED instead
)

// Suspend runs suspend.lua: execution f of task ulid ends without an
// outcome and the task waits SCHEDULED for wait, for what (WaitSleep or
// WaitSignal) of name, its attempt kept. It returns when the task is due
// (Unix ms; at once for a signal recorded already).
func (q *Queue) Suspend(ctx context.Context, d Durability, ulid string, f Fence, kind, name string, wait time.Duration) (SuspendCode, int64, error) {
	band := min(max(f.Band, 0), Bands-1)
	ks := []string{q.k.Run(), q.k.Task(ulid), q.k.Steps(ulid), q.k.Band(band), q.k.Schedule(), q.k.Wakeup(), q.k.Progress(), q.k.Suspended()}
	args := []string{ulid, itoa(f.Run), Group, f.Worker, f.EntryID, f.Started, itoa(band), kind + " " + name,
		ms(max(wait, 0)), q.name, ms(StepKeep)}
	res, replErr := suspendScript.ExecDurable(ctx, q.s.r, d, ks, args)
	v, err := res.AsIntSlice()
	if err != nil {
		return 0, 0, err
	}
	if len(v) == 0 {
		return 0, 0, unexpected("suspend", v)
	}
	var due int64
	if len(v) == 2 {
		due = v[1]
	}
	return SuspendCode(v[0]), due, replErr
}

// SignalCode is the outcome of Signal.
type SignalCode string

// Outcomes of Signal.
const (
	SignalRecorded SignalCode = "OK"
	SignalHad      SignalCode = "HAD"      // a record of that name stands (a signal, or the wait's timeout)
	SignalFinished SignalCode = "FINISHED" // the task has finished: nothing recorded
	SignalNotFound SignalCode = "NOTFOUND"
)

// Signal runs signal.lua: it records payload as signal name of task id
// (the step record of that name), and wakes the task if it waits for it.
// It returns the task's status too ("" when not found).
func (q *Queue) Signal(ctx context.Context, d Durability, id, name string, payload []byte) (SignalCode, string, error) {
	_, ulid, err := taskid.Parse(id)
	if err != nil {
		return SignalNotFound, "", nil //nolint:nilerr // not a task id: no such task
	}
	band, eid, born := taskid.Entry(ulid)
	if !born {
		band, eid = 0, ""
	}
	ks := []string{q.k.Task(ulid), q.k.Steps(ulid), q.k.Finished(), q.k.Band(band), q.k.Schedule(), q.k.Wakeup(), q.k.Suspended(),
		q.k.OrderIndex()}
	args := []string{ulid, name, rueidis.BinaryString(payload), eid, q.name, ms(StepKeep)}
	res, replErr := signalScript.ExecDurable(ctx, q.s.r, d, ks, args)
	v, err := res.AsStrSlice()
	if err != nil {
		return "", "", err
	}
	if len(v) == 0 {
		return "", "", unexpected("signal", v)
	}
	status := ""
	if len(v) == 2 {
		status = v[1]
	}
	return SignalCode(v[0]), status, replErr
}

// WaitChild is what a task awaiting a child waits for (Record.Wait is
// "child <step>").
const WaitChild = "child"

// WakeAwaiting runs wake.lua: task id of this queue, if it is suspended
// awaiting the child of step, is due at once. It reports whether it was.
func (q *Queue) WakeAwaiting(ctx context.Context, id, step string) (bool, error) {
	_, ulid, err := taskid.Parse(id)
	if err != nil {
		return false, nil //nolint:nilerr // not a task id: nothing to wake
	}
	ks := []string{q.k.Task(ulid), q.k.Schedule(), q.k.Suspended(), q.k.Wakeup()}
	n, err := wakeScript.Exec(ctx, q.s.r, ks, []string{id, WaitChild + " " + step}).AsInt64()
	return n == 1, err
}
