package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/dtq-dev/dtq"
	"github.com/dtq-dev/dtq/conn"
	"github.com/dtq-dev/dtq/internal/redistest"
)

const (
	queueName = "fair"
	taskType  = "work"
	chunk     = 500 // tasks per EnqueueMany call
)

// options are the harness's settings.
type options struct {
	backend     string        // "redis": a redis-server of its own per run; "embedded": memory://
	scale       float64       // multiplies every scenario's counts and durations
	concurrency int           // the worker's
	handler     time.Duration // each handler sleeps this long
	only        string        // run only the scenarios whose name contains it
	timeout     time.Duration // bound on one run
	progress    func(format string, args ...any)
}

// start is one handler start: a task of a tenant, when (since the run began).
type start struct {
	tenant, seq int
	at          time.Duration
}

// runData is what one scenario did in one mode (groups or FIFO): when each
// task was submitted and when each started.
type runData struct {
	sc        *scenario
	groups    bool
	submitted [][]time.Duration // per tenant, per task: when its submission call began
	starts    []start           // first start of each task, in order of time
	began     time.Duration     // the worker's start
	t0        time.Duration     // the arrivals begin (the worker's start, plus the warmup)
	elapsed   time.Duration
}

// recorder is the handler: it notes each start and sleeps.
type recorder struct {
	base  time.Time
	sleep time.Duration

	mu      sync.Mutex
	starts  []start
	seen    [][]bool
	started []int // per tenant
}

func newRecorder(sc *scenario, sleep time.Duration) *recorder {
	r := &recorder{base: time.Now(), sleep: sleep, seen: make([][]bool, len(sc.tenants)), started: make([]int, len(sc.tenants))}
	for i := range sc.tenants {
		r.seen[i] = make([]bool, sc.tenants[i].tasks(sc.arrivals))
	}
	return r
}

func (r *recorder) now() time.Duration { return time.Since(r.base) }

func (r *recorder) handle(_ context.Context, t *dtq.Task) (any, error) {
	at := r.now()
	var p [2]int
	if err := json.Unmarshal(t.Payload, &p); err != nil {
		return nil, dtq.Permanent(err)
	}
	r.mu.Lock()
	if p[0] < 0 || p[0] >= len(r.seen) || p[1] < 0 || p[1] >= len(r.seen[p[0]]) {
		r.mu.Unlock()
		return nil, dtq.Permanent(fmt.Errorf("payload %s names no task of the run", t.Payload))
	}
	if !r.seen[p[0]][p[1]] { // a task run again (a retry) counts at its first start
		r.seen[p[0]][p[1]] = true
		r.started[p[0]]++
		r.starts = append(r.starts, start{tenant: p[0], seq: p[1], at: at})
	}
	r.mu.Unlock()
	time.Sleep(r.sleep)
	return nil, nil
}

// counts returns how many tasks of each tenant have started.
func (r *recorder) counts() []int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]int(nil), r.started...)
}

// connect returns a connection to a fresh backend and how to close both.
func connect(ctx context.Context, backend string) (*conn.Redis, func(), error) {
	switch backend {
	case "redis":
		srv, err := redistest.StartServer(nil)
		if err != nil {
			return nil, nil, err
		}
		rc, err := dtq.Connect(ctx, "redis://"+srv.Addr)
		if err != nil {
			srv.Close()
			return nil, nil, err
		}
		return rc, func() { rc.Close(); srv.Close() }, nil
	case "embedded":
		rc, err := dtq.Connect(ctx, "memory://")
		if err != nil {
			return nil, nil, err
		}
		return rc, rc.Close, nil
	}
	return nil, nil, fmt.Errorf("unknown backend %q (redis or embedded)", backend)
}

// submitter submits a run's tasks and notes when.
type submitter struct {
	c         *dtq.Client
	rec       *recorder
	opts      []*dtq.EnqueueOpts // per tenant
	submitted [][]time.Duration
}

type item struct{ tenant, seq int }

// submit submits items in order, chunk by chunk; each task's submission
// time is when its chunk's call began.
func (s *submitter) submit(ctx context.Context, items []item) error {
	for len(items) > 0 {
		part := items[:min(len(items), chunk)]
		items = items[len(part):]
		reqs := make([]dtq.EnqueueRequest, len(part))
		for i, it := range part {
			payload := json.RawMessage("[" + strconv.Itoa(it.tenant) + "," + strconv.Itoa(it.seq) + "]")
			reqs[i] = dtq.EnqueueRequest{Type: taskType, Payload: payload, Opts: s.opts[it.tenant]}
		}
		at := s.rec.now()
		for _, it := range part {
			s.submitted[it.tenant][it.seq] = at
		}
		res, err := s.c.EnqueueMany(ctx, reqs)
		if err != nil {
			return err
		}
		for _, r := range res {
			if r.Err != nil {
				return r.Err
			}
		}
	}
	return nil
}

// preload lists the backlogs submitted before the worker starts, in the
// scenario's order.
func preload(sc *scenario) []item {
	var items []item
	next := make([]int, len(sc.tenants))
	for {
		added := false
		for ti := range sc.tenants {
			t := &sc.tenants[ti]
			if !t.backlogged() || t.late {
				continue
			}
			take := t.backlog - next[ti]
			if sc.rounds > 0 {
				take = min(take, sc.rounds)
			}
			for range take {
				items = append(items, item{ti, next[ti]})
				next[ti]++
				added = true
			}
		}
		if !added {
			return items
		}
	}
}

