package queue

import "context"

// RenewNow runs one renewal pass of s, as its background renewer does every
// VisibilityTimeout/4.
func RenewNow(ctx context.Context, s *Subscription) { s.renewHeld(ctx) }

// Consumer returns s's consumer name in its group.
func Consumer(s *Subscription) string { return s.consumer }
