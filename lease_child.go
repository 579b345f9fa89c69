package dtq

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/dtq-dev/dtq/internal/store"
)

// ChildLease is Child for lease token's execution: it submits the child
// of step name (taskType, payload and opts as Child's) once per task, and
// answers its end once it has ended (LeaseWait.Child) — else the lease
// ends with the task suspended until its next check of the child. Errors
// as SleepLease's.
func (s *LeaseServer) ChildLease(ctx context.Context, token, name, taskType string, payload json.RawMessage, opts *EnqueueOpts) (LeaseWait, error) {
	if err := checkChildName(name); err != nil {
		return LeaseWait{}, err
	}
	l, ulid, rec, had, err := s.leaseStep(ctx, token, name)
	if err != nil {
		return LeaseWait{}, err
	}
	if !had {
		id, err := s.client.enqueueChild(ctx, l.id, l.queue, name, taskType, payload, opts)
		if err != nil {
			return LeaseWait{}, err
		}
		if rec.Result, _, err = s.RecordLeaseStep(ctx, token, name, childIDRecord(id)); err != nil {
			return LeaseWait{}, err
		}
	}
	id, err := childIDOf(name, rec.Result)
	if err != nil {
		return LeaseWait{}, err
	}
	end, had, err := s.queue(l.queue).store.StepOf(ctx, ulid, name+childResult)
	if err != nil {
		return LeaseWait{}, err
	}
	if !had {
		data, wait, err := s.client.checkChild(ctx, name, id)
		if err != nil {
			return LeaseWait{}, err
		}
		if data == nil {
			return s.suspendLease(ctx, l, ulid, &suspension{kind: store.WaitChild, name: name, until: time.Now().Add(wait)})
		}
		if end.Result, _, err = s.RecordLeaseStep(ctx, token, name+childResult, data); err != nil {
			return LeaseWait{}, err
		}
	}
	result, err := childAnswer(name, id, end.Result)
	var ce *ChildError
	switch {
	case errors.As(err, &ce):
		return LeaseWait{Child: &ChildEnd{ID: id, Status: ce.Status, Error: ce.Err}}, nil
	case err != nil:
		return LeaseWait{}, err
	}
	return LeaseWait{Child: &ChildEnd{ID: id, Status: StatusSucceeded, Result: result}}, nil
}
