package queuestore

import (
	"context"
	"strconv"
	"time"

	"github.com/dtq-dev/dtq/internal/keys"
	"github.com/redis/rueidis"
)

// Op is a settle operation.
type Op byte

// Settle operations; see settle.lua.
const (
	OpAck       Op = 'a'
	OpHandBack  Op = 'b'
	OpExtend    Op = 'e'
	OpNak       Op = 'n'
	OpRelease   Op = 'r'
	OpTerm      Op = 't'
	OpMalformed Op = 'm'
)

// SettleItem is one fenced action on a delivery.
type SettleItem struct {
	Op    Op
	Topic string
	ID    string
	Fence int64

	Delay   time.Duration // OpNak, > 0
	Dest    string        // OpRelease
	MaxSize int64         // OpRelease, 0 = unbounded
	Reason  string        // OpTerm
}

// SettleConfig is the per-subscription input of Settle.
type SettleConfig struct {
	Group        string
	Consumer     string
	TombstoneTTL time.Duration // 0 = no tombstones
	WaiterTTL    time.Duration
	DeadMaxLen   int64
	RoomCap      int
}

// SettleStatus is the outcome of one SettleItem.
type SettleStatus int

// Outcomes of Settle.
const (
	Done     SettleStatus = iota // acted
	NotOwner                     // the delivery no longer owns the entry: nothing changed
	DestFull                     // OpRelease only: destination at MaxSize, nothing changed
)

// SettleResult is the outcome of one SettleItem; ID is the new entry id of a
// done OpRelease.
type SettleResult struct {
	Status SettleStatus
	ID     string
}

// Settle runs settle.lua for items in one round trip.
func Settle(ctx context.Context, c rueidis.Client, q keys.Queue, cfg SettleConfig, items []SettleItem) ([]SettleResult, error) {
	var topics topicIndex
	for _, it := range items {
		topics.of(it.Topic)
		if it.Op == OpRelease {
			topics.of(it.Dest)
		}
	}
	T := len(topics.names)
	args := make([]string, 0, 9+T+5*len(items))
	args = append(args, cfg.Group, cfg.Consumer, ms(cfg.TombstoneTTL), ms(cfg.WaiterTTL),
		itoa(cfg.DeadMaxLen), strconv.Itoa(cfg.RoomCap), strconv.Itoa(T))
	args = append(args, topics.names...)
	args = append(args, strconv.Itoa(len(items)))
	for _, it := range items {
		var a string
		switch it.Op {
		case OpNak:
			a = ms(it.Delay)
		case OpRelease:
			a = strconv.Itoa(topics.of(it.Dest)) + ":" + itoa(it.MaxSize)
		case OpTerm:
			a = it.Reason
		}
		args = append(args, string(it.Op), strconv.Itoa(topics.of(it.Topic)), it.ID, itoa(it.Fence), a)
	}
	ks := make([]string, 0, 5+4*T)
	ks = append(ks, q.Dedup(), q.Tombstones(), q.Wake(), q.Dead(), q.Stats())
	for _, t := range topics.names {
		ks = append(ks, q.Stream(t), q.Delayed(t), q.Waiters(t), q.Room(t))
	}
	replies, err := settleScript.Exec(ctx, c, ks, args).ToArray()
	if err != nil {
		return nil, err
	}
	if len(replies) != len(items) {
		return nil, unexpected("settle", replies)
	}
	out := make([]SettleResult, len(items))
	for i, r := range replies {
		if id, err := r.ToString(); err == nil {
			out[i] = SettleResult{Status: Done, ID: id}
			continue
		}
		n, err := r.AsInt64()
		if err != nil {
			return nil, unexpected("settle", r)
		}
		switch n {
		case 1:
			out[i].Status = Done
		case 0:
			out[i].Status = NotOwner
		case -1:
			out[i].Status = DestFull
		default:
			return nil, unexpected("settle", n)
		}
	}
	return out, nil
}
