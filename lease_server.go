package dtq

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/dtq-dev/dtq/internal/claim"
	"github.com/dtq-dev/dtq/internal/scheduler"
)

// LeaseServer hands out leases: tasks run by workers outside this process
// (over HTTP, in any language), on the delivery the Go Worker uses. It
// keeps, per queue it serves, the reclaim cursors and limit state of its
// leases, and runs the queue's scheduler while holders poll it, so that
// retries and delayed tasks become due with no Go worker of the queue.
//
// Build it with NewLeaseServer, Start it, and Stop it when done: Stop ends
// the schedulers it started. Lease needs a started server; ExtendLease,
// CompleteLease, FailLease and LeaseProgress work before Start and after
// Stop, so holders can settle what they hold while a process shuts down.
type LeaseServer struct {
	*engine
	client  *Client // (a leased task's child is submitted through it)
	holders *holders
	idle    time.Duration
	owner   string // its name as a lease scheduler's owner

	mu      sync.Mutex
	ctx     context.Context // the schedulers run under it; nil until Start
	cancel  context.CancelFunc
	stopped bool
	queues  map[string]*leaseQueue
	wg      sync.WaitGroup // its scheduler goroutines
}

// LeaseServerConfig configures a LeaseServer; the zero value is the
// default.
type LeaseServerConfig struct {
	// SchedulerIdle is how long after its last Lease a queue's scheduler
	// keeps running in this server (default one minute).
	SchedulerIdle time.Duration
	// HolderTTL is how long a lease holder stays listed among the workers
	// (Admin.Workers) after its last Lease call or extension (default one
	// minute).
	HolderTTL time.Duration
}

// NewLeaseServer returns a LeaseServer on c's connection. It does no I/O
// and starts nothing.
func NewLeaseServer(c *Client, cfg *LeaseServerConfig) (*LeaseServer, error) {
	var o LeaseServerConfig
	if cfg != nil {
		o = *cfg
	}
	switch {
	case o.SchedulerIdle < 0:
		return nil, invalid("LeaseServerConfig.SchedulerIdle", "must not be negative (got %v)", o.SchedulerIdle)
	case o.SchedulerIdle == 0:
		o.SchedulerIdle = time.Minute
	}
	switch {
	case o.HolderTTL < 0:
		return nil, invalid("LeaseServerConfig.HolderTTL", "must not be negative (got %v)", o.HolderTTL)
	case o.HolderTTL == 0:
		o.HolderTTL = time.Minute
	}
	host, _ := os.Hostname()
	return &LeaseServer{engine: c.engine, client: c, holders: newHolders(o.HolderTTL), idle: o.SchedulerIdle, queues: map[string]*leaseQueue{},
		owner: fmt.Sprintf("%s-%d-%s", host, os.Getpid(), rand.Text()[:8])}, nil
}

// Start makes s serve leases. The schedulers it runs stop when ctx is
// done or at Stop. Starting twice, or after Stop, is an error.
func (s *LeaseServer) Start(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ctx != nil || s.stopped {
		return errors.New("dtq: the lease server was started already")
	}
	s.ctx, s.cancel = context.WithCancel(ctx)
	return nil
}

// Stop ends s: later Lease calls fail with ErrLeaseServerStopped, and the
// schedulers it runs stop. It waits for them until ctx is done. Leases
// handed out stay valid: their holders settle them as before.
func (s *LeaseServer) Stop(ctx context.Context) error {
	s.mu.Lock()
	s.stopped = true
	if s.cancel != nil {
		s.cancel()
	}
	s.mu.Unlock()
	done := make(chan struct{})
	go func() { s.wg.Wait(); close(done) }()
	hctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
	s.history.flush(hctx) // the counts of the leases' outcomes
	cancel()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("dtq: the lease server's schedulers did not stop in time: %w", ctx.Err())
	}
}

// running reports whether s serves leases.
func (s *LeaseServer) running() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.ctx != nil && !s.stopped && s.ctx.Err() == nil
}

// leaseQueue is a LeaseServer's state of one queue: its claimer, and
// the scheduler it runs while holders poll.
type leaseQueue struct {
	claimer *claim.Claimer
	mu      sync.Mutex
	// leased is when a Lease call last read the queue; while it is recent
	// the queue's scheduler runs in this server (schedStop stops it), so
	// that retries and delayed tasks become due with no Go worker of the
	// queue.
	leased    time.Time
	schedStop context.CancelFunc
}

// claimer returns the claimer of queue for leases.
func (s *LeaseServer) claimer(queue string) *claim.Claimer {
	s.mu.Lock()
	defer s.mu.Unlock()
	lq := s.queues[queue]
	if lq == nil {
		q := s.queue(queue)
		lq = &leaseQueue{}
		// Lease calls name their own timeout; a lease survives
		// defaultMaxCrashes takeovers, as a Go worker's task by default.
		lq.claimer = s.newClaimer(q, DefaultLeaseTime, defaultMaxCrashes, func() { s.keepScheduling(q, lq) })
		s.queues[queue] = lq
	}
	return lq.claimer
}

// keepScheduling runs q's scheduler in s until no Lease read q for s.idle
// or s stops (with other processes' schedulers, the leader lock keeps one
// at work).
//
// Lock order: s.mu, then st.mu (stopWhenIdle takes st.mu alone).
func (s *LeaseServer) keepScheduling(q *queueState, st *leaseQueue) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ctx == nil || s.stopped {
		return
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	st.leased = time.Now()
	if st.schedStop != nil {
		return
	}
	ctx, stop := context.WithCancel(s.ctx)
	st.schedStop = stop
	sched := &scheduler.Scheduler{Queue: q.store, Owner: "leases-" + s.owner, Retention: s.keepOthers(), MaxFinished: s.cfg.MaxFinished,
		MaxDead: s.cfg.DeadLetterMaxLen, Log: s.log.With("component", "scheduler", "queue", q.name), TraceTick: s.traceTick(q.name)}
	s.wg.Add(2)
	go func() {
		defer s.wg.Done()
		sched.Run(ctx)
	}()
	go func() {
		defer s.wg.Done()
		s.stopWhenIdle(ctx, st)
	}()
}

// stopWhenIdle stops st's scheduler once no Lease read its queue for
// s.idle; it returns then, or when ctx is done.
func (s *LeaseServer) stopWhenIdle(ctx context.Context, st *leaseQueue) {
	t := time.NewTicker(s.idle / 4)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		st.mu.Lock()
		idle := time.Since(st.leased) > s.idle
		if idle {
			st.schedStop()
			st.schedStop = nil
		}
		st.mu.Unlock()
		if idle {
			return
		}
	}
}
