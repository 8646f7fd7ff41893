package cli

import (
	"os"
	"testing"

	"github.com/artisan-go/artisan-go/internal/leakcheck"
)

// TestMain runs the tests with no --memory limit by default: the workers they run share one test
// binary, whose memory is every parallel test's, not one worker's.
func TestMain(m *testing.M) {
	os.Setenv("ARTISAN_GO_WORKER_MEMORY_MB", "0")
	leakcheck.Main(m)
}
