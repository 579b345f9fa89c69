package main

import (
	"io"

	"github.com/spf13/cobra"
)

// newServeCmd builds `dtq serve`: the API, workers running the example
// handlers, and metrics, in one process on one port.
func newServeCmd(out, errOut io.Writer) *cobra.Command {
	return newProcessCmd(out, errOut, role{name: "serve", api: true, worker: true},
		"Run the API, workers and metrics in one process",
		`Run the HTTP API, workers (running the example handlers: echo, sleep, flaky,
always_fail), WebSocket events and Prometheus metrics in one process on one port.

Without --redis it runs on the embedded in-memory backend: for trying dtq only,
nothing is kept after exit. Every flag can also be set by the DTQ_* environment
variable named in its help; docs/deployment.md lists them all.`,
		":8000")
}

// newAPICmd builds `dtq api`: the API and metrics, without workers.
func newAPICmd(out, errOut io.Writer) *cobra.Command {
	return newProcessCmd(out, errOut, role{name: "api", api: true},
		"Run the HTTP API and metrics, without workers (needs --redis)",
		`Run the HTTP API, WebSocket events and Prometheus metrics, without workers.
Any number of api and worker processes share work through one Redis (--redis).`,
		":8000")
}

// newWorkerCmd builds `dtq worker`: workers, with health and metrics.
func newWorkerCmd(out, errOut io.Writer) *cobra.Command {
	return newProcessCmd(out, errOut, role{name: "worker", worker: true},
		"Run workers for the example handlers (needs --redis)",
		`Run workers for the example handlers (echo, sleep, flaky, always_fail), with
/health, /ready and /metrics on --addr. On SIGTERM or SIGINT a worker stops
taking tasks, lets running ones finish within --shutdown-timeout, and hands the
rest back to the queue.`,
		":8001")
}
