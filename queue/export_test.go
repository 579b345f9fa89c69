package queue

import "context"

// RenewNow runs one renewal pass of s, as its background renewer does every
// VisibilityTimeout/4.
func RenewNow(ctx context.Context, s *Subscription) { s.renewHeld(ctx) }

// Consumer returns s's consumer name in its group.
func Consumer(s *Subscription) string { return s.consumer }

// StopRenewer stops s's background renewer, as if it were starved of CPU
// for good: only its reader runs.
func StopRenewer(s *Subscription) {
	s.stopRenewer()
	<-s.renewerDone
}
