package faults

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/dtq-dev/dtq"
	"github.com/redis/rueidis"
)

// Answer is what a submission finally got.
type Answer string

// Answers of a submission.
const (
	// OK: a submit returned a task; the task must then run to its end.
	OK Answer = "ok"
	// Failed: a definite refusal (an error reply from Redis, such as OOM,
	// or a dtq validation error) after attempts none of which could have
	// written anything.
	Failed Answer = "failed"
	// Unknown: no definite answer before the deadline, or a refusal after
	// an attempt whose outcome was unknown (a timeout, a dropped
	// connection, a write not acknowledged by enough replicas).
	Unknown Answer = "unknown"
)

// Submit is one ledger entry: a submission and what came of it.
type Submit struct {
	Key       string
	Answer    Answer
	TaskID    string // the task, when OK
	Duplicate bool   // the OK answer was an idempotent replay of an earlier attempt
	First     time.Time
	Sent      time.Time // the deciding attempt was sent
	Done      time.Time // its answer arrived (or the deadline passed)
	Attempts  int
	Ambiguous int    // attempts whose outcome was unknown
	Err       string // the last error
	FirstErr  string // the first error
}

// Ledger records every submission. It is safe for concurrent use.
type Ledger struct {
	mu   sync.Mutex
	subs []Submit
}

// Add records s.
func (l *Ledger) Add(s Submit) {
	l.mu.Lock()
	l.subs = append(l.subs, s)
	l.mu.Unlock()
}

// Entries returns a copy of the entries so far.
func (l *Ledger) Entries() []Submit {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]Submit(nil), l.subs...)
}

// Count returns how many entries satisfy keep.
func (l *Ledger) Count(keep func(*Submit) bool) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for i := range l.subs {
		if keep(&l.subs[i]) {
			n++
		}
	}
	return n
}

// A Submitter submits one effect task, retrying with the same idempotency
// key until a definite answer or its deadline, and returns its ledger
// entry. LibSubmitter goes through the library, HTTPSubmitter through a
// `dtq api` process.
type Submitter interface {
	Submit(ctx context.Context, p Payload, prio int) Submit
}

// attempt is the outcome of one try of a submission.
type attempt struct {
	taskID    string // set when the try got the task
	duplicate bool
	retry     bool // try again with the same key
	ambiguous bool // the try may have written the task
	err       string
}

// Retry bounds the tries of one submission. Zero values mean the defaults.
type Retry struct {
	// AttemptTimeout bounds one try. Defaults to 5s.
	AttemptTimeout time.Duration
	// Deadline bounds all tries of one submission. Defaults to 30s.
	Deadline time.Duration
}

// submit runs tries of key until one is definite or the deadline passes.
// ctx only bounds the waits between tries: cancelling it ends the
// submission as it stands (Unknown if no try was definite).
func (r Retry) submit(ctx context.Context, key string, try func(ctx context.Context) attempt) Submit {
	attemptTimeout, deadline := r.AttemptTimeout, r.Deadline
	if attemptTimeout == 0 {
		attemptTimeout = 5 * time.Second
	}
	if deadline == 0 {
		deadline = 30 * time.Second
	}
	sub := Submit{Key: key, First: time.Now()}
	end := sub.First.Add(deadline)
	pause := 20 * time.Millisecond
	for {
		sub.Attempts++
		sub.Sent = time.Now()
		actx, cancel := context.WithTimeout(context.WithoutCancel(ctx), attemptTimeout)
		a := try(actx)
		cancel()
		sub.Done = time.Now()
		if a.taskID != "" {
			sub.Answer, sub.TaskID, sub.Duplicate, sub.Err = OK, a.taskID, a.duplicate, ""
			return sub
		}
		sub.Err = a.err
		if sub.FirstErr == "" {
			sub.FirstErr = a.err
		}
		if a.ambiguous {
			sub.Ambiguous++
		}
		if !a.retry {
			sub.Answer = Failed
			if sub.Ambiguous > 0 {
				sub.Answer = Unknown
			}
			return sub
		}
		if time.Now().Add(pause).After(end) || ctx.Err() != nil {
			sub.Answer = Unknown
			return sub
		}
		select {
		case <-time.After(pause):
		case <-ctx.Done():
		}
		pause = min(2*pause, 500*time.Millisecond)
	}
}

