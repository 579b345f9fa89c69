package store

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/dtq-dev/dtq/internal/script"
	"github.com/dtq-dev/dtq/internal/taskid"
	"github.com/redis/rueidis"
)

// EnqueueItem is one task to create.
type EnqueueItem struct {
	// RandomID is the task's id if it is created SCHEDULED (a random id,
	// internal/taskid.New; made here when empty); a task due now gets the
	// id of its entry.
	RandomID    string
	IdemHash    string // SHA-256 hex of the idempotency key; "" for none
	Fingerprint string // of the request, compared on idempotent replay
	Type        string
	Payload     []byte
	Priority    int
	MaxAttempts int
	Timeout     time.Duration
	RunAt       int64         // Unix ms on the Redis clock; 0 = none
	Delay       time.Duration // 0 = none
	// Group is the group (tenant) the task is served fairly among: "" for
	// none. A grouped task has a hash from its submission and enters its
	// band under its group's window (see Keys.GroupWait).
	Group string
	// LimitKey is the key of the scoped limits the task is under besides
	// its type's ("" for none); a task with one has a hash from its
	// submission.
	LimitKey string
	// Trace is the W3C traceparent of the submission's span ("" for none):
	// the parent of the handler's.
	Trace string
	// Parent is "<task id> <step>" of the task awaiting this one
	// (dtq.Child; "" for none): woken when it ends. A task with one goes
	// through the script.
	Parent string
	// OrderKey is the order key ("" for none): of the tasks of one key, one
	// at a time is queued, scheduled or running, in submission order (see
	// Keys.OrderHold). A task with one due at once, without a group or a
	// limit key, has no hash (Keys.OrderIndex); any other has a hash from
	// its submission.
	OrderKey string
}

// plain reports whether it needs no check inside Redis: no idempotency
// key, delay or run-at.
func (it *EnqueueItem) plain() bool {
	return it.IdemHash == "" && it.Delay == 0 && it.RunAt == 0 && it.Group == "" && it.LimitKey == "" && it.Parent == "" && it.OrderKey == ""
}

// EnqueueConfig is the per-queue input of Enqueue.
type EnqueueConfig struct {
	MaxDepth   int64 // 0 = unbounded
	IdemWindow time.Duration
	Durability Durability
	// Publish: events of earlier transitions, sent fire-and-forget (their
	// replies are not read) as PUBLISHes after the plain XADDs, in the same
	// round trip — when there are any (CarriesEvents); otherwise in a round
	// trip of their own (Store.Publish), which a caller avoids by passing
	// events only when CarriesEvents.
	Publish []Publication
}

// CarriesEvents reports whether Enqueue of items sends plain XADDs that
// events can ride along with: some item is plain, the queue has no depth
// bound, and no durability pins the writes to one connection.
func (cfg EnqueueConfig) CarriesEvents(items []EnqueueItem) bool {
	if cfg.MaxDepth != 0 || cfg.Durability.Replicas > 0 {
		return false
	}
	for i := range items {
		if items[i].plain() {
			return true
		}
	}
	return false
}

// Publication is event lines to publish on one channel.
type Publication struct {
	Channel string
	Lines   []string
}

// publishCmd is the PUBLISH of p.
func (s *Store) publishCmd(p Publication) rueidis.Completed {
	return s.r.B().Publish().Channel(p.Channel).Message(strings.Join(p.Lines, "\n")).Build()
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
	// Status is the created task's: StatusQueued or StatusScheduled.
	Status string
	// Created is the created task's creation time, Due a scheduled one's
	// due time (Unix ms, Redis clock).
	Created, Due int64
	// GroupWaiting: the created task waits for its group's turn.
	GroupWaiting bool
	// OrderWaiting: the created task waits for its order key.
	OrderWaiting bool
}

