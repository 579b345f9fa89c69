package taskscript

import (
	"context"
	"strconv"
	"time"

	"github.com/dtq-dev/dtq/internal/keys"
	"github.com/redis/rueidis"
)

// EnqueueItem is one task to create.
type EnqueueItem struct {
	ID          string // full task id
	ULID        string // its random part: the task hash key
	IdemHash    string // SHA-256 hex of the idempotency key; "" for none
	Fingerprint string // of the request, compared on idempotent replay
	Type        string
	Payload     []byte
	Priority    int
	MaxAttempts int
	Timeout     time.Duration
	RunAt       int64         // Unix ms on the Redis clock; 0 = none
	Delay       time.Duration // 0 = none
	Created     int64         // Unix ms: the submitting client's clock (as in the id)
}

// EnqueueConfig is the per-queue input of Enqueue.
type EnqueueConfig struct {
	MaxDepth   int64 // 0 = unbounded
	IdemWindow time.Duration
	Durability Durability
}

// EnqueueCode is the outcome of one EnqueueItem.
type EnqueueCode int

// Outcomes of Enqueue.
const (
	Created  EnqueueCode = 1
	Replay   EnqueueCode = 2  // the idempotency key's original task (ID)
	Conflict EnqueueCode = -1 // the key was used for another request (ID: the original)
	Full     EnqueueCode = -2 // depth at MaxDepth: nothing written
)

// EnqueueResult is the outcome of one EnqueueItem.
type EnqueueResult struct {
	Code EnqueueCode
	ID   string
	Now  int64 // the Redis time (Unix ms) due times were computed from; 0 from EnqueuePlain
}

// Enqueue runs enqueue.lua for items of one queue in one round trip.
func Enqueue(ctx context.Context, c rueidis.Client, k keys.Tasks, cfg EnqueueConfig, items []EnqueueItem) ([]EnqueueResult, error) {
	ks, args := enqueueCmd(k, cfg, items)
	res, err := enqueueScript.exec(ctx, c, cfg.Durability, ks, args)
	if err != nil {
		return nil, err // written, not replicated: the caller resubmits with the same key
	}
	return parseEnqueue(res)
}

func enqueueCmd(k keys.Tasks, cfg EnqueueConfig, items []EnqueueItem) (ks, args []string) {
	ks = make([]string, 0, 14+2*len(items))
	ks = append(ks, k.Info(), k.Schedule(), k.Wakeup(), k.Index())
	ks = bands(ks, k)
	args = make([]string, 0, 3+12*len(items))
	args = append(args, strconv.FormatInt(cfg.MaxDepth, 10), ms(cfg.IdemWindow), itoa(len(items)))
	for _, it := range items {
		ks = append(ks, k.Task(it.ULID))
		taskIdx, idemIdx := len(ks), 0
		if it.IdemHash != "" {
			ks = append(ks, k.Idempotency(it.IdemHash))
			idemIdx = len(ks)
		}
		fp := it.Fingerprint
		if fp == "" {
			fp = "-"
		}
		args = append(args, it.ID, itoa(taskIdx), itoa(idemIdx), fp, it.Type, rueidis.BinaryString(it.Payload),
			itoa(it.Priority), itoa(it.MaxAttempts), ms(it.Timeout), strconv.FormatInt(it.RunAt, 10), ms(it.Delay),
			strconv.FormatInt(it.Created, 10))
	}
	return ks, args
}

func parseEnqueue(r rueidis.RedisResult) ([]EnqueueResult, error) {
	flat, err := r.ToArray()
	if err != nil {
		return nil, err
	}
	if len(flat)%2 != 1 {
		return nil, unexpected("enqueue", flat)
	}
	now, _ := flat[len(flat)-1].AsInt64()
	out := make([]EnqueueResult, len(flat)/2)
	for i := range out {
		code, err := flat[2*i].AsInt64()
		if err != nil {
			return nil, unexpected("enqueue", flat[2*i])
		}
		out[i].Code = EnqueueCode(code)
		out[i].ID, _ = flat[2*i+1].ToString()
		out[i].Now = now
	}
	return out, nil
}
