package dtq

import (
	"context"
	"strings"

	"github.com/dtq-dev/dtq/internal/store"
)

// States of a worker (WorkerInfo.State, Worker.State).
const (
	WorkerRunning  = "running"  // taking and running tasks
	WorkerQuiet    = "quiet"    // taking no new tasks; its running ones finish
	WorkerStopping = "stopping" // stopping: a stop was asked for, or Stop runs
)

// Quiet makes the worker take no new tasks from now on; the tasks it runs
// finish (and record their outcomes) as usual. It does not stop the
// worker: Stop does (a quiet worker is not resumed). Admin.QuietWorker
// asks it of a worker from anywhere. Quiet of a worker not started, or
// stopping, does nothing. It does not block.
func (w *Worker) Quiet() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.state != 1 || w.quiet {
		return
	}
	w.quiet = true
	w.log.Info("worker quiet: taking no new tasks")
	w.stopReading() // (stop waits for the readers)
	w.pokeBeat()
}

// StopRequested returns a channel closed when Admin.StopWorker asked this
// worker to stop. The worker is quiet from then on; its owner stops it as
// on a signal — w.Stop(ctx) with its grace period — which `dtq worker`
// does and then exits with code 0. A worker whose owner does not watch
// the channel stays quiet (nothing is lost: its running tasks finish).
func (w *Worker) StopRequested() <-chan struct{} { return w.stopAsked }

// State returns what the worker does: WorkerRunning, WorkerQuiet or
// WorkerStopping (a stop was asked for, or Stop runs). A worker not
// started is WorkerRunning.
func (w *Worker) State() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	switch {
	case w.state == 2 || w.stopAskedOnce:
		return WorkerStopping
	case w.quiet:
		return WorkerQuiet
	}
	return WorkerRunning
}

// control applies what an admin asked (store.ControlQuiet, ControlStop).
func (w *Worker) control(ask string) {
	switch ask {
	case store.ControlQuiet:
		w.Quiet()
	case store.ControlStop:
		w.Quiet()
		w.mu.Lock()
		first := !w.stopAskedOnce && w.state == 1
		if first {
			w.stopAskedOnce = true
			close(w.stopAsked)
		}
		w.mu.Unlock()
		if first {
			w.log.Info("worker stop requested")
			w.pokeBeat()
		}
	}
}

// pokeBeat makes the heartbeat write the worker's state now.
func (w *Worker) pokeBeat() {
	select {
	case w.poke <- struct{}{}:
	default:
	}
}

// cutLast cuts s around the last c.
func cutLast(s string, c byte) (before, after string, found bool) {
	i := strings.LastIndexByte(s, c)
	if i < 0 {
		return s, "", false
	}
	return s[:i], s[i+1:], true
}

// QuietWorker asks live Go worker id (WorkerInfo.ID) to take no new tasks:
// it finishes its running ones and stays quiet until stopped (Quiet). The
// worker hears it at once (a published message) or at its next heartbeat,
// within 5 s. It returns ErrWorkerNotFound for no live worker of that id,
// ErrLeaseHolder for an HTTP lease holder, else what the worker is asked
// now: "quiet", or "stop" when a stop was asked before (a quiet never
// undoes it). It is audited (worker-quiet).
func (a *Admin) QuietWorker(ctx context.Context, id string) (string, error) {
	return a.controlWorker(ctx, id, store.ControlQuiet, auditWorkerQuiet)
}

// StopWorker asks live Go worker id to stop: it goes quiet at once and its
// owner stops it as on SIGTERM (Worker.StopRequested) — running tasks get
// the owner's grace period (`dtq worker`: --shutdown-timeout) to finish,
// the rest are handed back and retried —, then the process of `dtq worker`
// exits with code 0. Errors and audit (worker-stop) as QuietWorker's.
func (a *Admin) StopWorker(ctx context.Context, id string) (string, error) {
	return a.controlWorker(ctx, id, store.ControlStop, auditWorkerStop)
}

func (a *Admin) controlWorker(ctx context.Context, id, ask string, action auditAction) (string, error) {
	if id == "" || len(id) > 256 || strings.ContainsAny(id, " \n") {
		return "", invalid("worker", "must be a worker's id: 1-256 bytes without spaces (got %q)", truncate(id, 80))
	}
	n, recorded, err := a.store.ControlWorker(ctx, id, ask)
	if err != nil {
		return "", err
	}
	switch n {
	case store.ControlNoWorker:
		return "", ErrWorkerNotFound
	case store.ControlLeaseHolder:
		return "", ErrLeaseHolder
	}
	a.audit(ctx, action, "", "", id)
	return recorded, nil
}
