package dtq

import (
	"context"
	"fmt"

	"github.com/dtq-dev/dtq/internal/keys"
	"github.com/dtq-dev/dtq/internal/store"
)

// MaxGroupWeight bounds SetGroupWeight's weight.
const MaxGroupWeight = store.MaxGroupWeight

// GroupInfo is a group of a queue that has a weight (SetGroupWeight).
type GroupInfo struct {
	Group  string `json:"group"`
	Weight int    `json:"weight"`
	// Waiting counts its QUEUED tasks waiting for its turn to enter the
	// queue's bands.
	Waiting int64 `json:"waiting"`
}

// SetGroupWeight weights group in queue's fair scheduling (EnqueueOpts.Group):
// while several groups have work, the queue's workers serve each in
// proportion to its weight — a group of weight 3 three times as often as
// one of weight 1, the default (1 to MaxGroupWeight; 1 removes the
// weight). It keeps weight times GroupWindow (10) of its tasks in the
// queue's bands, not started yet. It is audited (group-weight).
func (a *Admin) SetGroupWeight(ctx context.Context, queue, group string, weight int) error {
	if err := checkQueue("queue", queue); err != nil {
		return err
	}
	if !keys.ValidName(group) {
		return invalid("group", "must be %s (got %q)", keys.NameRule, group)
	}
	if weight < 1 || weight > MaxGroupWeight {
		return invalid("weight", "must be from 1 (the default) to %d (got %d)", MaxGroupWeight, weight)
	}
	q := a.queue(queue)
	if err := a.register(ctx, q); err != nil {
		return err
	}
	if err := q.store.SetGroupWeight(ctx, group, weight); err != nil {
		return err
	}
	a.audit(ctx, auditGroupWeight, queue, "", fmt.Sprintf("group=%s weight=%d", group, weight))
	return nil
}

// GroupWeights returns queue's groups that have a weight, by name.
func (a *Admin) GroupWeights(ctx context.Context, queue string) ([]GroupInfo, error) {
	if err := checkQueue("queue", queue); err != nil {
		return nil, err
	}
	ws, err := a.queue(queue).store.GroupWeights(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]GroupInfo, len(ws))
	for i, w := range ws {
		out[i] = GroupInfo{Group: w.Group, Weight: w.Weight, Waiting: w.Waiting}
	}
	return out, nil
}
