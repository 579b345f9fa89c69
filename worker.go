package dtq

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"sync"
	"time"

	"github.com/dtq-dev/dtq/internal/backoff"
	"github.com/dtq-dev/dtq/internal/claim"
	"github.com/dtq-dev/dtq/internal/delivery"
	"github.com/dtq-dev/dtq/internal/keys"
)

// HandlerFunc runs one task. Its result is stored as the task's result
// (encoded as JSON). Its error decides what happens next: nil → SUCCEEDED;
// Permanent(err) → DEAD at once; Retryable(err), RetryAfter(d, err), a
// timeout, a panic and — unless WorkerConfig.UnmarkedPermanent — any other
// error → retried with backoff while attempts remain, then DEAD.
//
// ctx ends at the task's timeout, when the task is cancelled
// (context.Cause(ctx) == ErrCancelled), when another worker took the task
// over (ErrRunLost), or when the worker stops without waiting (ErrStopped).
type HandlerFunc func(ctx context.Context, t *Task) (result any, err error)

// WorkerConfig configures a Worker. The zero value of every field means its
// default.
type WorkerConfig struct {
	// Queues lists the queues the worker serves. Defaults to ["default"].
	Queues []string

	// Concurrency is the most handlers the worker runs at once. Defaults
	// to 10. While handlers are quick (under 1 ms on average), a busy
	// worker claims up to as many tasks again ahead (at least 20, at most
	// twice as many), to start as its handlers return (CONTRACT 3.3.2a1).
	Concurrency int

	// QueueWeights splits Concurrency between the queues: a queue runs at
	// most Concurrency × its weight / (the sum of the weights) of its
	// tasks at once (at least 1; the largest remainders get the rounding),
	// and its tasks never take another queue's slots, so a queue full of
	// long tasks cannot starve the others. Weights are 1 to 1000; a queue
	// left out weighs 1 (equal shares by default). With one queue, it has
	// every slot.
	QueueWeights map[string]int

	// VisibilityTimeout is how long a task whose worker stopped renewing it
	// (the process died, or lost Redis) stays claimed before another worker
	// takes it over. Workers renew their tasks every VisibilityTimeout/4.
	// All workers of a queue should use the same value. Defaults to 30s.
	VisibilityTimeout time.Duration

	// MaxCrashes is how many times a task may be taken over from a lost
	// worker before it goes DEAD (crashes do not count as attempts).
	// Defaults to 3.
	MaxCrashes int

	// UnmarkedPermanent makes errors not marked with Retryable, Permanent
	// or RetryAfter permanent (straight to DEAD). Defaults to false: they
	// are retried.
	UnmarkedPermanent bool

	// BackoffBase and BackoffMax shape the delay before retry n (1-based):
	// a uniformly random duration in [0, min(BackoffMax, BackoffBase·2^(n-1))]
	// ("full jitter"). Default to 1s and 10m.
	BackoffBase, BackoffMax time.Duration

	// ID names the worker in task history and the worker registry.
	// Defaults to "<host>-<pid>-<random>".
	ID string
}

