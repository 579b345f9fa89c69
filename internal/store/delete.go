package store

import (
	"context"
	_ "embed"

	"github.com/dtq-dev/dtq/internal/script"
)

var (
	//go:embed delete.lua
	deleteSource string
	deleteScript = script.New("delete", libFor(deleteSource), deleteSource)
)

// Deleted is DeleteFinished's answer for a task it deleted.
const Deleted = "OK"

// DeleteFinished deletes the records of tasks ids of this queue that have
// finished and are no dead letters (delete.lua): per id, Deleted, or the
// status that kept it ("" when the task has no record: born as an entry,
// or none).
func (q *Queue) DeleteFinished(ctx context.Context, ids []string) ([]string, error) {
	ks := make([]string, 0, 1+2*len(ids))
	ks = append(ks, q.k.Finished())
	args := append(make([]string, 0, 1+len(ids)), itoa(len(ids)))
	for _, id := range ids {
		u := ulidOf(id)
		ks = append(ks, q.k.Task(u), q.k.Steps(u))
		args = append(args, u)
	}
	v, err := deleteScript.Exec(ctx, q.s.r, ks, args).AsStrSlice()
	if err != nil {
		return nil, err
	}
	if len(v) != len(ids) {
		return nil, unexpected("delete", v)
	}
	return v, nil
}
