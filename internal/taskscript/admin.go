package taskscript

import (
	"context"
	"time"

	"github.com/dtq-dev/dtq/internal/keys"
	"github.com/dtq-dev/dtq/internal/taskid"
	"github.com/redis/rueidis"
)

// Promote runs promote.lua for candidate task ids (the earliest of the
// schedule). It returns how many were promoted and how long until the
// earliest remaining due time (negative: nothing scheduled).
func Promote(ctx context.Context, c rueidis.Client, k keys.Tasks, ids []string) (int, time.Duration, error) {
	ks := make([]string, 0, 12+len(ids))
	ks = append(ks, k.Info(), k.Schedule())
	ks = bands(ks, k)
	args := append(make([]string, 0, 2+len(ids)), k.Events(), itoa(len(ids)))
	for _, id := range ids {
		ks = append(ks, k.Task(ulidOf(id)))
		args = append(args, id)
	}
	v, err := promoteScript.Exec(ctx, c, ks, args).AsIntSlice()
	if err != nil {
		return 0, 0, err
	}
	if len(v) != 2 {
		return 0, 0, unexpected("promote", v)
	}
	next := time.Duration(v[1]) * time.Millisecond
	if v[1] < 0 {
		next = -1
	}
	return int(v[0]), next, nil
}

// Cancel runs cancel.lua for one task. It returns the task's status after
// the call ("" when there is no such task) and, when this call cancelled a
// QUEUED or SCHEDULED task, its type (else "").
func Cancel(ctx context.Context, c rueidis.Client, k keys.Tasks, id string, retention time.Duration) (status, cancelledType string, err error) {
	ks := []string{k.Info(), k.Schedule(), k.Task(ulidOf(id))}
	args := []string{id, k.Events(), k.Cancels(), ms(retention)}
	v, err := cancelScript.Exec(ctx, c, ks, args).AsStrSlice()
	if err != nil {
		return "", "", err
	}
	switch len(v) {
	case 1:
		return v[0], "", nil
	case 2:
		return v[0], v[1], nil
	}
	return "", "", unexpected("cancel", v)
}

// DLQAction is what DLQ does to dead tasks.
type DLQAction string

// Actions of DLQ.
const (
	Requeue DLQAction = "requeue"
	Discard DLQAction = "discard"
)

// DLQ runs dlq.lua for task ids of one queue; it reports, per id, whether
// the task was DEAD and acted on.
func DLQ(ctx context.Context, c rueidis.Client, k keys.Tasks, action DLQAction, ids []string, retention time.Duration) ([]bool, error) {
	ks := make([]string, 0, 12+len(ids))
	ks = append(ks, k.Info(), k.DLQ())
	ks = bands(ks, k)
	args := append(make([]string, 0, 4+len(ids)), string(action), k.Events(), ms(retention), itoa(len(ids)))
	for _, id := range ids {
		ks = append(ks, k.Task(ulidOf(id)))
		args = append(args, id)
	}
	v, err := dlqScript.Exec(ctx, c, ks, args).AsIntSlice()
	if err != nil {
		return nil, err
	}
	if len(v) != len(ids) {
		return nil, unexpected("dlq", v)
	}
	out := make([]bool, len(v))
	for i, n := range v {
		out[i] = n == 1
	}
	return out, nil
}

// ulidOf returns the random part of a task id; an invalid id maps to a
// task hash that cannot exist.
func ulidOf(id string) string {
	if _, ulid, err := taskid.Parse(id); err == nil {
		return ulid
	}
	return "invalid"
}
