package store

import (
	"context"
	_ "embed"

	"github.com/dtq-dev/dtq/internal/script"
)

var (
	//go:embed control.lua
	controlSource string
	controlScript = script.New("control", controlSource)
)

// Worker controls (WorkerControl's values).
const (
	ControlQuiet = "quiet"
	ControlStop  = "stop"
)

// Results of ControlWorker.
const (
	ControlNoWorker    = 0 // no live worker of that id
	ControlRecorded    = 1
	ControlLeaseHolder = 2 // an HTTP lease holder: nothing recorded
)

// ControlWorker asks live worker id to quiet or stop (control.lua). It
// returns ControlRecorded and what is recorded (a quiet asked of a worker
// asked to stop leaves it ControlStop), or another result.
func (s *Store) ControlWorker(ctx context.Context, id, ask string) (int, string, error) {
	v, err := controlScript.Exec(ctx, s.r, []string{WorkerKey(s.ns, id)}, []string{ask, WorkerControlChannel(s.ns), id}).ToArray()
	if err != nil {
		return 0, "", err
	}
	if len(v) == 0 {
		return 0, "", unexpected("control", v)
	}
	n, err := v[0].AsInt64()
	if err != nil || len(v) < 2 {
		return int(n), "", err
	}
	recorded, err := v[1].ToString()
	return int(n), recorded, err
}
