package dtq

import (
	"context"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/dtq-dev/dtq/internal/backoff"
	"github.com/dtq-dev/dtq/internal/keys"
	"github.com/dtq-dev/dtq/internal/taskid"
	"github.com/dtq-dev/dtq/internal/taskscript"
	"github.com/redis/rueidis"
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
	byQueue := map[*workerQueue][]*execution{}
	w.mu.Lock()
	for _, ex := range w.running {
		byQueue[ex.queue] = append(byQueue[ex.queue], ex)
	}
	w.mu.Unlock()
	for wq, exs := range byQueue {
		for chunk := range slices.Chunk(exs, 256) {
			items := make([]taskscript.RenewItem, len(chunk))
			for i, ex := range chunk {
				_, ulid, _ := taskid.Parse(ex.task.ID)
				items[i] = taskscript.RenewItem{ULID: ulid, Band: ex.task.band, EntryID: ex.task.entry, Run: ex.task.run}
			}
			cctx, cancel := context.WithTimeout(ctx, w.cfg.VisibilityTimeout/2)
			res, err := taskscript.Renew(cctx, w.c.redis, wq.q.keys, w.group, w.cfg.ID, items)
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
				case taskscript.Lost:
					ex.cancel(ErrLost)
				case taskscript.Cancelled:
					ex.cancel(ErrCancelled)
				}
			}
		}
	}
}

// listenCancels cancels the handler of a running task as soon as a
// cancellation is published for it (renewal catches any that are missed).
func (w *Worker) listenCancels(ctx context.Context) {
	chans := make([]string, len(w.queues))
	for i, q := range w.queues {
		chans[i] = q.q.keys.Cancels()
	}
	c := w.c.redis
	var retry backoff.Backoff
	for ctx.Err() == nil {
		// A dedicated connection: the subscription never shares a
		// connection with commands.
		err := c.Dedicated(func(dc rueidis.DedicatedClient) error {
			return dc.Receive(ctx, dc.B().Subscribe().Channel(chans...).Build(), func(m rueidis.PubSubMessage) {
				w.mu.Lock()
				ex := w.running[m.Message]
				w.mu.Unlock()
				if ex != nil {
					ex.cancel(ErrCancelled)
				}
			})
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

// heartbeat keeps the worker's registry entry alive.
func (w *Worker) heartbeat(ctx context.Context) {
	t := time.NewTicker(heartbeatEvery)
	defer t.Stop()
	for {
		w.beat(ctx)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

func (w *Worker) beat(ctx context.Context) {
	c, ns := w.c.redis, w.c.cfg.Namespace
	host, _ := os.Hostname()
	names := make([]string, len(w.queues))
	for i, q := range w.queues {
		names[i] = q.q.name
	}
	ttl := 3 * heartbeatEvery
	expiry := time.Now().Add(ttl).UnixMilli()
	key := keys.Worker(ns, w.cfg.ID)
	cmds := rueidis.Commands{
		c.B().Hset().Key(key).FieldValue().
			FieldValue("id", w.cfg.ID).FieldValue("host", host).FieldValue("pid", strconv.Itoa(os.Getpid())).
			FieldValue("queues", strings.Join(names, ",")).FieldValue("concurrency", strconv.Itoa(w.cfg.Concurrency)).
			FieldValue("busy", strconv.Itoa(w.runningCount())).
			FieldValue("started", strconv.FormatInt(w.started.UnixMilli(), 10)).
			FieldValue("heartbeat", strconv.FormatInt(time.Now().UnixMilli(), 10)).Build(),
		c.B().Pexpire().Key(key).Milliseconds(ttl.Milliseconds()).Build(),
		c.B().Zadd().Key(keys.Workers(ns)).ScoreMember().ScoreMember(float64(expiry), w.cfg.ID).Build(),
		c.B().Zremrangebyscore().Key(keys.Workers(ns)).Min("-inf").Max(strconv.FormatInt(time.Now().UnixMilli(), 10)).Build(),
	}
	for _, r := range c.DoMulti(ctx, cmds...) {
		if err := r.Error(); err != nil && ctx.Err() == nil {
			w.c.redisError("heartbeat", err)
			w.log.Warn("worker heartbeat failed", "error", err)
			return
		}
	}
}

// deregister removes the worker from the registry.
func (w *Worker) deregister(ctx context.Context) {
	c, ns := w.c.redis, w.c.cfg.Namespace
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	c.DoMulti(ctx,
		c.B().Del().Key(keys.Worker(ns, w.cfg.ID)).Build(),
		c.B().Zrem().Key(keys.Workers(ns)).Member(w.cfg.ID).Build())
}
