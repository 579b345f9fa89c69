package bench

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// tracker records, per task, when it was submitted, started and done. The
// three may be reported in any order (a fast worker starts a task before
// its submit call has returned).
type tracker struct {
	mu    sync.Mutex
	tasks map[string]*trace
}

type trace struct {
	submit, start, end time.Time
	done               chan struct{}
}

func newTracker(n int) *tracker { return &tracker{tasks: make(map[string]*trace, n)} }

func (t *tracker) get(id string) *trace {
	tr := t.tasks[id]
	if tr == nil {
		tr = &trace{done: make(chan struct{})}
		t.tasks[id] = tr
	}
	return tr
}

func (t *tracker) expect(id string, submit time.Time) {
	t.mu.Lock()
	t.get(id).submit = submit
	t.mu.Unlock()
}

func (t *tracker) started(id string, at time.Time) {
	t.mu.Lock()
	if tr := t.get(id); tr.start.IsZero() {
		tr.start = at
	}
	t.mu.Unlock()
}

func (t *tracker) done(id string, at time.Time) {
	t.mu.Lock()
	if tr := t.get(id); tr.end.IsZero() {
		tr.end = at
		close(tr.done)
	}
	t.mu.Unlock()
}

// wait waits until id is done or d passes; it reports whether it is done.
func (t *tracker) wait(ctx context.Context, id string, d time.Duration) bool {
	t.mu.Lock()
	ch := t.get(id).done
	t.mu.Unlock()
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-ch:
		return true
	case <-timer.C:
	case <-ctx.Done():
	}
	return false
}

func (t *tracker) reset() {
	t.mu.Lock()
	clear(t.tasks)
	t.mu.Unlock()
}

// run submits n tasks with submit — one at a time, each after the previous
// is done (perSec 0), or perSec a second on a fixed schedule whatever the
// answers (so a slow phase is not hidden) — then reports the latencies.
func (t *tracker) run(ctx context.Context, name string, n int, perSec float64,
	submit func(context.Context) (string, time.Time, error)) (Result, error) {
	var ids []string
	var idsMu sync.Mutex
	begin := time.Now()
	if perSec <= 0 {
		for range n {
			id, at, err := submit(ctx)
			if err != nil {
				return nil, err
			}
			t.expect(id, at)
			ids = append(ids, id)
			if !t.wait(ctx, id, 30*time.Second) {
				return nil, fmt.Errorf("task %s not done within 30s", id)
			}
		}
	} else {
		interval := time.Duration(float64(time.Second) / perSec)
		var wg sync.WaitGroup
		errs := make(chan error, 1)
		for i := range n {
			if d := time.Until(begin.Add(time.Duration(i) * interval)); d > 0 {
				time.Sleep(d)
			}
			wg.Go(func() {
				id, at, err := submit(ctx)
				if err != nil {
					select {
					case errs <- err:
					default:
					}
					return
				}
				t.expect(id, at)
				idsMu.Lock()
				ids = append(ids, id)
				idsMu.Unlock()
			})
		}
		wg.Wait()
		select {
		case err := <-errs:
			return nil, err
		default:
		}
		for _, id := range ids {
			if !t.wait(ctx, id, 30*time.Second) {
				return nil, fmt.Errorf("task %s not done within 30s", id)
			}
		}
	}
	elapsed := time.Since(begin)
	t.mu.Lock()
	var toStart, toDone []time.Duration
	for _, id := range ids {
		tr := t.tasks[id]
		if !tr.start.IsZero() {
			toStart = append(toStart, tr.start.Sub(tr.submit))
		}
		toDone = append(toDone, tr.end.Sub(tr.submit))
	}
	t.mu.Unlock()
	mode := "serial"
	if perSec > 0 {
		mode = "rate"
	}
	r := Result{"bench": name, "mode": mode, "tasks": n, "seconds": round(elapsed.Seconds(), 3)}
	if perSec > 0 {
		r["rate_per_sec"] = perSec
	}
	percentiles(r, "start", toStart)
	percentiles(r, "done", toDone)
	return r, nil
}
