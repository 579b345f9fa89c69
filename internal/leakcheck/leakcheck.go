// Package leakcheck finds goroutines of dtq left running when a package's
// tests end: a scheduler, worker loop or subscription that nothing stopped.
// TestMain calls Check after the tests.
package leakcheck

import (
	"fmt"
	"os"
	"runtime"
	"strings"
	"time"
)

// module is the prefix of this module's functions in a stack trace.
const module = "github.com/dtq-dev/dtq"

// Check waits up to wait for every goroutine running a function of this
// module (other than the checker and the test harness) to end, and returns
// an error listing the stacks of those still running then.
func Check(wait time.Duration) error {
	deadline := time.Now().Add(wait)
	for {
		left := ours()
		if len(left) == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("leakcheck: %d goroutines of dtq still running %v after the tests:\n\n%s",
				len(left), wait, strings.Join(left, "\n\n"))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// ours returns the stacks of the goroutines running a function of this
// module, but for this one.
func ours() []string {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	var out []string
	for _, g := range strings.Split(string(buf), "\n\n") {
		if runsOurs(g) {
			out = append(out, g)
		}
	}
	return out
}

// runsOurs reports whether goroutine stack g has a frame of this module
// other than the checker's and TestMain's (the goroutine that calls Check).
func runsOurs(g string) bool {
	if strings.Contains(g, module+"/internal/leakcheck.") {
		return false
	}
	for _, line := range strings.Split(g, "\n") {
		if strings.HasPrefix(line, "created by ") || strings.HasPrefix(line, "\t") {
			continue
		}
		if strings.HasPrefix(line, module) && !strings.Contains(line, ".TestMain(") {
			return true
		}
	}
	return false
}

// After is for TestMain: given the tests' exit code, it checks for leaks
// when they passed, and returns the code to exit with (1 on a leak).
//
//	os.Exit(leakcheck.After(m.Run()))
func After(code int) int {
	if code != 0 {
		return code
	}
	if err := Check(10 * time.Second); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}