// Enqueue creates items in one round trip: those that need no check inside
// Redis (see EnqueueItem) each with one XADD, the others with enqueue.lua.
func (q *Queue) Enqueue(ctx context.Context, cfg EnqueueConfig, items []EnqueueItem) ([]EnqueueResult, error) {
	var plain, scripted []int
	for i := range items {
		if cfg.MaxDepth == 0 && items[i].plain() {
			plain = append(plain, i)
		} else {
			scripted = append(scripted, i)
		}
	}
	out := make([]EnqueueResult, len(items))
	var perr, serr error
	run := func(idx []int, f func(context.Context, EnqueueConfig, []*EnqueueItem) ([]EnqueueResult, error), errp *error) {
		its := make([]*EnqueueItem, len(idx))
		for j, i := range idx {
			its[j] = &items[i]
		}
		res, err := f(ctx, cfg, its)
		if err != nil {
			*errp = err
			return
		}
		for j, i := range idx {
			out[i] = res[j]
		}
	}
	if len(cfg.Publish) > 0 && !cfg.CarriesEvents(items) {
		_ = q.s.Publish(ctx, cfg.Publish) // fire-and-forget, as they would have ridden along
		cfg.Publish = nil
	}
	switch {
	case len(scripted) == 0:
		run(plain, q.enqueuePlain, &perr)
	case len(plain) == 0:
		run(scripted, q.enqueueScripted, &serr)
	default:
		var wg sync.WaitGroup
		wg.Go(func() { run(plain, q.enqueuePlain, &perr) })
		run(scripted, q.enqueueScripted, &serr)
		wg.Wait()
	}
	if err := errors.Join(perr, serr); err != nil {
		return nil, err
	}
	return out, nil
}

// enqueuePlain creates each task as one XADD to its band: the entry is the
// whole task until a worker starts it. With durability a WAIT follows on
// the same connection.
func (q *Queue) enqueuePlain(ctx context.Context, cfg EnqueueConfig, items []*EnqueueItem) ([]EnqueueResult, error) {
	c := q.s.r
	cmds := make(rueidis.Commands, len(items))
	for i, it := range items {
		fv := c.B().Xadd().Key(q.k.Band(it.Priority)).Id("*").FieldValue().
			FieldValue(EntryType, it.Type).FieldValue(EntryPayload, rueidis.BinaryString(it.Payload)).
			FieldValue(EntryMaxAttempts, itoa(it.MaxAttempts)).FieldValue(EntryTimeout, ms(it.Timeout))
		if it.Trace != "" {
			fv = fv.FieldValue(EntryTrace, it.Trace)
		}
		cmds[i] = fv.Build()
	}
	for _, p := range cfg.Publish { // (only when CarriesEvents: see Enqueue)
		cmds = append(cmds, q.s.publishCmd(p))
	}
	var res []rueidis.RedisResult
	d := cfg.Durability
	switch {
	case d.Replicas > 0:
		res = script.DoPinned(ctx, c, d, cmds...)
		wait := res[len(res)-1]
		res = res[:len(res)-1]
		if res[len(res)-1].Error() == nil {
			if err := d.Check(wait); err != nil {
				return nil, err
			}
		}
	case len(cmds) == 1:
		res = []rueidis.RedisResult{c.Do(ctx, cmds[0])}
	default:
		res = c.DoMulti(ctx, cmds...)
	}
	out := make([]EnqueueResult, len(items))
	for i, r := range res[:len(items)] {
		eid, err := r.ToString()
		if err != nil {
			return nil, err
		}
		id, err := taskid.FromEntry(q.name, items[i].Priority, eid)
		if err != nil {
			return nil, unexpected("enqueue", eid)
		}
		out[i] = EnqueueResult{Code: Created, ID: id, Status: StatusQueued, Created: entryMs(eid)}
	}
	return out, nil
}

