package dtq

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"time"

	"github.com/dtq-dev/dtq/internal/keys"
	"github.com/redis/rueidis"
)

// ErrOperationInProgress is returned (marked retryable) by
// IdempotentOperation when another execution holds the same key right now.
var ErrOperationInProgress = errors.New("dtq: idempotent operation in progress elsewhere")

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
	k := keys.NewTasks(c.cfg.Namespace, tc.task.Queue).Once(hex.EncodeToString(sum[:]))
	token := "run:" + rand.Text()
	hold := max(tc.task.Timeout, time.Second)
	err := c.redis.Do(ctx, c.redis.B().Set().Key(k).Value(token).Nx().Px(hold).Build()).Error()
	if rueidis.IsRedisNil(err) {
		v, err := c.redis.Do(ctx, c.redis.B().Get().Key(k).Build()).ToString()
		if err == nil && v == "done" {
			return nil
		}
		if err != nil && !rueidis.IsRedisNil(err) {
			return err
		}
		return Retryable(ErrOperationInProgress)
	}
	if err != nil {
		return err
	}
	if ferr := fn(ctx); ferr != nil {
		releaseOnce.Exec(context.WithoutCancel(ctx), c.redis, []string{k}, []string{token})
		return ferr
	}
	return c.redis.Do(context.WithoutCancel(ctx), c.redis.B().Set().Key(k).Value("done").
		Px(c.cfg.IdempotencyWindow).Build()).Error()
}

var releaseOnce = rueidis.NewLuaScript(`
-- KEYS[1] the operation's record; ARGV[1] this execution's token.
-- Deletes the record if this execution holds it.
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0`)