// runOne runs sc in one mode on a fresh backend: it submits the preloaded
// backlogs, starts the worker, lets it serve them for the warmup, begins the
// arrivals, and stops once every watched task has started and the contended
// period is over (measure.go).
func runOne(ctx context.Context, o *options, sc *scenario, groups bool) (*runData, error) {
	rc, closeBackend, err := connect(ctx, o.backend)
	if err != nil {
		return nil, err
	}
	defer closeBackend()
	c, err := dtq.NewClient(rc, nil)
	if err != nil {
		return nil, err
	}
	rec := newRecorder(sc, o.handler)
	s := &submitter{c: c, rec: rec, opts: make([]*dtq.EnqueueOpts, len(sc.tenants)), submitted: make([][]time.Duration, len(sc.tenants))}
	for i := range sc.tenants {
		t := &sc.tenants[i]
		s.opts[i] = &dtq.EnqueueOpts{Queue: queueName}
		s.submitted[i] = make([]time.Duration, t.tasks(sc.arrivals))
		if !groups {
			continue
		}
		s.opts[i].Group = t.name
		if t.groupWeight() != 1 {
			if err := dtq.NewAdmin(c).SetGroupWeight(ctx, queueName, t.name, t.groupWeight()); err != nil {
				return nil, err
			}
		}
	}
	if err := s.submit(ctx, preload(sc)); err != nil {
		return nil, fmt.Errorf("preload: %w", err)
	}
	w, err := dtq.NewWorker(c, &dtq.WorkerConfig{Queues: []string{queueName}, Concurrency: o.concurrency})
	if err != nil {
		return nil, err
	}
	w.Handle(taskType, rec.handle)
	began := rec.now()
	if err := w.Start(ctx); err != nil {
		return nil, err
	}
	stopped := false
	defer func() {
		if !stopped {
			_ = w.StopAndCancel(context.WithoutCancel(ctx)) // the run failed already: its error is the one to report
		}
	}()
	select {
	case <-time.After(sc.warmup):
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	t0 := rec.now()
	if sc.warmup == 0 {
		t0 = began
	}
	arrived := make(chan error, 1)
	go func() { arrived <- arrive(ctx, s, sc, rec.base.Add(t0)) }()

	if err := waitDone(ctx, o, sc, rec, arrived, t0); err != nil {
		return nil, err
	}
	stopped = true
	stopCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	if err := w.Stop(stopCtx); err != nil {
		return nil, fmt.Errorf("stop the worker: %w", err)
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	return &runData{sc: sc, groups: groups, submitted: s.submitted, starts: sortStarts(rec.starts), began: began, t0: t0, elapsed: rec.now()}, nil
}

// arrive submits the late backlogs at once and every burst at its time,
// one goroutine per tenant, from begin on.
func arrive(ctx context.Context, s *submitter, sc *scenario, begin time.Time) error {
	var wg sync.WaitGroup
	errs := make([]error, len(sc.tenants))
	for ti := range sc.tenants {
		t := &sc.tenants[ti]
		switch {
		case t.late:
			items := make([]item, t.backlog)
			for k := range items {
				items[k] = item{ti, k}
			}
			wg.Go(func() { errs[ti] = s.submit(ctx, items) })
		case !t.backlogged():
			wg.Go(func() {
				seq := 0
				for _, off := range t.bursts(sc.arrivals) {
					select {
					case <-time.After(time.Until(begin.Add(off))):
					case <-ctx.Done():
						errs[ti] = ctx.Err()
						return
					}
					items := make([]item, t.burst)
					for k := range items {
						items[k] = item{ti, seq}
						seq++
					}
					if errs[ti] = s.submit(ctx, items); errs[ti] != nil {
						return
					}
				}
			})
		}
	}
	wg.Wait()
	return errors.Join(errs...)
}

// waitDone waits until the arrivals are over, every watched task has
// started, and the contended period has ended: the arrivals' time is over
// or a backlogged tenant has no task left to start.
func waitDone(ctx context.Context, o *options, sc *scenario, rec *recorder, arrived <-chan error, t0 time.Duration) error {
	deadline := time.After(o.timeout)
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	arrivalsOver := false
	for {
		select {
		case err := <-arrived:
			if err != nil {
				return fmt.Errorf("arrivals: %w", err)
			}
			arrivalsOver = true
		case <-tick.C:
		case <-deadline:
			return fmt.Errorf("not done after %v (started per tenant: %v)", o.timeout, rec.counts())
		case <-ctx.Done():
			return ctx.Err()
		}
		if !arrivalsOver {
			continue
		}
		counts := rec.counts()
		watchedDone, emptied := true, sc.streaming() && rec.now() >= t0+sc.arrivals
		for i := range sc.tenants {
			t := &sc.tenants[i]
			all := counts[i] == t.tasks(sc.arrivals)
			if t.watched && !all {
				watchedDone = false
			}
			if t.backlogged() && all {
				emptied = true
			}
		}
		if watchedDone && emptied {
			return nil
		}
	}
}
