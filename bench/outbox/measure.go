package main

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dtq-dev/dtq"
	"github.com/dtq-dev/dtq/outbox"
	"github.com/jackc/pgx/v5/pgxpool"
)

const benchQueue = "bench"

// throughputRow is one throughput run.
type throughputRow struct {
	batch   int
	rows    int
	elapsed time.Duration
}

// throughput commits rows, then starts a relay with batch size batch and
// times it until the table is empty.
func (b *backends) throughput(ctx context.Context, rows, batch int) (throughputRow, error) {
	url, pool, err := b.database(ctx)
	if err != nil {
		return throughputRow{}, err
	}
	defer pool.Close()
	if err := fill(ctx, pool, rows); err != nil {
		return throughputRow{}, err
	}
	client, err := b.client(nil)
	if err != nil {
		return throughputRow{}, err
	}
	relay, err := outbox.NewRelay(client, url, &outbox.RelayConfig{BatchSize: batch})
	if err != nil {
		return throughputRow{}, err
	}
	start := time.Now()
	if err := relay.Start(ctx); err != nil {
		return throughputRow{}, err
	}
	defer func() { _ = relay.Stop(context.WithoutCancel(ctx)) }()
	if err := waitEmpty(ctx, pool, 5*time.Minute); err != nil {
		return throughputRow{}, err
	}
	return throughputRow{batch: batch, rows: rows, elapsed: time.Since(start)}, nil
}

// fill commits rows rows, 1,000 per transaction, from 4 connections.
func fill(ctx context.Context, pool *pgxpool.Pool, rows int) error {
	var next atomic.Int64
	errs := make(chan error, 4)
	for range 4 {
		go func() {
			for {
				from := int(next.Add(1000)) - 1000
				if from >= rows {
					errs <- nil
					return
				}
				tx, err := pool.Begin(ctx)
				if err != nil {
					errs <- err
					return
				}
				for n := from; n < min(from+1000, rows); n++ {
					if _, err := outbox.Enqueue(ctx, tx, "bench", map[string]int{"n": n}, &dtq.EnqueueOpts{Queue: benchQueue}); err != nil {
						_ = tx.Rollback(ctx)
						errs <- err
						return
					}
				}
				if err := tx.Commit(ctx); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	for range 4 {
		if err := <-errs; err != nil {
			return err
		}
	}
	return nil
}

// lagResult is the lag run: commit-to-task times of every row.
type lagResult struct {
	rows     int
	elapsed  time.Duration // of the commits
	lags     []time.Duration
	negative int // submits noted before their commit returned (counted as 0)
}

// lag commits one row per transaction at rate rows/s for d, from 8
// connections, while a relay runs, and returns each row's time from its
// commit returning to its task's submit returning in the relay.
func (b *backends) lag(ctx context.Context, rate int, d time.Duration) (lagResult, error) {
	url, pool, err := b.database(ctx)
	if err != nil {
		return lagResult{}, err
	}
	defer pool.Close()
	obs := &submitTimes{at: map[string]time.Time{}}
	client, err := b.client(obs)
	if err != nil {
		return lagResult{}, err
	}
	relay, err := outbox.NewRelay(client, url, nil)
	if err != nil {
		return lagResult{}, err
	}
	if err := relay.Start(ctx); err != nil {
		return lagResult{}, err
	}
	defer func() { _ = relay.Stop(context.WithoutCancel(ctx)) }()

	total := int(int64(rate) * int64(d) / int64(time.Second))
	committed := make([]time.Time, total)
	var next atomic.Int64
	var wg sync.WaitGroup
	var firstErr atomic.Pointer[error]
	start := time.Now()
	for range 8 {
		wg.Go(func() {
			for {
				n := int(next.Add(1)) - 1
				if n >= total || ctx.Err() != nil {
					return
				}
				time.Sleep(time.Until(start.Add(time.Duration(n) * time.Second / time.Duration(rate))))
				if err := commitOne(ctx, pool, n); err != nil {
					firstErr.CompareAndSwap(nil, &err)
					return
				}
				committed[n] = time.Now()
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	if e := firstErr.Load(); e != nil {
		return lagResult{}, *e
	}
	if err := waitEmpty(ctx, pool, time.Minute); err != nil {
		return lagResult{}, err
	}
	res := lagResult{rows: total, elapsed: elapsed}
	cursor := ""
	for {
		page, err := client.List(ctx, dtq.ListOpts{Queue: benchQueue, Limit: 500, Cursor: cursor})
		if err != nil {
			return lagResult{}, err
		}
		for _, t := range page.Tasks {
			var p struct{ N int }
			if err := json.Unmarshal(t.Payload, &p); err != nil {
				return lagResult{}, err
			}
			obs.mu.Lock()
			at, ok := obs.at[t.ID]
			obs.mu.Unlock()
			if !ok {
				return lagResult{}, fmt.Errorf("task %s: no submit time", t.ID)
			}
			l := at.Sub(committed[p.N])
			if l < 0 {
				res.negative++
				l = 0
			}
			res.lags = append(res.lags, l)
		}
		if page.Next == "" {
			break
		}
		cursor = page.Next
	}
	if len(res.lags) != total {
		return lagResult{}, fmt.Errorf("%d tasks for %d rows", len(res.lags), total)
	}
	slices.Sort(res.lags)
	return res, nil
}

func commitOne(ctx context.Context, pool *pgxpool.Pool, n int) error {
	tx, err := pool.Begin(ctx)
	if err != nil {
		return err
	}
	defer func() { _ = tx.Rollback(ctx) }() // a no-op once committed
	if _, err := outbox.Enqueue(ctx, tx, "bench", map[string]int{"n": n}, &dtq.EnqueueOpts{Queue: benchQueue}); err != nil {
		return err
	}
	return tx.Commit(ctx)
}

// quantile of sorted durations.
func quantile(sorted []time.Duration, q float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	return sorted[min(len(sorted)-1, int(q*float64(len(sorted))))]
}
