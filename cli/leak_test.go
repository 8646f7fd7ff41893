package cli

import (
	"os"
	"testing"

	"github.com/artisan-go/artisan-go/internal/leakcheck"
)

// TestMain runs the tests with no --memory limit by default: the workers they run share one test
// binary, whose memory is every parallel test's, not one worker's. Their --sleep is a tenth of a
// second, so that a worker stopping on an empty queue does not wait Laravel's three seconds first.
func TestMain(m *testing.M) {
	os.Setenv("ARTISAN_GO_WORKER_MEMORY_MB", "0")
	os.Setenv("ARTISAN_GO_WORKER_SLEEP", "0.1")
	os.Setenv("COLUMNS", "80") // the width PHP's console has off a terminal, which the outputs compared assume
	leakcheck.Main(m)
}
