package dtq

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/dtq-dev/dtq/internal/claim"
	"github.com/dtq-dev/dtq/internal/delivery"
	"github.com/dtq-dev/dtq/internal/store"
	"github.com/dtq-dev/dtq/internal/taskid"
)

// Leases run tasks outside this process — in a worker of any language,
// over HTTP — on the delivery the Go Worker uses: a lease is a claimed and
// started execution of a task, fenced by its run number as a Go worker's
// is. Its holder extends it within its timeout (the answer says when a
// cancellation was requested), then completes or fails it; a holder that
// stops extending it (it crashed) loses it after the timeout, and the task
// is taken over — by a Go worker or another lease — as from a lost worker,
// its crash counted apart from attempts.

// Limits of leases.
const (
	MaxLeaseBatch    = 100              // tasks in one Lease call
	MaxLeaseWait     = 30 * time.Second // the longest long-poll
	DefaultLeaseTime = 30 * time.Second // a lease's timeout when the request names none
	MaxLeaseTime     = 12 * time.Hour
)

// LeaseRequest is the input of Lease.
type LeaseRequest struct {
	// Worker names the holder (its tasks' Worker is "http:<Worker>"); a
	// name of 1-128 printable bytes.
	Worker string
	// Queues are read in order, the first with tasks first; defaults to
	// DefaultQueue.
	Queues []string
	// Types, when not empty, are the task types the holder runs: tasks of
	// other types are given back to the tail of their band.
	Types []string
	// Max is how many tasks to lease at most (1-MaxLeaseBatch; 0: 1).
	Max int
	// Wait is how long to wait for a first task when none is ready (0-
	// MaxLeaseWait): Lease returns as soon as one is leased.
	Wait time.Duration
	// Timeout is how long a lease lives unless extended (default
	// DefaultLeaseTime): its holder extends it well within it (every
	// Timeout/4 is the Go worker's rhythm). It is also the idle time after
	// which Lease takes over tasks of lost workers. Give every process
	// serving a queue the same: a Go worker whose VisibilityTimeout is
	// shorter takes over a lease idle that long.
	Timeout time.Duration

	// What the holder says of itself, for the worker registry (a lease
	// holder is listed by Admin.Workers as "http:<Worker>" while it keeps
	// polling): Library is what it runs on ("dtq-python/0.1.0"; 0-64
	// printable bytes), Concurrency how many tasks it runs at once (0:
	// Max), Busy how many it runs now; Host where it runs (the HTTP API
	// sets the client's address).
	Library, Host     string
	Concurrency, Busy int
}

// Lease is one leased task.
type Lease struct {
	// Token names the lease in ExtendLease, CompleteLease and FailLease.
	Token    string    `json:"lease"`
	Deadline time.Time `json:"deadline"` // lost unless extended by then
	Task     *Task     `json:"task"`
}

// LeaseFailure is how a leased task failed (FailLease).
type LeaseFailure struct {
	Error string
	// Permanent sends the task DEAD at once; otherwise it is retried (after
	// RetryAfter when set, else the default backoff) until its attempts
	// run out.
	Permanent  bool
	RetryAfter time.Duration
}

// checkLeaseRequest validates r and fills in its defaults.
func checkLeaseRequest(r LeaseRequest) (LeaseRequest, error) {
	if r.Worker == "" || len(r.Worker) > 128 || !utf8.ValidString(r.Worker) || strings.ContainsAny(r.Worker, "|\n\t") {
		return r, invalid("worker", "must be 1-128 bytes of UTF-8 without |, tabs or newlines (got %q)", r.Worker)
	}
	if len(r.Queues) == 0 {
		r.Queues = []string{DefaultQueue}
	}
	for _, q := range r.Queues {
		if err := checkQueue("queues", q); err != nil {
			return r, err
		}
	}
	for _, t := range r.Types {
		if err := checkType(t); err != nil {
			return r, err
		}
	}
	switch {
	case r.Max == 0:
		r.Max = 1
	case r.Max < 0 || r.Max > MaxLeaseBatch:
		return r, invalid("max", "must be 1-%d (got %d)", MaxLeaseBatch, r.Max)
	}
	if len(r.Library) > 64 || !printable(r.Library) {
		return r, invalid("library", "must be at most 64 printable bytes (got %q)", r.Library)
	}
	if r.Concurrency < 0 || r.Concurrency > 100000 || r.Busy < 0 || r.Busy > 100000 {
		return r, invalid("concurrency", "and busy must be 0-100000 (got %d and %d)", r.Concurrency, r.Busy)
	}
	if r.Concurrency == 0 {
		r.Concurrency = r.Max
	}
	if r.Wait < 0 || r.Wait > MaxLeaseWait {
		return r, invalid("wait", "must be 0-%v (got %v)", MaxLeaseWait, r.Wait)
	}
	switch {
	case r.Timeout == 0:
		r.Timeout = DefaultLeaseTime
	case r.Timeout < delivery.MinVisibility || r.Timeout > MaxLeaseTime:
		return r, invalid("lease_timeout", "must be %v-%v (got %v)", delivery.MinVisibility, MaxLeaseTime, r.Timeout)
	}
	return r, nil
}

