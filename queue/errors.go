package queue

import (
	"errors"
	"fmt"
)

var (
	// ErrNotOwner is returned when acting on a message this subscription no
	// longer owns: its visibility lapsed and another subscription reclaimed
	// it, or it was settled elsewhere. Nothing was changed.
	ErrNotOwner = errors.New("queue: message no longer owned by this subscription")

	// ErrFull is returned by a Put or Release with NoWait whose topic is
	// at its MaxSize. Nothing was changed.
	ErrFull = errors.New("queue: topic full")

	// ErrClosed is returned by a Subscription that has been closed.
	ErrClosed = errors.New("queue: subscription closed")

	// ErrInvalid is wrapped by every ValidationError, so that
	// errors.Is(err, ErrInvalid) tells bad input from Redis failures.
	ErrInvalid = errors.New("queue: invalid argument")
)

// ValidationError reports a bad configuration value or argument. Field names
// it, as written in Go (for example "SubscribeOpts.VisibilityTimeout").
type ValidationError struct {
	Field   string
	Problem string
}

func (e *ValidationError) Error() string {
	return fmt.Sprintf("queue: %s %s", e.Field, e.Problem)
}

// Unwrap returns ErrInvalid.
func (e *ValidationError) Unwrap() error { return ErrInvalid }

func invalid(field, format string, args ...any) error {
	return &ValidationError{Field: field, Problem: fmt.Sprintf(format, args...)}
}
