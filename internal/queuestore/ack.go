package queuestore

import (
	"context"
	"strconv"

	"github.com/dtq-dev/dtq/internal/keys"
	"github.com/redis/rueidis"
)

// AckItem is one delivery to acknowledge.
type AckItem struct {
	ID    string
	Fence int64
	Key   string // "" when the message is not in the dedup index
}

// FenceRange asks Ack to fence with one XPENDING over [First, Last] of at
// most Count entries (the consumer's entries in that range), instead of one
// XPENDING per ack. It pays when the acks are dense among the consumer's
// pending entries.
type FenceRange struct {
	First, Last string
	Count       int
}

// Ack runs ack.lua for acks of one topic in one round trip and reports, per
// item, whether it was acknowledged (false: not owner, nothing changed).
func Ack(ctx context.Context, c rueidis.Client, q keys.Queue, cfg SettleConfig, topic string, items []AckItem, fence *FenceRange) ([]bool, error) {
	ks := []string{q.Stream(topic), q.Dedup(), q.Tombstones(), q.Waiters(topic), q.Room(topic)}
	args := make([]string, 0, 8+3*len(items))
	args = append(args, cfg.Group, cfg.Consumer, ms(cfg.TombstoneTTL), ms(cfg.WaiterTTL), strconv.Itoa(cfg.RoomCap))
	if fence != nil {
		args = append(args, strconv.Itoa(fence.Count), fence.First, fence.Last)
	} else {
		args = append(args, "0", "", "")
	}
	for _, it := range items {
		args = append(args, it.ID, itoa(it.Fence), it.Key)
	}
	replies, err := ackScript.Exec(ctx, c, ks, args).ToArray()
	if err != nil {
		return nil, err
	}
	if len(replies) != len(items) {
		return nil, unexpected("ack", replies)
	}
	out := make([]bool, len(items))
	for i, r := range replies {
		n, err := r.AsInt64()
		if err != nil || (n != 0 && n != 1) {
			return nil, unexpected("ack", r)
		}
		out[i] = n == 1
	}
	return out, nil
}