// Lease claims and starts up to r.Max tasks of r.Queues for the holder
// r.Worker, waiting up to r.Wait for a first one; none is no error. Under
// a queue's limits it leases what they grant, as a Go worker would. On a
// server not running (not started, or stopped) it fails with
// ErrLeaseServerStopped.
func (s *LeaseServer) Lease(ctx context.Context, r LeaseRequest) ([]*Lease, error) {
	r, err := checkLeaseRequest(r)
	if err != nil {
		return nil, err
	}
	if !s.running() {
		return nil, ErrLeaseServerStopped
	}
	if err := s.checkLayout(ctx); err != nil {
		return nil, err
	}
	var types claim.Types
	if len(r.Types) > 0 {
		types = claim.Types{}
		for _, t := range r.Types {
			types[t] = true
		}
	}
	consumer := "http:" + r.Worker
	s.holders.record(ctx, s.engine, r)
	cs := make([]*claim.Claimer, len(r.Queues))
	for i, name := range r.Queues {
		cs[i] = s.claimer(name)
	}
	claims, err := claim.Lease(ctx, cs, claim.Poll{Consumer: consumer, Max: r.Max, Types: types, TTL: r.Timeout, Wait: r.Wait})
	deadline := time.Now().Add(r.Timeout)
	out := make([]*Lease, len(claims))
	for i := range claims {
		c := &claims[i]
		e, sd := &c.Entry, c.Started
		tok := leaseToken{queue: c.Queue, id: e.TaskID, band: e.Band, entry: e.EntryID, run: sd.Run,
			attempt: sd.Attempt, crashes: sd.Crashes, started: sd.Started, consumer: consumer, timeout: r.Timeout,
			limit: c.Limit, scopes: e.Scopes, leased: c.Leased}
		out[i] = &Lease{Token: tok.String(), Deadline: deadline, Task: startedTask(c, consumer)}
	}
	return out, err
}

// defaultMaxCrashes is WorkerConfig.MaxCrashes's default, which leases
// apply.
const defaultMaxCrashes = 3

// leaseToken is what a lease's token says: the execution it fences.
type leaseToken struct {
	queue, id, entry, started, consumer string
	band, run, attempt, crashes         int
	timeout                             time.Duration
	// limit is the queue-wide concurrency lease the execution holds ("":
	// none); scopes are the scoped limits it is under, leased those whose
	// leases it holds.
	limit          string
	scopes, leased []string
}

// Lease token versions: L1 (no limits) and L2 (with the limits' leases).
const (
	leaseTokenVersion  = "L1"
	leaseTokenVersion2 = "L2"
)

func (l leaseToken) String() string {
	f := []string{leaseTokenVersion, l.id, strconv.Itoa(l.band), l.entry, strconv.Itoa(l.run), strconv.Itoa(l.attempt),
		strconv.Itoa(l.crashes), l.started, strconv.FormatInt(l.timeout.Milliseconds(), 10)}
	if l.limit != "" || len(l.scopes) > 0 {
		// The scopes, a leased one marked with + (scopes start t: or k:).
		marked := make([]string, len(l.scopes))
		for i, sc := range l.scopes {
			marked[i] = sc
			if slices.Contains(l.leased, sc) {
				marked[i] = "+" + sc
			}
		}
		f[0] = leaseTokenVersion2
		f = append(f, l.limit, base64.RawURLEncoding.EncodeToString([]byte(strings.Join(marked, "\n"))))
	}
	raw := strings.Join(append(f, l.consumer), "|")
	return base64.RawURLEncoding.EncodeToString([]byte(raw))
}

