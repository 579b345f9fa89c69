package queuestore

import (
	"context"
	"strconv"
	"time"

	"github.com/dtq-dev/dtq/internal/keys"
	"github.com/redis/rueidis"
)

// FetchRequest is the input of Fetch.
type FetchRequest struct {
	Group    string
	Consumer string
	Topics   []string // in priority order, highest first
	Cursors  []string // one reclaim cursor per topic ("0-0" to start)
	Credit   int      // most messages to claim, > 0
	// ReclaimIdle, when positive, runs a reclaim pass taking entries idle at
	// least this long.
	ReclaimIdle time.Duration
	DeadMaxLen  int64
	PromoteMax  int // most delayed messages to promote per topic
	// SkipNew skips reading new entries: the caller reads them itself.
	SkipNew bool
}

// Fetched is one claimed message.
type Fetched struct {
	Topic int    // index into FetchRequest.Topics
	ID    string // stream entry id
	Fence int64  // delivery count in the consumer group
	Prior int64  // deliveries before the message was last moved (nak, release)
	Key   string
	Data  []byte
	Keyed bool // the key is in the dedup index (false: a random key)
}

// Wait says how to block until something may be claimable: XREAD from these
// ids.
type Wait struct {
	WakeID    string
	StreamIDs []string // one per topic
}

// FetchResult is the output of Fetch. Wait is nil when Entries is non-empty.
// NextDue is how long until the next delayed message of the topics is due,
// negative when there is none.
type FetchResult struct {
	Entries []Fetched
	Cursors []string
	Wait    *Wait
	NextDue time.Duration
}

// Fetch runs fetch.lua for one subscription.
func Fetch(ctx context.Context, c rueidis.Client, q keys.Queue, req FetchRequest) (FetchResult, error) {
	T := len(req.Topics)
	ks := make([]string, 0, 3+2*T)
	ks = append(ks, q.Wake(), q.Dead(), q.Stats())
	for _, t := range req.Topics {
		ks = append(ks, q.Stream(t), q.Delayed(t))
	}
	args := make([]string, 0, 8+2*T)
	args = append(args, req.Group, req.Consumer, strconv.Itoa(req.Credit), ms(req.ReclaimIdle),
		itoa(req.DeadMaxLen), strconv.Itoa(req.PromoteMax), strconv.Itoa(T))
	args = append(args, req.Topics...)
	args = append(args, req.Cursors...)
	if req.SkipNew {
		args = append(args, "1")
	} else {
		args = append(args, "0")
	}

	top, err := fetchScript.Exec(ctx, c, ks, args).ToArray()
	if err != nil {
		return FetchResult{}, err
	}
	if len(top) != 4 {
		return FetchResult{}, unexpected("fetch", top)
	}
	flat, err := top[0].ToArray()
	if err != nil || len(flat)%7 != 0 {
		return FetchResult{}, unexpected("fetch", top[0])
	}
	var res FetchResult
	for i := 0; i < len(flat); i += 7 {
		var f Fetched
		j, e1 := flat[i].AsInt64()
		f.ID, _ = flat[i+1].ToString()
		f.Fence, _ = flat[i+2].AsInt64()
		f.Prior, _ = flat[i+3].AsInt64()
		f.Key, _ = flat[i+4].ToString()
		data, e2 := flat[i+5].ToString()
		keyed, e3 := flat[i+6].AsInt64()
		if e1 != nil || e2 != nil || e3 != nil || j < 1 || int(j) > T || f.Fence < 1 {
			return FetchResult{}, unexpected("fetch", flat[i:i+7])
		}
		f.Keyed = keyed == 1
		f.Topic, f.Data = int(j)-1, []byte(data)
		res.Entries = append(res.Entries, f)
	}
	if res.Cursors, err = top[1].AsStrSlice(); err != nil || len(res.Cursors) != T {
		return FetchResult{}, unexpected("fetch", top[1])
	}
	due, err := top[3].AsInt64()
	if err != nil {
		return FetchResult{}, unexpected("fetch", top[3])
	}
	res.NextDue = time.Duration(due) * time.Millisecond
	if due < 0 {
		res.NextDue = -1
	}
	if len(res.Entries) > 0 {
		return res, nil
	}
	w, err := top[2].ToArray()
	if err != nil || len(w) != T+1 {
		return FetchResult{}, unexpected("fetch", top[2])
	}
	res.Wait = &Wait{}
	res.Wait.WakeID, _ = w[0].ToString()
	for _, m := range w[1:] {
		id, _ := m.ToString()
		res.Wait.StreamIDs = append(res.Wait.StreamIDs, id)
	}
	return res, nil
}