func (c *WorkerConfig) withDefaults() (WorkerConfig, error) {
	var cfg WorkerConfig
	if c != nil {
		cfg = *c
	}
	if len(cfg.Queues) == 0 {
		cfg.Queues = []string{DefaultQueue}
	}
	seen := map[string]bool{}
	for _, q := range cfg.Queues {
		if err := keys.CheckName("queue", q); err != nil {
			return cfg, invalid("WorkerConfig.Queues", "%v", err)
		}
		if seen[q] {
			return cfg, invalid("WorkerConfig.Queues", "lists %q twice", q)
		}
		seen[q] = true
	}
	switch {
	case cfg.Concurrency < 0:
		return cfg, invalid("WorkerConfig.Concurrency", "must not be negative (got %d)", cfg.Concurrency)
	case cfg.Concurrency == 0:
		cfg.Concurrency = 10
	}
	for q, wt := range cfg.QueueWeights {
		if !seen[q] {
			return cfg, invalid("WorkerConfig.QueueWeights", "names %q, which is not among the worker's queues", q)
		}
		if wt < 1 || wt > 1000 {
			return cfg, invalid("WorkerConfig.QueueWeights", "of %q must be from 1 to 1000 (got %d)", q, wt)
		}
	}
	switch {
	case cfg.VisibilityTimeout < 0:
		return cfg, invalid("WorkerConfig.VisibilityTimeout", "must not be negative (got %v)", cfg.VisibilityTimeout)
	case cfg.VisibilityTimeout == 0:
		cfg.VisibilityTimeout = 30 * time.Second
	case cfg.VisibilityTimeout < delivery.MinVisibility:
		return cfg, invalid("WorkerConfig.VisibilityTimeout", "must be at least %v (got %v)", delivery.MinVisibility, cfg.VisibilityTimeout)
	}
	switch {
	case cfg.MaxCrashes < 0:
		return cfg, invalid("WorkerConfig.MaxCrashes", "must not be negative (got %d)", cfg.MaxCrashes)
	case cfg.MaxCrashes == 0:
		cfg.MaxCrashes = 3
	}
	if cfg.BackoffBase < 0 || cfg.BackoffMax < 0 {
		return cfg, invalid("WorkerConfig.BackoffBase", "and BackoffMax must not be negative")
	}
	if cfg.BackoffBase == 0 {
		cfg.BackoffBase = time.Second
	}
	if cfg.BackoffMax == 0 {
		cfg.BackoffMax = 10 * time.Minute
	}
	if cfg.BackoffMax < cfg.BackoffBase {
		return cfg, invalid("WorkerConfig.BackoffMax", "must be at least BackoffBase (%v < %v)", cfg.BackoffMax, cfg.BackoffBase)
	}
	if cfg.ID == "" {
		host, _ := os.Hostname()
		cfg.ID = fmt.Sprintf("%s-%d-%s", host, os.Getpid(), rand.Text()[:8])
	}
	if err := checkType(cfg.ID); err != nil {
		return cfg, invalid("WorkerConfig.ID", "must be 1-%d printable bytes", MaxTypeLen)
	}
	return cfg, nil
}

// Worker runs registered handlers on tasks of its queues. Register handlers
// with Handle, then Start it; stop it with Stop or StopAndCancel. It runs
// the task types it has handlers for only: a task of another type stays
// QUEUED for a worker that runs it, Go or HTTP (CONTRACT 3.3.1c).
type Worker struct {
	c   *Client
	cfg WorkerConfig
	log *slog.Logger

	mu       sync.Mutex
	handlers map[string]HandlerFunc
	// types are the task types it runs, those of handlers, fixed at
	// Start (typeList sorted): entries of others are given back
	// (internal/claim)
	types     claim.Types
	typeList  []string
	state     int // 0 new, 1 started, 2 stopping/stopped
	running   map[string]*execution
	recording chan struct{} // tokens: outcomes being recorded
	queues    []*workerQueue
	started   time.Time

	stopReading context.CancelFunc // readers
	stopUpkeep  context.CancelFunc // renewer, cancel listener, heartbeat, schedulers
	stopRuns    context.CancelCauseFunc
	readers     sync.WaitGroup
	runs        sync.WaitGroup
	upkeep      sync.WaitGroup
	runBase     context.Context // parent of every handler context
	// recordBase bounds the recording of outcomes: retried while the
	// worker runs and through a stop's grace period, given up a second
	// after the stop's context ends (handlers cancelled then record
	// theirs meanwhile).
	recordBase  context.Context
	stopRecords context.CancelFunc
	// stopping is closed when a stop begins: outcome retries then wait
	// less (see finish).
	stopping chan struct{}
	// unrecorded lists the tasks whose outcomes a stop gave up recording.
	unrecorded []string
	// unwatch stops watching Start's ctx.
	unwatch func() bool
	// stallClaims, set by tests only, runs on a reader when a read
	// returns claims: a worker frozen with the read's reply on its way or
	// before starting its claims (SIGSTOP, a long pause).
	stallClaims func()
	// loseReply, set by tests only: claim.RunConfig.LoseReply.
	loseReply func(context.Context) bool
	// aheadBelow is the handlers' average below which a queue claims
	// ahead (the constant aheadBelow; tests on a loaded host raise it).
	aheadBelow time.Duration
}