// parseLeaseToken reads a token; a malformed one is ErrLeaseLost's kin,
// a ValidationError of "lease".
func parseLeaseToken(s string) (leaseToken, error) {
	bad := invalid("lease", "is not a lease token")
	raw, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil || len(s) > 2048 {
		return leaseToken{}, bad
	}
	p := strings.SplitN(string(raw), "|", 12)
	switch {
	case len(p) >= 10 && p[0] == leaseTokenVersion:
		p = strings.SplitN(string(raw), "|", 10)
	case len(p) == 12 && p[0] == leaseTokenVersion2:
	default:
		return leaseToken{}, bad
	}
	queue, _, err := taskid.Parse(p[1])
	if err != nil {
		return leaseToken{}, bad
	}
	l := leaseToken{queue: queue, id: p[1], entry: p[3], started: p[7], consumer: p[len(p)-1]}
	if len(p) == 12 {
		scopes, err := base64.RawURLEncoding.DecodeString(p[10])
		if err != nil {
			return leaseToken{}, bad
		}
		l.limit = p[9]
		if len(scopes) > 0 {
			for _, sc := range strings.Split(string(scopes), "\n") {
				if leased, ok := strings.CutPrefix(sc, "+"); ok {
					sc = leased
					l.leased = append(l.leased, sc)
				}
				l.scopes = append(l.scopes, sc)
			}
		}
	}
	nums := []*int{&l.band, &l.run, &l.attempt, &l.crashes}
	for i, f := range []string{p[2], p[4], p[5], p[6]} {
		n, err := strconv.Atoi(f)
		if err != nil || n < 0 {
			return leaseToken{}, bad
		}
		*nums[i] = n
	}
	ms, err := strconv.ParseInt(p[8], 10, 64)
	if err != nil || l.band >= store.Bands || ms <= 0 || !strings.HasPrefix(l.consumer, "http:") || !store.ValidEntryID(l.entry) {
		return leaseToken{}, bad
	}
	l.timeout = time.Duration(ms) * time.Millisecond
	return l, nil
}

// ExtendLease renews lease token for its timeout again; cancelRequested
// says that the task's cancellation was requested (its holder should stop,
// then complete or fail it: it ends CANCELLED). A lease no longer held is
// ErrLeaseLost.
func (s *LeaseServer) ExtendLease(ctx context.Context, token string) (deadline time.Time, cancelRequested bool, err error) {
	l, err := parseLeaseToken(token)
	if err != nil {
		return time.Time{}, false, err
	}
	res, err := s.queue(l.queue).store.Renew(ctx, l.consumer, []store.RenewItem{{TaskID: l.id, Band: l.band, EntryID: l.entry, Run: l.run, Started: l.started}})
	if err != nil {
		return time.Time{}, false, err
	}
	switch res[0] {
	case store.Renewed, store.Cancelled:
		if err := s.renewLeaseLimits(ctx, l); err != nil {
			return time.Time{}, false, err
		}
		s.holders.touch(ctx, s.engine, l.consumer)
		return time.Now().Add(l.timeout), res[0] == store.Cancelled, nil
	}
	return time.Time{}, false, ErrLeaseLost
}

// CompleteLease records that lease token's task succeeded with result (a
// JSON value; nil is null) and returns the task. A lease no longer held is
// ErrLeaseLost (nothing changed). Recording a lease's outcome again (a
// retry after a lost answer) changes nothing and answers the task.
func (s *LeaseServer) CompleteLease(ctx context.Context, token string, result json.RawMessage) (*Task, error) {
	return s.endOne(ctx, LeaseOutcome{Token: token, Result: result})
}

// FailLease records that lease token's task failed: retried (after
// f.RetryAfter, else the default backoff) while it has attempts left,
// else — or with f.Permanent — DEAD. It returns the task. A lease no
// longer held is ErrLeaseLost (nothing changed).
func (s *LeaseServer) FailLease(ctx context.Context, token string, f LeaseFailure) (*Task, error) {
	return s.endOne(ctx, LeaseOutcome{Token: token, Failure: &f})
}
