// Package claim is the engine's one claimer: how a task is claimed and
// started, for both of the engine's runners — the Go worker and the lease
// server for workers over HTTP. It speaks the store's types and imports
// nothing of the root package; what it needs of its runner comes through
// Hooks (observe, publish, durability, register), which the root
// implements once.
//
//   - claimer.go: a Claimer per queue and runner — the scripted read with
//     the pacing of reclaim passes, the start (asked again when its answer
//     is lost), the settling of what a start answered, and claim.go's
//     started-entry → record mapping.
//   - limits.go: what a claimer knows of the queue's limits, grants and
//     give-back; scopes.go: which scoped limits an entry falls under.
//   - types.go: the type rule, one for Go and HTTP workers.
//   - reader*.go, slots.go, ahead.go: a Go worker's reader of one queue —
//     slots and credit, the cheapest read for the queue's state, claiming
//     ahead, the leases it holds under limits, lost claims found again.
//   - lease.go: the lease server's calls — one poll of a holder over its
//     queues, under the same limits, type rule and recovery.
package claim
