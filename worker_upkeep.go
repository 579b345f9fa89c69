package dtq

import (
	"context"
	"os"
	"slices"
	"time"

	"github.com/dtq-dev/dtq/internal/backoff"
	"github.com/dtq-dev/dtq/internal/claim"
	"github.com/dtq-dev/dtq/internal/store"
	"github.com/dtq-dev/dtq/internal/version"
)

// heartbeatEvery is how often a worker refreshes its registry entry, which
// expires after three missed beats.
const heartbeatEvery = 5 * time.Second

// renew keeps the worker's running tasks claimed, every VisibilityTimeout/4,
// and cancels the handlers of tasks it lost or that were cancelled.
func (w *Worker) renew(ctx context.Context) {
	t := time.NewTicker(w.cfg.VisibilityTimeout / 4)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		w.renewOnce(ctx)
	}
}

func (w *Worker) renewOnce(ctx context.Context) {
	for _, wq := range w.queues {
		wq.reader.RenewLeases(ctx)
	}
	byQueue := map[*workerQueue][]*execution{}
	w.mu.Lock()
	for _, ex := range w.running {
		byQueue[ex.queue] = append(byQueue[ex.queue], ex)
	}
	w.mu.Unlock()
	for wq, exs := range byQueue {
		if wq.reader.Limits.Scoped() {
			var names []string
			for _, ex := range exs {
				names = append(names, claim.ScopeLeases(ex.task.ID, ex.task.run, ex.task.leased)...)
			}
			wq.reader.RenewScopes(ctx, names)
		}
		for chunk := range slices.Chunk(exs, 256) {
			items := make([]store.RenewItem, len(chunk))
			for i, ex := range chunk {
				items[i] = store.RenewItem{TaskID: ex.task.ID, Band: ex.task.band, EntryID: ex.task.entry, Run: ex.task.run,
					Started: ex.task.started}
			}
			cctx, cancel := context.WithTimeout(ctx, w.cfg.VisibilityTimeout/2)
			res, err := wq.q.store.Renew(cctx, w.cfg.ID, items)
			cancel()
			if err != nil {
				if ctx.Err() == nil {
					w.c.redisError("renew", err)
					w.log.Warn("renewing running tasks failed; retrying next tick", "queue", wq.q.name, "error", err)
				}
				continue
			}
			for i, ex := range chunk {
				switch res[i] {
				case store.Lost:
					ex.cancel(ErrRunLost)
				case store.Cancelled:
					ex.cancel(ErrCancelled)
				}
			}
		}
	}
}

// listenCancels cancels the handler of a running task as soon as a
// cancellation is published for it (renewal catches any that are missed).
func (w *Worker) listenCancels(ctx context.Context) {
	chans := make([]string, len(w.queues), len(w.queues)+1)
	byChan := map[string]*workerQueue{}
	for i, q := range w.queues {
		chans[i] = q.q.store.Keys().Cancels()
		byChan[chans[i]] = q
	}
	controls := store.WorkerControlChannel(w.c.cfg.Namespace)
	chans = append(chans, controls)
	var retry backoff.Backoff
	for ctx.Err() == nil {
		// A dedicated connection: the subscription never shares a
		// connection with commands.
		err := w.c.store.Subscribe(ctx, chans, func(channel, taskID string) {
			if channel == controls { // "<worker id> quiet|stop"
				if id, ask, ok := cutLast(taskID, ' '); ok && id == w.cfg.ID {
					w.control(ask)
				}
				return
			}
			if taskID == store.LimitsChanged { // a limit was set: read it now, not at the next beat
				if wq := byChan[channel]; wq != nil {
					go func() {
						if err := wq.reader.Limits.Read(ctx); err != nil && ctx.Err() == nil {
							w.c.redisError("subscribe", err)
						}
					}()
				}
				return
			}
			w.mu.Lock()
			ex := w.running[taskID]
			w.mu.Unlock()
			if ex != nil {
				ex.cancel(ErrCancelled)
			}
		})
		if ctx.Err() != nil {
			return
		}
		w.c.redisError("subscribe", err)
		w.log.Warn("cancellation listener lost its subscription; retrying", "error", err)
		if retry.Sleep(ctx) != nil {
			return
		}
	}
}

// heartbeat keeps the worker's registry entry alive, and beats at once
// when its state changes (poke).
func (w *Worker) heartbeat(ctx context.Context) {
	t := time.NewTicker(heartbeatEvery)
	defer t.Stop()
	for {
		w.beat(ctx)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-w.poke:
		}
	}
}

func (w *Worker) beat(ctx context.Context) {
	// A limit set or removed since reaches the readers within a beat.
	for _, wq := range w.queues {
		if err := wq.reader.Limits.Read(ctx); err != nil && ctx.Err() == nil {
			w.c.redisError("heartbeat", err)
		}
	}
	host, _ := os.Hostname()
	names := make([]string, len(w.queues))
	for i, q := range w.queues {
		names[i] = q.q.name
	}
	rec := store.WorkerRecord{ID: w.cfg.ID, Host: host, PID: os.Getpid(), Queues: names, Concurrency: w.cfg.Concurrency,
		Busy: w.runningCount(), Started: w.started.UnixMilli(), Kind: WorkerKindGo, Library: goLibrary, State: w.State()}
	control, err := w.c.store.Heartbeat(ctx, rec, 3*heartbeatEvery)
	if err != nil && ctx.Err() == nil {
		w.c.redisError("heartbeat", err)
		w.log.Warn("worker heartbeat failed", "error", err)
	}
	if control != "" {
		w.control(control) // (a missed control message)
	}
}

// deregister removes the worker from the registry.
func (w *Worker) deregister(ctx context.Context) {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	if err := w.c.store.Deregister(ctx, w.cfg.ID); err != nil {
		w.log.Warn("leaving the worker registry failed: the worker is listed until its heartbeat expires", "error", err)
	}
}

// goLibrary is what a Go worker says it runs on (WorkerInfo.Library).
var goLibrary = "dtq-go/" + version.String()
