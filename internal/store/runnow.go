package store

import (
	"context"
	_ "embed"

	"github.com/dtq-dev/dtq/internal/script"
)

var (
	//go:embed runnow.lua
	runNowSource string
	runNowScript = script.New("runnow", libFor(runNowSource), runNowSource)
)

// RunNow moves task id of this queue from the schedule into its band at
// once (runnow.lua): moved is true when it did; else status is the task's
// status as its hash says ("" when it has none: a task born as an entry,
// QUEUED, or no task).
func (q *Queue) RunNow(ctx context.Context, id string) (moved bool, status string, err error) {
	ulid := ulidOf(id)
	ks := make([]string, 0, 16)
	ks = append(ks, q.k.Schedule())
	ks = q.k.bands(ks)
	ks = append(ks, q.k.GroupWait(), q.k.GroupCount(), q.k.Task(ulid), q.k.Steps(ulid), q.k.Suspended())
	v, err := runNowScript.Exec(ctx, q.s.r, ks, []string{q.k.Events(), id, ms(StepKeep)}).ToArray()
	if err != nil {
		return false, "", err
	}
	switch {
	case len(v) == 1:
		n, err := v[0].AsInt64()
		return n == 1, "", err
	case len(v) == 2:
		s, err := v[1].ToString()
		return false, s, err
	}
	return false, "", unexpected("runnow", v)
}
