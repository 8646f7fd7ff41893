//go:build !unix

package cli

import (
	"log/slog"

	"github.com/artisan-go/artisan-go/worker"
)

// pauseSignals does nothing where there is no SIGUSR2 or SIGCONT: queue:pause and queue:resume,
// which the worker reads from the cache store, pause and resume it there.
func pauseSignals(*worker.Worker) func() { return func() {} }

// stopSignals does nothing here: Main's context takes the stop signal.
func stopSignals(*worker.Worker, *slog.Logger) func() { return func() {} }