func (q *Queue) enqueueScripted(ctx context.Context, cfg EnqueueConfig, items []*EnqueueItem) ([]EnqueueResult, error) {
	ks := make([]string, 0, 15+2*len(items))
	ks = append(ks, q.k.Schedule(), q.k.Wakeup())
	ks = q.k.bands(ks)
	ks = append(ks, q.k.GroupWait(), q.k.GroupCount(), q.k.Info(), q.k.OrderHold(), q.k.OrderLine(), q.k.OrderIndex())
	args := make([]string, 0, 3+16*len(items))
	args = append(args, strconv.FormatInt(cfg.MaxDepth, 10), ms(cfg.IdemWindow), itoa(len(items)))
	for _, it := range items {
		if it.RandomID == "" {
			it.RandomID = taskid.New(q.name, time.Now())
		}
		_, ulid, _ := taskid.Parse(it.RandomID)
		ks = append(ks, q.k.Task(ulid))
		taskIdx, idemIdx := len(ks), 0
		if it.IdemHash != "" {
			ks = append(ks, q.k.Idempotency(it.IdemHash))
			idemIdx = len(ks)
		}
		fp := it.Fingerprint
		if fp == "" {
			fp = "-"
		}
		args = append(args, it.RandomID, itoa(taskIdx), itoa(idemIdx), fp, it.Type, rueidis.BinaryString(it.Payload),
			itoa(it.Priority), itoa(it.MaxAttempts), ms(it.Timeout), strconv.FormatInt(it.RunAt, 10), ms(it.Delay), it.Group, it.LimitKey,
			it.Trace, it.Parent, it.OrderKey)
	}
	res, err := enqueueScript.ExecDurable(ctx, q.s.r, cfg.Durability, ks, args)
	if err != nil {
		return nil, err // written, not replicated: the caller resubmits with the same key
	}
	flat, err := res.ToArray()
	if err != nil {
		return nil, err
	}
	if len(flat) != 2*len(items)+1 {
		return nil, unexpected("enqueue", flat)
	}
	now, _ := flat[len(flat)-1].AsInt64()
	out := make([]EnqueueResult, len(items))
	for i, it := range items {
		code, err := flat[2*i].AsInt64()
		if err != nil {
			return nil, unexpected("enqueue", flat[2*i])
		}
		ref, _ := flat[2*i+1].ToString()
		r := &out[i]
		switch code {
		case 1:
			r.Code, r.Status, r.Created = Created, StatusQueued, now
			r.ID, err = q.idOfRef(ref)
		case 4, 5, 6:
			r.Code, r.Status, r.ID, r.Created = Created, StatusQueued, ref, now
			r.GroupWaiting = code == 5
			r.OrderWaiting = code == 6
		case 3:
			r.Code, r.Status, r.ID, r.Created = Created, StatusScheduled, ref, now
			r.Due = it.RunAt
			if it.Delay > 0 {
				r.Due = now + it.Delay.Milliseconds()
			}
		case 2, -1:
			r.Code = EnqueueCode(code)
			r.ID, err = q.idOfRef(strings.TrimPrefix(ref, "="))
			if !strings.HasPrefix(ref, "=") {
				r.ID, err = ref, nil
			}
		case -2:
			r.Code = Full
		default:
			return nil, unexpected("enqueue", code)
		}
		if err != nil {
			return nil, unexpected("enqueue", ref)
		}
	}
	return out, nil
}

// idOfRef returns the id of the task born as entry "<band>:<entry id>".
func (q *Queue) idOfRef(ref string) (string, error) {
	b, eid, ok := strings.Cut(ref, ":")
	band, err := strconv.Atoi(b)
	if !ok || err != nil {
		return "", taskid.ErrInvalid
	}
	return taskid.FromEntry(q.name, band, eid)
}

// entryMs returns the milliseconds of stream entry id "<ms>-<seq>".
func entryMs(eid string) int64 {
	if i := strings.IndexByte(eid, '-'); i > 0 {
		return atoi64(eid[:i])
	}
	return 0
}
