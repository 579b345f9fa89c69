// Package faults is dtq's fault-injection harness: it checks the delivery
// guarantees of docs/CONTRACT.md against real processes while workers,
// Redis and the network between them fail.
//
// Its parts:
//
//   - a Ledger of every submission (ok, failed or unknown), filled by Load,
//     which retries each submit with the same idempotency key until it gets
//     a definite answer or its deadline passes;
//   - an effect log kept outside Redis: the worker program in faults/worker
//     appends one Effect line per execution of an "effect" task, before the
//     handler returns success;
//   - Check, which compares the ledger, the effect logs and the tasks left
//     in Redis and counts what was lost, executed twice, unexpected, finished
//     twice or dead-lettered;
//   - Proxy, a TCP proxy that resets, black-holes or slows connections.
//
// The scenarios themselves are tests behind the build tag "faults"
// (make faults); the checker's and the proxy's own tests run with every
// go test. docs/failure-modes.md describes the scenarios, the invariants
// and the last run's results.
package faults