// NewWorker returns a worker on c's Redis and configuration. It does no
// I/O.
func NewWorker(c *Client, cfg *WorkerConfig) (*Worker, error) {
	if c == nil {
		return nil, invalid("client", "must not be nil")
	}
	wc, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	w := &Worker{
		c:          c,
		cfg:        wc,
		log:        c.log.With("worker", wc.ID),
		handlers:   map[string]HandlerFunc{},
		running:    map[string]*execution{},
		stopping:   make(chan struct{}),
		aheadBelow: claim.AheadBelow,
	}
	shares := slotShares(wc)
	tokens := 0
	for i, name := range wc.Queues {
		wq := w.newQueue(c.queue(name), shares[i])
		w.queues = append(w.queues, wq)
		tokens += wq.reader.Slots.Total()
	}
	w.recording = make(chan struct{}, tokens) // as many as tasks claimed at most
	return w, nil
}

// slotShares splits cfg.Concurrency between cfg.Queues by their weights:
// the largest remainders get the rounding, and every queue at least one
// slot.
func slotShares(cfg WorkerConfig) []int {
	weight := func(q string) int {
		if wt, ok := cfg.QueueWeights[q]; ok {
			return wt
		}
		return 1
	}
	total := 0
	for _, q := range cfg.Queues {
		total += weight(q)
	}
	shares := make([]int, len(cfg.Queues))
	rem := make([]int, len(cfg.Queues))
	left := cfg.Concurrency
	for i, q := range cfg.Queues {
		shares[i] = cfg.Concurrency * weight(q) / total
		rem[i] = cfg.Concurrency * weight(q) % total
		left -= shares[i]
	}
	for ; left > 0; left-- {
		best := 0
		for i := range rem {
			if rem[i] > rem[best] {
				best = i
			}
		}
		shares[best]++
		rem[best] = -1
	}
	for i := range shares {
		shares[i] = max(shares[i], 1)
	}
	return shares
}

// ID returns the worker's id.
func (w *Worker) ID() string { return w.cfg.ID }

