// Package claim holds what the engine's two runners — the Go worker and
// the lease server for workers over HTTP — share about claiming tasks,
// in the store's types and importing nothing of the root package: the type
// rule (types.go: which claimed entries a runner gives back, and how it
// waits without spinning on them) and the scoped limits an entry falls
// under (scopes.go).
package claim
