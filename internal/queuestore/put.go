package queuestore

import (
	"context"
	"time"

	"github.com/dtq-dev/dtq/internal/keys"
	"github.com/redis/rueidis"
)

// PutMessage is one message for Put.
type PutMessage struct {
	Topic   string
	Key     string
	Data    []byte
	MaxSize int64         // 0 = unbounded
	Delay   time.Duration // 0 = deliverable now
	// Nonce identifies the Put call across its retries; it must not be all
	// digits. A retry that finds its own nonce reports Published. Empty for
	// a random key: the message is not entered in the dedup index.
	Nonce string
}

// PutStatus is the outcome of one message of a Put.
type PutStatus int

// Outcomes of Put, one per message.
const (
	Published PutStatus = iota // appended to its topic's stream
	Delayed                    // parked until due
	Duplicate                  // key live or tombstoned: nothing written
	Full                       // topic at MaxSize: nothing written, waiters flag set
)

// PutResult is the outcome of one message of a Put; ID is set when Published.
type PutResult struct {
	Status PutStatus
	ID     string
}

// Put runs put.lua for msgs in one round trip.
func Put(ctx context.Context, c rueidis.Client, q keys.Queue, waiterTTL time.Duration, msgs []PutMessage) ([]PutResult, error) {
	var topics topicIndex
	args := make([]string, 0, 2+6*len(msgs))
	args = append(args, ms(waiterTTL), itoa(int64(len(msgs))))
	for _, m := range msgs {
		args = append(args, itoa(int64(topics.of(m.Topic))), m.Key, rueidis.BinaryString(m.Data),
			itoa(m.MaxSize), ms(m.Delay), m.Nonce)
	}
	ks := make([]string, 0, 2+3*len(topics.names))
	ks = append(ks, q.Dedup(), q.Wake())
	for _, t := range topics.names {
		ks = append(ks, q.Stream(t), q.Delayed(t), q.Waiters(t))
	}
	replies, err := putScript.Exec(ctx, c, ks, args).ToArray()
	if err != nil {
		return nil, err
	}
	if len(replies) != len(msgs) {
		return nil, unexpected("put", replies)
	}
	out := make([]PutResult, len(msgs))
	for i, r := range replies {
		if id, err := r.ToString(); err == nil {
			out[i] = PutResult{Status: Published, ID: id}
			continue
		}
		n, err := r.AsInt64()
		if err != nil {
			return nil, unexpected("put", r)
		}
		switch n {
		case 2:
			out[i].Status = Published
		case 1:
			out[i].Status = Delayed
		case 0:
			out[i].Status = Duplicate
		case -1:
			out[i].Status = Full
		default:
			return nil, unexpected("put", n)
		}
	}
	return out, nil
}
