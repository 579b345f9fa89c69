// Package tasks holds example handlers, registered by the dtq binary and
// handy for watching retries and the dead-letter stream work:
//
//	echo         returns {"echo": payload, "attempt": n}
//	sleep        sleeps payload.seconds (default 1), honouring cancellation
//	flaky        fails payload.fail_times times (default 2), then succeeds
//	always_fail  always fails (payload.permanent: straight to DEAD)
package tasks

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/dtq-dev/dtq"
)

// handlers maps each example task type to its handler.
var handlers = map[string]dtq.HandlerFunc{
	"echo":        Echo,
	"sleep":       Sleep,
	"flaky":       Flaky,
	"always_fail": AlwaysFail,
}

// Register registers every example handler on w.
func Register(w *dtq.Worker) {
	for typ, h := range handlers {
		w.Handle(typ, h)
	}
}

// Types returns the example task types, sorted.
func Types() []string {
	return slices.Sorted(maps.Keys(handlers))
}

// Echo returns its payload and attempt.
func Echo(_ context.Context, t *dtq.Task) (any, error) {
	return map[string]any{"echo": t.Payload, "attempt": t.Attempt}, nil
}

// Sleep sleeps payload.seconds (default 1, at most an hour) unless its
// context ends first.
func Sleep(ctx context.Context, t *dtq.Task) (any, error) {
	var p struct {
		Seconds *float64 `json:"seconds"`
	}
	if err := decode(t, &p); err != nil {
		return nil, err
	}
	secs := 1.0
	if p.Seconds != nil {
		secs = *p.Seconds
	}
	if secs < 0 || secs > 3600 {
		return nil, dtq.Permanent(fmt.Errorf("seconds must be 0-3600, got %v", secs))
	}
	timer := time.NewTimer(time.Duration(secs * float64(time.Second)))
	defer timer.Stop()
	select {
	case <-timer.C:
		return map[string]any{"slept_seconds": secs}, nil
	case <-ctx.Done():
		return nil, context.Cause(ctx)
	}
}

// Flaky fails its first payload.fail_times attempts (default 2).
func Flaky(_ context.Context, t *dtq.Task) (any, error) {
	var p struct {
		FailTimes *int `json:"fail_times"`
	}
	if err := decode(t, &p); err != nil {
		return nil, err
	}
	n := 2
	if p.FailTimes != nil {
		n = *p.FailTimes
	}
	if t.Attempt <= n {
		return nil, dtq.Retryable(fmt.Errorf("flaky: failing attempt %d of the first %d", t.Attempt, n))
	}
	return map[string]any{"succeeded_on_attempt": t.Attempt}, nil
}

// AlwaysFail fails every attempt; with payload.permanent the failure is
// permanent.
func AlwaysFail(_ context.Context, t *dtq.Task) (any, error) {
	var p struct {
		Permanent bool `json:"permanent"`
	}
	if err := decode(t, &p); err != nil {
		return nil, err
	}
	err := errors.New("always_fail: this task always fails")
	if p.Permanent {
		return nil, dtq.Permanent(err)
	}
	return nil, err
}

// decode reads the payload into v; an absent payload (null) leaves v as is.
func decode(t *dtq.Task, v any) error {
	if len(t.Payload) == 0 || string(t.Payload) == "null" {
		return nil
	}
	if err := json.Unmarshal(t.Payload, v); err != nil {
		return dtq.Permanent(fmt.Errorf("payload: %w", err))
	}
	return nil
}
