package queue

import "github.com/dtq-dev/dtq/internal/delivery"

// transient reports whether retrying is expected to fix err (see
// delivery.Transient).
func transient(err error) bool { return delivery.Transient(err) }

// notSent reports whether err proves the command never reached Redis (see
// delivery.NotSent).
func notSent(err error) bool { return delivery.NotSent(err) }
