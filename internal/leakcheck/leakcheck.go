// Package leakcheck fails a test binary whose tests leave goroutines running. Every package's TestMain
// calls Main, so a worker, queue or connection that outlives its test (an unstopped renewer, a runner
// waiting for a job that never comes, a pool left open) fails the package instead of going unseen.
package leakcheck

import (
	"fmt"
	"os"
	"testing"

	"go.uber.org/goleak"
)

// Main runs the package's tests and then fails if goroutines other than the runtime's are left. It
// waits a little for goroutines that are on their way out, as a closed pool's are. The tests, and the
// processes they start, get a temporary directory of their own (TMPDIR), removed afterwards: what they
// leave there goes with it, the lock files of the claim bounds that workers share on a host among it.
func Main(m *testing.M) {
	dir, err := os.MkdirTemp("", "artisan-go-test-")
	if err == nil {
		err = os.Setenv("TMPDIR", dir)
	}
	code := Run(m)
	if err == nil {
		_ = os.RemoveAll(dir)
	}
	os.Exit(code)
}

// Run is Main for a TestMain with work of its own after the tests: it runs them and returns the exit
// code, which is 1 when they passed but left goroutines running.
func Run(m *testing.M) int {
	code := m.Run()
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintf(os.Stderr, "leakcheck: goroutines left running after the tests: %v\n", err)
			return 1
		}
	}
	return code
}
