package taskscript

import (
	"context"
	"time"

	"github.com/dtq-dev/dtq/internal/keys"
	"github.com/dtq-dev/dtq/internal/taskid"
	"github.com/redis/rueidis"
)

// StartConfig is the per-worker input of Start.
type StartConfig struct {
	Group      string
	Worker     string
	MaxCrashes int
	DLQMaxLen  int64
}

// Started is the outcome of starting one entry. When OK, the task is
// RUNNING under Run, and the other fields describe it.
type Started struct {
	OK          bool
	Run         int
	Attempt     int
	MaxAttempts int
	Timeout     time.Duration
	Type        string
	Payload     []byte
	Created     int64 // Unix ms
	Crashes     int
	IdemHash    string // of its idempotency record, "" for none
}

// Start runs start.lua for entries of one queue in one round trip.
func Start(ctx context.Context, c rueidis.Client, k keys.Tasks, cfg StartConfig, entries []Entry) ([]Started, error) {
	ks := make([]string, 0, 12+len(entries))
	ks = append(ks, k.Info(), k.DLQ())
	ks = bands(ks, k)
	args := make([]string, 0, 6+4*len(entries))
	args = append(args, cfg.Group, cfg.Worker, itoa(cfg.MaxCrashes), k.Events(), itoa(int(cfg.DLQMaxLen)), itoa(len(entries)))
	for _, e := range entries {
		_, ulid, err := taskid.Parse(e.TaskID)
		if err != nil {
			ulid = "invalid" // no such task hash: the entry is acknowledged and skipped
		}
		ks = append(ks, k.Task(ulid))
		rec := "0"
		switch {
		case e.GiveBack:
			rec = "2"
		case e.Reclaimed:
			rec = "1"
		}
		args = append(args, itoa(e.Band), e.EntryID, e.TaskID, rec)
	}
	replies, err := startScript.Exec(ctx, c, ks, args).ToArray()
	if err != nil {
		return nil, err
	}
	if len(replies) != len(entries) {
		return nil, unexpected("start", replies)
	}
	out := make([]Started, len(entries))
	for i, r := range replies {
		v, err := r.ToArray()
		if err != nil || len(v) == 0 {
			return nil, unexpected("start", r)
		}
		if ok, _ := v[0].AsInt64(); ok != 1 {
			continue
		}
		if len(v) != 10 {
			return nil, unexpected("start", v)
		}
		s := &out[i]
		s.OK = true
		run, _ := v[1].AsInt64()
		att, _ := v[2].AsInt64()
		max, _ := v[3].AsInt64()
		timeout, _ := v[4].AsInt64()
		s.Type, _ = v[5].ToString()
		payload, _ := v[6].ToString()
		s.Created, _ = v[7].AsInt64()
		crashes, _ := v[8].AsInt64()
		s.IdemHash, _ = v[9].ToString()
		s.Run, s.Attempt, s.MaxAttempts, s.Crashes = int(run), int(att), int(max), int(crashes)
		s.Timeout = time.Duration(timeout) * time.Millisecond
		s.Payload = []byte(payload)
	}
	return out, nil
}