// LibSubmitter submits through the library's Client.Enqueue.
type LibSubmitter struct {
	Client *dtq.Client
	Queue  string
	Retry  Retry
}

// Submit submits p (its Key is the idempotency key) with priority prio.
func (s *LibSubmitter) Submit(ctx context.Context, p Payload, prio int) Submit {
	opts := &dtq.EnqueueOpts{Queue: s.Queue, Priority: dtq.Ptr(prio), MaxAttempts: dtq.MaxMaxAttempts, IdempotencyKey: p.Key}
	return s.Retry.submit(ctx, p.Key, func(ctx context.Context) attempt {
		res, err := s.Client.Enqueue(ctx, TaskType, p, opts)
		if err == nil {
			return attempt{taskID: res.Task.ID, duplicate: res.Duplicate}
		}
		retry, ambiguous := Classify(err)
		return attempt{retry: retry, ambiguous: ambiguous, err: err.Error()}
	})
}

// Classify tells how a submit error is handled: whether to try again
// (with the same idempotency key), and whether the failed attempt may have
// written the task anyway.
//
//   - dtq's validation, size and idempotency-conflict errors: final,
//     nothing written.
//   - An error reply from Redis: nothing was written (CONTRACT 2.2.5; a
//     script refused for OOM is refused before its first write). OOM is
//     final — a clear refusal; the others (LOADING, READONLY, MASTERDOWN,
//     CLUSTERDOWN, TRYAGAIN, MOVED, …) are retried.
//   - ErrQueueFull: retried, nothing written.
//   - ErrNotReplicated (durable mode): retried; the master has the task.
//   - Anything else (a timeout, a dropped or refused connection): retried,
//     outcome unknown.
func Classify(err error) (retry, ambiguous bool) {
	switch {
	case errors.Is(err, dtq.ErrInvalid), errors.Is(err, dtq.ErrTooLarge), errors.Is(err, dtq.ErrIdempotencyConflict):
		return false, false
	case errors.Is(err, dtq.ErrQueueFull):
		return true, false
	case errors.Is(err, dtq.ErrNotReplicated):
		return true, true
	}
	var rerr *rueidis.RedisError
	if errors.As(err, &rerr) {
		return !IsOOM(err), false
	}
	return true, true
}

// IsOOM reports whether err is Redis refusing a write over maxmemory.
func IsOOM(err error) bool {
	return err != nil && strings.Contains(err.Error(), "OOM command not allowed")
}

// Load submits tasks at a steady rate and records them in its Ledger.
type Load struct {
	Submitter Submitter
	Ledger    *Ledger
	// Prefix starts every key ("<prefix>-<n>").
	Prefix string
	// Rate is the submissions started per second. Defaults to 50.
	Rate int
	// Concurrency bounds the submissions in progress: while all are stuck
	// (Redis down), no more start. Defaults to 32.
	Concurrency int
	// Payload returns the n-th payload (Key is set by Load). Defaults to
	// a 50-300 ms sleep.
	Payload func(n int) Payload
	// OK, when set, is called with each submission answered OK and its
	// payload (the scenario's reaction: a signal).
	OK func(p Payload, s Submit)
}

// Run submits until ctx ends, then waits for the submissions in progress
// (each bounded by the Submitter's deadline). Priorities cycle through 0-9.
func (l *Load) Run(ctx context.Context) {
	rate, conc := l.Rate, l.Concurrency
	if rate <= 0 {
		rate = 50
	}
	if conc <= 0 {
		conc = 32
	}
	payload := l.Payload
	if payload == nil {
		payload = func(n int) Payload { return Payload{SleepMS: 50 + n*37%250} }
	}
	slots := make(chan struct{}, conc)
	var wg sync.WaitGroup
	tick := time.NewTicker(time.Second / time.Duration(rate))
	defer tick.Stop()
	for n := 0; ; n++ {
		select {
		case <-ctx.Done():
			wg.Wait()
			return
		case <-tick.C:
		}
		select {
		case slots <- struct{}{}:
		case <-ctx.Done():
			wg.Wait()
			return
		}
		p := payload(n)
		p.Key = l.Prefix + "-" + strconv.Itoa(n)
		wg.Go(func() {
			defer func() { <-slots }()
			sub := l.Submitter.Submit(context.WithoutCancel(ctx), p, n%10)
			l.Ledger.Add(sub)
			if l.OK != nil && sub.Answer == OK {
				l.OK(p, sub)
			}
		})
	}
}
