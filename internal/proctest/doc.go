// Package proctest runs the real dtq binary as a child process for
// black-box tests (e2e, the dashboard's browser tests): it builds the
// binary, starts `dtq serve`, `dtq api` or `dtq worker`, waits until the
// process logs "dtq is ready", and talks to it over HTTP.
//
// Only tests import it. A test package builds the binary once in TestMain
// and starts processes from its tests:
//
//	var binary string
//
//	func TestMain(m *testing.M) {
//		dir, _ := os.MkdirTemp("", "dtq-e2e-")
//		binary = filepath.Join(dir, "dtq")
//		if err := proctest.Build(binary, &proctest.BuildOpts{Race: true}); err != nil {
//			fmt.Fprintln(os.Stderr, err)
//			os.Exit(1)
//		}
//		code := redistest.Main(m)
//		os.RemoveAll(dir)
//		os.Exit(code)
//	}
//
//	func TestSubmit(t *testing.T) {
//		p := proctest.Start(t, binary, nil, "serve", "--addr", "127.0.0.1:0")
//		id := p.Submit(`{"task_type":"echo"}`)
//		p.WaitStatus(id, "SUCCEEDED")
//		p.Must(http.StatusOK, "GET", "/health", "")
//	}
//
// # Caveats
//
//   - Children get SIGKILL when the test binary dies (Linux's parent-death
//     signal), so the package builds on Linux only, as does redistest.
//   - Every wait is bounded: 60 s for the ready line, 30 s for a process to
//     exit after SIGTERM (then SIGKILL), 30 s for a task's state. Single
//     requests use http.DefaultClient and have no timeout of their own.
//   - The panic check is textual: it looks for "panic", "goroutine " and
//     "DATA RACE" in everything the process wrote to stderr.
package proctest
