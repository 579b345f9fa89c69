package dtq

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/dtq-dev/dtq/internal/store"
	"github.com/dtq-dev/dtq/internal/taskid"
)

// Signal delivers payload (JSON-encodable; nil is null) as signal name to
// task id, for the task's WaitFor of that name: a task waiting for it is
// due at once; one not waiting yet (QUEUED, RUNNING, SCHEDULED for another
// reason) keeps it for its wait. It is recorded once, as the step record
// of name: a second signal of that name, or one after the wait timed out,
// is ErrSignalDelivered; a finished task's is ErrTaskFinished; an unknown
// task's ErrNotFound. name is 1-MaxStepName bytes of UTF-8, the payload at
// most MaxStepResult bytes as JSON.
func (c *Client) Signal(ctx context.Context, id, name string, payload any) error {
	data, err := json.Marshal(payload)
	if err != nil {
		return invalid("payload", "cannot be encoded as JSON: %v", err)
	}
	if err := checkStep(name, data); err != nil {
		return err
	}
	queue, _, err := taskid.Parse(id)
	if err != nil {
		return ErrNotFound
	}
	code, status, err := c.store.Queue(queue).Signal(ctx, c.durability(), id, name, data)
	var nre *store.NotReplicatedError
	if errors.As(err, &nre) {
		return fmt.Errorf("%w: %v", ErrNotReplicated, err)
	}
	if err != nil {
		c.redisError("signal", err)
		return err
	}
	switch code {
	case store.SignalRecorded:
		return nil
	case store.SignalHad:
		return fmt.Errorf("%w (task %s, signal %q)", ErrSignalDelivered, id, name)
	case store.SignalFinished:
		return fmt.Errorf("%w: %s is %s; it takes no signal", ErrTaskFinished, id, status)
	}
	return ErrNotFound
}
