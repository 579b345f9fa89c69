package taskscript

import (
	"context"
	"time"

	"github.com/dtq-dev/dtq/internal/keys"
	"github.com/redis/rueidis"
)

// Outcome is how an execution ended, as finish.lua reads it.
type Outcome string

// Outcomes of an execution.
const (
	OutcomeOK     Outcome = "ok"
	OutcomeRetry  Outcome = "retry"
	OutcomeDead   Outcome = "dead"
	OutcomeCancel Outcome = "cancel"
)

// FinishItem is the outcome of one execution.
type FinishItem struct {
	TaskID   string
	ULID     string
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
	Started    string // Unix ms of the run's start, as start.lua returned it
}

// FinishConfig is the per-queue input of Finish.
type FinishConfig struct {
	Group      string
	Retention  time.Duration
	IdemWindow time.Duration
	DLQMaxLen  int64
	Durability Durability
}

// Finish runs finish.lua for items of one queue, run by worker, in one
// round trip. It returns each task's new status, or "" when the execution
// was stale — together with a *NotReplicatedError when durability asked for
// replicas that did not acknowledge in time.
func Finish(ctx context.Context, c rueidis.Client, k keys.Tasks, cfg FinishConfig, worker string, items []FinishItem) ([]string, error) {
	ks := make([]string, 0, 14+2*len(items))
	ks = append(ks, k.Info(), k.Schedule(), k.DLQ(), k.Wakeup())
	ks = bands(ks, k)
	for _, it := range items {
		ks = append(ks, k.Task(it.ULID))
	}
	args := make([]string, 0, 6+8*len(items))
	args = append(args, cfg.Group, ms(cfg.Retention), ms(cfg.IdemWindow), itoa(int(cfg.DLQMaxLen)), worker, itoa(len(items)))
	for _, it := range items {
		idemIdx := 0
		if it.IdemHash != "" {
			ks = append(ks, k.Idempotency(it.IdemHash))
			idemIdx = len(ks)
		}
		outcome := string(it.Outcome)
		if it.Outcome == OutcomeRetry {
			outcome += "/" + ms(it.RetryDelay)
		}
		args = append(args, it.TaskID, itoa(idemIdx), itoa(it.Band), it.EntryID, itoa(it.Run), outcome, it.Text, it.Started+"|")
	}
	res, replErr := finishScript.exec(ctx, c, cfg.Durability, ks, args)
	out, err := res.AsStrSlice()
	if err != nil {
		return nil, err
	}
	if len(out) != len(items) {
		return nil, unexpected("finish", out)
	}
	return out, replErr
}