// Handle registers fn for tasks of taskType. It must be called before
// Start; it panics on an invalid or already registered type.
func (w *Worker) Handle(taskType string, fn HandlerFunc) {
	if err := checkType(taskType); err != nil {
		panic(err)
	}
	if fn == nil {
		panic("dtq: nil handler for " + taskType)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.state != 0 {
		panic("dtq: Handle after Start")
	}
	if _, dup := w.handlers[taskType]; dup {
		panic("dtq: handler for " + taskType + " registered twice")
	}
	w.handlers[taskType] = fn
}

// Start starts the worker: one reader and one scheduler per queue, a
// renewer, a cancellation listener and a heartbeat. It checks the
// namespace's key layout first (a *LayoutError when this version cannot
// read it) and registers its queues (Admin.Queues lists them), then
// returns at once. ctx carries values to handlers; its end
// stops the worker as StopAndCancel does (handlers cancelled, their tasks
// retried) — for a graceful stop, call Stop before.
func (w *Worker) Start(ctx context.Context) error {
	if err := w.c.checkLayout(ctx); err != nil {
		return err
	}
	for _, q := range w.queues {
		if err := q.reader.Limits.Read(ctx); err != nil {
			return err
		}
		if err := w.c.register(ctx, q.q); err != nil { // (served: listed, and admin actions find it)
			return err
		}
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.state != 0 {
		return errors.New("dtq: worker already started")
	}
	w.state = 1
	w.started = time.Now()
	w.types, w.typeList = claim.Types{}, []string{}
	for t := range w.handlers {
		w.types[t] = true
		w.typeList = append(w.typeList, t)
	}
	slices.Sort(w.typeList)
	base := context.WithoutCancel(ctx)
	readCtx, stopReading := context.WithCancel(base)
	upkeepCtx, stopUpkeep := context.WithCancel(base)
	runBase, stopRuns := context.WithCancelCause(base)
	w.stopReading, w.stopUpkeep, w.stopRuns, w.runBase = stopReading, stopUpkeep, stopRuns, runBase
	w.recordBase, w.stopRecords = context.WithCancel(base)
	for _, q := range w.queues {
		rc := claim.RunConfig{Types: w.types, TypeList: w.typeList, AheadBelow: w.aheadBelow, Stall: w.stallClaims, LoseReply: w.loseReply}
		w.readers.Go(func() { q.reader.Run(readCtx, rc) })
		w.upkeep.Go(func() { q.schedule(upkeepCtx) })
	}
	w.upkeep.Go(func() { w.renew(upkeepCtx) })
	w.upkeep.Go(func() { w.listenCancels(upkeepCtx) })
	w.upkeep.Go(func() { w.heartbeat(upkeepCtx) })
	// The end of ctx stops the worker as StopAndCancel does (as the end
	// of a queue Subscription's ctx closes it).
	w.unwatch = context.AfterFunc(ctx, func() { _ = w.StopAndCancel(context.Background()) }) // what it reports is logged
	return nil
}

// Stop stops the worker gracefully: it stops taking tasks at once (it holds
// none it has not started), lets running handlers finish until ctx ends,
// then cancels the rest (their context's cause is ErrStopped; they are
// recorded as failed executions and retried) and waits for them. It returns
// ctx.Err() if handlers had to be cancelled.
func (w *Worker) Stop(ctx context.Context) error {
	return w.stop(ctx, false)
}

// StopAndCancel stops the worker, cancelling running handlers at once.
func (w *Worker) StopAndCancel(ctx context.Context) error {
	return w.stop(ctx, true)
}

func (w *Worker) stop(ctx context.Context, cancelNow bool) error {
	w.mu.Lock()
	if w.state != 1 {
		w.mu.Unlock()
		return nil
	}
	w.state = 2
	unwatch := w.unwatch
	w.mu.Unlock()
	if unwatch != nil {
		unwatch()
	}
	close(w.stopping)
	w.stopReading()
	w.readers.Wait()
	if cancelNow {
		w.stopRuns(ErrStopped)
	}
	// Outcomes that fail to record (Redis unreachable) are retried for the
	// whole grace period, while renewal keeps their tasks this worker's:
	// they are given up only a second after ctx ends (handlers cancelled
	// then record theirs meanwhile).
	done := make(chan struct{})
	go func() { w.runs.Wait(); close(done) }()
	var err error
	select {
	case <-done:
	case <-ctx.Done():
		err = ctx.Err()
		w.stopRuns(ErrStopped)
		late := time.AfterFunc(time.Second, w.stopRecords)
		<-done
		late.Stop()
	}
	w.stopRuns(ErrStopped)
	w.stopRecords()
	w.mu.Lock()
	unrecorded := w.unrecorded
	w.mu.Unlock()
	if len(unrecorded) > 0 {
		w.log.Warn("the grace period ended before these tasks' outcomes could be recorded; they run again once their visibility timeout passes",
			"task_ids", unrecorded)
	}
	w.stopUpkeep()
	w.upkeep.Wait()
	w.flushEvents(context.WithoutCancel(ctx))
	w.flushHistory(context.WithoutCancel(ctx))
	w.deregister(context.WithoutCancel(ctx))
	return err
}

// flushEvents publishes the worker's last events (its final outcomes')
// before Stop returns, within two seconds.
func (w *Worker) flushEvents(ctx context.Context) {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	w.c.flushEventsNow(ctx)
}

// flushHistory adds the process's history counts to Redis before Stop
// returns, within two seconds.
func (w *Worker) flushHistory(ctx context.Context) {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	w.c.history.flush(ctx)
}

// retryDelay is the backoff before retry n (1-based).
func (w *Worker) retryDelay(attempt int) time.Duration {
	b := backoff.Backoff{Base: w.cfg.BackoffBase, Max: w.cfg.BackoffMax}
	for range attempt - 1 {
		b.Next()
	}
	return b.Next()
}

// runningCount is the number of tasks this worker is running (handlers,
// outcomes being recorded, tasks claimed ahead waiting for a handler). Free
// slots are no measure of it: a reader holds slots while it waits for tasks.
func (w *Worker) runningCount() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.running)
}
