package dtq

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"time"
)

// IdempotentOperation runs fn at most once per key among the executions of
// a handler — a task redelivered after a crash, or run again after a
// failure, skips a side effect that already succeeded. It must be called
// from a handler's context (it uses the task's queue and the client's
// IdempotencyWindow, for which the key is remembered).
//
// While fn runs, the key is held (up to the task's timeout): a concurrent
// execution gets Retryable(ErrOperationInProgress). If fn fails, the key is
// released and fn may run again. If the process dies after fn succeeded but
// before the key was recorded as done, fn runs again: for effects that must
// never repeat, make fn itself idempotent.
func IdempotentOperation(ctx context.Context, key string, fn func(context.Context) error) error {
	tc, ok := ctx.Value(ctxKey{}).(*taskContext)
	if !ok {
		return errors.New("dtq: IdempotentOperation outside a handler")
	}
	c := tc.client
	sum := sha256.Sum256([]byte(key))
	lock := c.store.Queue(tc.task.Queue).OnceLock(hex.EncodeToString(sum[:]))
	token := "run:" + rand.Text()
	hold := max(tc.task.Timeout, time.Second)
	got, err := lock.Acquire(ctx, token, hold)
	if err != nil {
		return err
	}
	if !got {
		v, err := lock.Get(ctx)
		if err != nil {
			return err
		}
		if v == "done" {
			return nil
		}
		return Retryable(ErrOperationInProgress)
	}
	if ferr := fn(ctx); ferr != nil {
		_ = lock.Release(context.WithoutCancel(ctx), token) // a release that fails ends with the hold
		return ferr
	}
	return lock.Mark(context.WithoutCancel(ctx), "done", c.cfg.IdempotencyWindow)
}
